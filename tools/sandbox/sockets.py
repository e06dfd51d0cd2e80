"""Unix sockets that exist before a command starts (paicli issue 34, item 3).

A read-only mount does not stop ``connect()``, and no seccomp filter can see the path a
``connect()`` names (BPF reads the registers, not the memory they point at), so a sandboxed
command's view of the file system must hold no socket it did not create itself. The private
``/tmp`` and the emptied ``/run`` remove the usual places (tmux, screen, X11, PostgreSQL, docker,
the session bus); this module finds every other bound one: the kernel lists each network
namespace's Unix sockets with the path they were bound to (``/proc/<pid>/net/unix``), and the
sandbox mounts ``/dev/null`` over each path it can still see, so ``connect()`` meets a character
device and fails. Abstract sockets (``@name``) belong to a network namespace: a sandbox has its
own (``--unshare-net``, or slirp4netns's), and under host networking Landlock's
``LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`` cuts them (``paicli.tools.sandbox.landlock``).
"""

from __future__ import annotations

import os
import stat
import threading
import time


def _parse(text: str, found: set[str]) -> None:
    for line in text.splitlines()[1:]:
        parts = line.split(None, 7)
        if len(parts) == 8 and parts[7].startswith("/"):
            found.add(parts[7])


RESCAN_SECONDS = 2.0  # how long the list of network namespaces is reused (a /proc walk costs ms)
_namespaces: dict[int, str] = {}  # namespace inode -> a pid in it
_scanned = [0.0]
_lock = threading.Lock()


def _rescan(proc: str) -> None:
    found: dict[int, str] = {}
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return
    for pid in pids:
        try:
            ino = os.stat(f"{proc}/{pid}/ns/net").st_ino
        except OSError:
            continue
        found.setdefault(ino, pid)
    _namespaces.clear()
    _namespaces.update(found)
    _scanned[0] = time.monotonic()


def bound_paths(proc: str = "/proc") -> set[str]:
    """Paths of the pathname sockets bound in every network namespace this process can see: its
    own, and one process's view of each other namespace (containers, other sandboxes). The list
    of namespaces is walked again every ``RESCAN_SECONDS`` and whenever one of them went away."""
    found: set[str] = set()
    for attempt in range(2):
        with _lock:
            if attempt or time.monotonic() - _scanned[0] > RESCAN_SECONDS or not _namespaces:
                _rescan(proc)
            pids = ["self", *_namespaces.values()]
        stale = False
        for pid in pids:
            try:
                with open(f"{proc}/{pid}/net/unix", encoding="utf-8", errors="surrogateescape") as f:
                    _parse(f.read(), found)
            except OSError:
                stale = True  # that namespace's process is gone: walk /proc again
        if not stale:
            break
    return found


def visible(paths: set[str], gone: tuple[str, ...]) -> list[str]:
    """The socket files among ``paths`` that a command would still see: not under a directory the
    sandbox replaces (``gone``: the private temp dirs, ``/run``, hidden folders)."""
    kept = []
    for path in sorted(paths):
        real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        if any(p == g or p.startswith(g.rstrip("/") + "/") for g in gone for p in (path, real)):
            continue
        try:
            if stat.S_ISSOCK(os.lstat(real).st_mode) and real not in kept:
                kept.append(real)
        except OSError:
            continue
    return kept
