"""Runs a process paicli starts on a leash: it stops when paicli dies, however paicli dies (Ctrl-C,
SIGTERM, a crash, SIGKILL), so no server is left holding a port or a pipe. ``paicli studio`` runs
its server on it; so does every stdio MCP server (``tools/mcp/connect.py``, issue 41).

``python -I -m paicli.tools.leash PARENT_PID [--watch] [--pass-fd N]... -- COMMAND...`` (``leash_command`` builds it; a
bare command name is looked up on ``PATH``, as ``subprocess`` would)

- **Linux**: ask the kernel to send SIGTERM when the parent dies (``prctl(PR_SET_PDEATHSIG)``),
  check that the parent is still PARENT_PID (it may have died before the prctl), then ``exec``
  the command. Nothing stays in between: the process is paicli's own child, and the kernel's signal
  comes however paicli ends (strictly: when the paicli thread that started it ends; the Studio
  server is started from the main thread, MCP servers from the MCP servers' thread, which lives
  until paicli closes them). It is set here, in a process of our own, not in a ``preexec_fn``,
  which is unsafe once paicli has threads (it may: MCP, logging).
- **Elsewhere** (macOS has no PDEATHSIG), or with ``--watch``: this process stays as the server's
  parent and checks every half second that its own parent is still PARENT_PID; once paicli is
  gone it stops the server (SIGTERM, then SIGKILL). Polling ``getppid`` needs no file descriptor
  passed along and works the same on every POSIX system. SIGINT and SIGTERM sent to this process
  are passed to the server as SIGTERM (a server that gets one twice stops gracefully once), and
  this process exits when the server does, with its status.

``--pass-fd N``: a descriptor the server must inherit (bubblewrap's ``--seccomp`` pipe of a
sandboxed language server); ``exec`` keeps it anyway, the watcher passes it on to its child.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from typing import Any

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCH_SECONDS = 0.5  # how often the fallback looks at its parent
STOP_SECONDS = 10  # then the server is killed
PARENT_GONE = 3  # exit status when paicli died before the server started


def python_command(*args: str) -> list[str]:
    """A Python child paicli starts for itself: isolated (``-I``), so its ``sys.path`` holds only
    the installed packages, never the working directory, ``PYTHONPATH`` or the user site (a
    project's ``langgraph_cli/`` or ``sitecustomize.py`` must not run in it)."""
    return [sys.executable, "-I", *args]


def leash_command(command: list[str], parent: int, *, watch: bool = False, fds: tuple[int, ...] = ()) -> list[str]:
    """``command`` run on a leash to process ``parent`` (paicli's own pid); ``fds``: descriptors
    the caller passes to the leash (``pass_fds``) for ``command`` to inherit."""
    passed = [arg for fd in fds for arg in ("--pass-fd", str(fd))]
    return python_command("-m", __name__, str(parent), *(["--watch"] if watch else []), *passed,
                          "--", *command)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    options, command = argv[1:split], argv[split + 1:]
    parent, watch = int(argv[0]), "--watch" in options
    fds = tuple(int(options[i + 1]) for i, arg in enumerate(options) if arg == "--pass-fd")
    if not watch and sys.platform.startswith("linux") and _die_with_parent():
        if os.getppid() != parent:
            return PARENT_GONE
        os.execvp(command[0], command)
    return watch_parent(parent, command, fds)


def _die_with_parent() -> bool:
    """SIGTERM when the thread that started us exits (see above). Kept across exec (the
    interpreter is not setuid)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0


def watch_parent(parent: int, command: list[str], fds: tuple[int, ...] = ()) -> int:
    if os.getppid() != parent:
        return PARENT_GONE
    server = subprocess.Popen(command, pass_fds=fds)  # same process group: paicli's signals to the group reach it
    for fd in fds:  # the server's now
        os.close(fd)

    def forward(_signum: int, _frame: Any) -> None:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    while server.poll() is None:
        try:
            server.wait(timeout=WATCH_SECONDS)
        except subprocess.TimeoutExpired:
            if os.getppid() != parent:
                _stop(server)
    return server.returncode if server.returncode >= 0 else 128 - server.returncode


def _stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
