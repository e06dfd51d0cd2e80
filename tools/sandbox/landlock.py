"""Landlock scoping for a command that runs on the host's network (paicli issue 34, items 3, 8).

With the host's network a command shares the host's abstract Unix sockets (``@/tmp/.X11-unix/X0``,
many desktop and editor services): no file system view hides them. Landlock ABI 6 (Linux 6.12)
scopes them: a process restricted with ``LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`` cannot connect to
an abstract socket made outside its domain, and ``LANDLOCK_SCOPE_SIGNAL`` cannot signal outside it.
The ruleset handles no file system access, so bubblewrap (restricted with the command, before it
runs) can still mount. Two system calls through ``ctypes``: no binding covers the scope flags.
"""

from __future__ import annotations

import ctypes
import os
import platform
from functools import lru_cache

SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
CREATE_RULESET_VERSION = 1 << 0
PR_SET_NO_NEW_PRIVS = 38
_SYSCALLS = {"x86_64": (444, 446), "aarch64": (444, 446)}  # landlock_create_ruleset, landlock_restrict_self


class _Attr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


@lru_cache(maxsize=1)
def abi() -> int:
    """The kernel's Landlock ABI version, 0 without Landlock."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        return 0
    version = _libc().syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(0, int(version))


def available() -> bool:
    return abi() >= 6


def restrict_scopes() -> None:
    """Called in the child before it runs bwrap (``preexec_fn``); raises ``OSError`` on failure."""
    numbers = _SYSCALLS[platform.machine()]
    libc = _libc()
    attr = _Attr(0, 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    fd = libc.syscall(numbers[0], ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(numbers[1], fd, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)
