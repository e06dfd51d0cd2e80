"""The seccomp filter every bubblewrap sandbox loads (``bwrap --seccomp FD``; paicli issue 34).

Built once per process with libseccomp (through ``pyseccomp``, a ctypes binding with the API of
libseccomp's own Python bindings) rather than hand-assembled BPF. It allows everything except
what reaches past the sandbox's namespaces or its capability drop:

- sockets of families other than Unix, IPv4, IPv6 and netlink (``EAFNOSUPPORT``): ``AF_VSOCK``
  talks to the VM's host and no network namespace contains it; packet, Bluetooth, CAN and the rest
  have no use in a build;
- the kernel keyrings (``keyctl``, ``add_key``, ``request_key``): the session keyring is shared
  with the user's other processes and may hold their secrets;
- ``io_uring`` (its operations are not seen by seccomp), ``TIOCSTI``/``TIOCLINUX`` (typing into a
  terminal), ``bpf``, ``perf_event_open``, ``userfaultfd``, ``open_by_handle_at``, mounting, module
  and kexec calls (already refused without capabilities; refused here whatever the capabilities).

Unix sockets are not blocked: a command's own test server, ``socketpair`` and multiprocessing
need them, and BPF cannot see which path a ``connect()`` names. The file system view keeps
foreign sockets away instead (``paicli.tools.sandbox.sockets``). Where libseccomp is missing the
sandbox runs without the filter and ``/context`` says so.
"""

from __future__ import annotations

import errno
import os
import tempfile
from functools import lru_cache

ALLOWED_FAMILIES = (1, 2, 10, 16)  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
DENIED = ("keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf",
          "perf_event_open", "userfaultfd", "open_by_handle_at", "mount", "umount2", "pivot_root", "move_mount",
          "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr", "kexec_load",
          "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
          "acct", "quotactl", "lookup_dcookie", "nfsservctl", "syslog")
TIOCSTI, TIOCLINUX = 0x5412, 0x541C


def available() -> bool:
    """Whether the filter can be built here, without building it (the banner asks this)."""
    import importlib.util

    return program.cache_info().currsize > 0 and program() is not None or importlib.util.find_spec("pyseccomp") is not None


@lru_cache(maxsize=1)
def program() -> bytes | None:
    """The filter as BPF bytes for ``bwrap --seccomp``; None without libseccomp."""
    try:
        import pyseccomp as sc
    except Exception:  # not installed, or libseccomp.so.2 missing
        return None
    try:
        f = sc.SyscallFilter(sc.ALLOW)
        for family in range(0, 64):
            if family not in ALLOWED_FAMILIES:
                f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.EQ, family))
        f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.GE, 64))
        for name in DENIED:
            try:
                f.add_rule(sc.ERRNO(errno.ENOSYS if name.startswith("io_uring") else errno.EPERM), name)
            except OSError:  # a call this architecture does not have
                continue
        for request in (TIOCSTI, TIOCLINUX):
            f.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
        with tempfile.TemporaryFile() as out:
            f.export_bpf(out)
            out.seek(0)
            return out.read()
    except OSError:
        return None


def pipe_fd() -> int | None:
    """A file descriptor to hand to ``bwrap --seccomp``: a pipe holding the program, its write
    end closed (the program is a few hundred bytes, far below a pipe's buffer)."""
    data = program()
    if data is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read
