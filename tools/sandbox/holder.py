"""A session's sandbox, set up once: commands join it instead of paying bubblewrap's set-up each.

``bwrap`` itself is most of a sandboxed command's fixed cost (its three processes, the ~25 mounts,
the overlay layers, slirp4netns for a network command; ``bench/README.md``). A holder is one
``bwrap`` with exactly the view a command would get (``paicli.tools.sandbox.layout``) running a
small program that does nothing but wait (``PAYLOAD``); each command then starts inside it:

    nsenter (the holder's user, mount, IPC, UTS, network, pid and cgroup namespaces, its root
    and working directory, all as descriptors opened once) → unshare --pid --fork --kill-child
    (a pid namespace of the command's own: everything it starts ends with it, as with bwrap's)
    → setpriv --no-new-privs --inh-caps=-all --bounding-set=-all (joining the user namespace
    gave capabilities inside it; they are dropped before the command runs) → the command,

with the seccomp filter loaded in the spawned process before ``nsenter`` runs (so it covers the
whole chain: ``mount`` and the rest are refused to the command as under bwrap's ``--seccomp``).

A holder serves one layout: the mounts, the project, the network mode and (for a network holder)
the host addresses routed away. ``CommandSandbox`` computes the layout for every command as
before and starts a new holder when it differs (a protected path created, a socket appeared, a
download cache's layer filled); the old one ends when its last command has. The holder is
``--die-with-parent`` (spawned from a thread that lives as long as paicli) and ends when paicli
does, and with it every command still inside (their pid namespaces are its descendants).

What commands of one session share through a holder that separate bwraps did not: the holder's
``/proc`` (its pid namespace: a command sees the session's other running sandboxed commands,
not the host's), its ``/dev/shm`` and SysV IPC, and the offline view of the download caches
(a write there lasts until the holder is replaced instead of ending with the command; it never
reaches the real cache nor a network command's view). Nothing a command starts outlives it.
The holder's own process is not dumpable (no ``/proc/<pid>/mem`` or ptrace into it) and lives
in a pid namespace a command cannot name.
"""

from __future__ import annotations

import ctypes
import os
import queue
import select
import subprocess
import sys
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from paicli.tools.sandbox.own import child_environment, program

READY_SECONDS = 10.0
MAX_IDLE = 4  # holders kept per sandbox beyond those in use (one per project, session and network mode)
# What the holder runs: no core dumps, no ptrace (not dumpable), zombies reaped (it is the pid
# namespace's init), "ready" once the view is set up, then it waits for its stdin to close.
PAYLOAD = ("import ctypes,os,signal,sys;"
           "ctypes.CDLL(None).prctl(4,0,0,0,0);"  # PR_SET_DUMPABLE 0
           "signal.signal(signal.SIGCHLD,signal.SIG_IGN);"
           "os.write(1,b'ready\\n');sys.stdin.buffer.read()")
NAMESPACES = (("user", "--user"), ("mnt", "--mount"), ("ipc", "--ipc"), ("uts", "--uts"), ("net", "--net"),
              ("pid", "--pid"), ("cgroup", "--cgroup"))


@dataclass(frozen=True)
class Tools:
    nsenter: str
    unshare: str
    setpriv: str


@lru_cache(maxsize=1)
def find_tools() -> Tools | None:
    """util-linux's nsenter, unshare and setpriv, resolved outside every writable directory; None
    without them (then every command gets a bwrap of its own, as before)."""
    found = [program(name) or program(name, "/usr/sbin", "/sbin") for name in ("nsenter", "unshare", "setpriv")]
    return Tools(*found) if all(found) else None  # type: ignore[arg-type]


@dataclass
class Holder:
    key: tuple
    process: subprocess.Popen
    fds: dict[str, int]  # namespace name (and "root", "cwd") -> descriptor, ours
    link: object = None  # network.Link of a network holder
    users: int = 0
    retired: bool = False
    _reaping: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def alive(self) -> bool:
        return self.process.poll() is None

    def argv(self, tools: Tools, command: list[str]) -> list[str]:
        """The command line that starts ``command`` inside (its descriptors: ``pass_fds``)."""
        joins = [f"{flag}=/proc/self/fd/{self.fds[name]}" for name, flag in NAMESPACES if name in self.fds]
        return [tools.nsenter, *joins, "--preserve-credentials", f"--root=/proc/self/fd/{self.fds['root']}",
                f"--wd=/proc/self/fd/{self.fds['cwd']}",
                tools.unshare, "--pid", "--fork", "--kill-child",
                tools.setpriv, "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--", *command]

    def pass_fds(self) -> tuple[int, ...]:
        return tuple(self.fds.values())

    def enter(self) -> bool:
        with self._lock:
            if self.retired or not self.alive():
                return False
            self.users += 1
            return True

    def leave(self) -> None:
        with self._lock:
            self.users -= 1
            done = self.retired and self.users <= 0
        if done:
            self.close()

    def retire(self) -> None:
        with self._lock:
            self.retired = True
            done = self.users <= 0
        if done:
            self.close()

    def close(self) -> None:
        for fd in self.fds.values():
            _close(fd)
        self.fds = {}
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()  # the payload ends; bwrap with it
            except OSError:
                pass
        if self.link is not None:
            self.link.close()  # type: ignore[attr-defined]
            self.link = None
        if not self._reaping:
            self._reaping = True
            _reap(self.process)  # the payload ends as its stdin closes: bwrap follows at once


def _reap(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
    _gone()


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def start(key: tuple, args: list[str], fds: tuple[int, ...], info_r: int, attach: Callable[[int], object] | None,
          block_w: int | None) -> Holder:
    """Spawn the holder (``args``: bwrap's command line ending in ``PAYLOAD``; ``fds`` its
    descriptors, closed here), wait until its view is set up, open its namespaces. ``attach``
    (a network holder): joins its network namespace to the internet before it goes on.
    Raises ``OSError`` saying why it could not."""
    process = _spawn(args, fds)
    for fd in fds:
        _close(fd)
    holder = Holder(key, process, {})
    try:
        from paicli.tools.sandbox.network import read_info

        pid = read_info(info_r)
        if attach is not None and block_w is not None:
            holder.link = attach(pid)
            os.write(block_w, b"1")
        ready, _, _ = select.select([process.stdout], [], [], READY_SECONDS)
        if not ready or process.stdout.readline() != b"ready\n":  # type: ignore[union-attr]
            raise OSError(f"沙箱未就绪{f'（exit {process.poll()}）' if process.poll() is not None else ''}")
        own = {name: os.readlink(f"/proc/self/ns/{name}") for name, _ in NAMESPACES}
        for name, _ in NAMESPACES:
            if name == "cgroup" and os.readlink(f"/proc/{pid}/ns/{name}") == own[name]:
                continue  # no cgroup namespace of its own here (--unshare-cgroup-try): nothing to join
            holder.fds[name] = os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
        holder.fds["root"] = os.open(f"/proc/{pid}/root", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        holder.fds["cwd"] = os.open(f"/proc/{pid}/cwd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        if not holder.alive():
            raise OSError("沙箱已退出")
    except BaseException:
        holder.close()
        raise
    finally:
        _close(info_r)
        if block_w is not None:
            _close(block_w)
    return holder


# Run once through a new holder's chain: no capability, no_new_privs, the filter on, a pid namespace
# of its own. Where joining fails (an older kernel or util-linux, say), commands get a bwrap each.
CHECK_SCRIPT = ("grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status && grep -q '^NoNewPrivs:[[:space:]]*1' "
                "/proc/self/status && [ $$ = 1 ]{seccomp}")


def check(holder: Holder, tools: Tools, program_bytes: bytes | None) -> None:
    """Raises ``OSError`` unless a command started in ``holder`` has what a bwrap's has."""
    script = CHECK_SCRIPT.format(seccomp=" && grep -q '^Seccomp:[[:space:]]*2' /proc/self/status" if program_bytes else "")
    try:
        done = subprocess.run(holder.argv(tools, ["/bin/sh", "-c", script]), pass_fds=holder.pass_fds(),
                              preexec_fn=seccomp_loader(program_bytes) if program_bytes else None,
                              env=child_environment(), stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=READY_SECONDS)
    except (subprocess.SubprocessError, OSError) as exc:
        raise OSError(f"沙箱检查失败: {exc}") from None
    if done.returncode != 0:
        raise OSError(f"沙箱检查失败（exit {done.returncode}）: {done.stderr.decode(errors='replace').strip()[:200]}")


def payload() -> list[str]:
    return [sys.executable, "-I", "-S", "-c", PAYLOAD]


class _Spawner:
    """One thread spawns every holder and lives while any holder does: ``--die-with-parent`` is
    the parent *thread's* death, and a worker thread of asyncio's pool may end before the session
    does. With no holder left (the run closed its sandbox) the thread ends too."""

    def __init__(self) -> None:
        self.jobs: queue.Queue = queue.Queue()
        self.live = 0  # holders started or starting and not yet reaped (under _spawner_lock)
        self.thread = threading.Thread(target=self._serve, name="paicli-sandbox-holders", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        global _the_spawner
        while True:
            try:
                args, fds, done = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with _spawner_lock:
                    if self.live <= 0 and self.jobs.empty():
                        _the_spawner = None
                        return
                continue
            try:
                done.set_result(subprocess.Popen(args, pass_fds=fds, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                 stderr=subprocess.DEVNULL, env=child_environment(),
                                                 start_new_session=True))
            except BaseException as exc:  # handed to the caller
                done.set_exception(exc)


IDLE_SECONDS = 0.05
_spawner_lock = threading.Lock()
_the_spawner: _Spawner | None = None


def _spawn(args: list[str], fds: tuple[int, ...]) -> subprocess.Popen:
    global _the_spawner
    with _spawner_lock:
        if _the_spawner is None:
            _the_spawner = _Spawner()
        spawner = _the_spawner
        spawner.live += 1
    done: Future = Future()
    spawner.jobs.put((args, fds, done))
    try:
        return done.result(timeout=READY_SECONDS)
    except BaseException:
        _gone()
        raise


def _gone() -> None:
    with _spawner_lock:
        if _the_spawner is not None:
            _the_spawner.live -= 1


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


@lru_cache(maxsize=2)
def seccomp_loader(program_bytes: bytes) -> Callable[[], None]:
    """A ``preexec_fn`` loading the BPF program ``program_bytes`` (``paicli.tools.sandbox.seccomp``)
    into the spawned process, as ``bwrap --seccomp`` does for its command. Everything it touches
    is made here, before the fork; in the child it only calls ``prctl`` twice."""
    count = len(program_bytes) // ctypes.sizeof(_SockFilter)
    table = (_SockFilter * count).from_buffer_copy(program_bytes[:count * ctypes.sizeof(_SockFilter)])
    prog = _SockFprog(count, ctypes.cast(table, ctypes.POINTER(_SockFilter)))
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    pointer = ctypes.cast(ctypes.pointer(prog), ctypes.c_void_p)

    def load() -> None:
        keep = (table, prog)  # alive as long as the closure
        if prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0 or prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, pointer, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "seccomp")
        del keep

    return load
