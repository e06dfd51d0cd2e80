"""paicli's own children (paicli issue 34, item 5): ``git``, ``bwrap``, ``slirp4netns``, ``rg``
and the rest are resolved once per process to absolute paths outside every directory a
sandboxed command can write, and they run without paicli's key or database URL.

A command that plants ``~/.cargo/bin/git`` (first on PATH where rustup is installed) must not
have paicli's next snapshot run it unsandboxed. The caches are copy-on-write inside the sandbox
(``paicli.tools.sandbox.layout``), so nothing lands there; this module is the second line: a PATH entry
that is relative, a temp dir, a toolchain cache, the project or a ``PAICLI_SANDBOX_WRITABLE``
root is skipped, whatever the sandbox mechanism.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from typing import Iterable, Mapping

from paicli.tools.sandbox.secrets import command_environment

_lock = threading.Lock()
_found: dict[str, str | None] = {}
_unsafe: set[str] = set()  # real paths of roots a command can write: PATH entries under them are skipped
UNSAFE_HOME = (".cache", ".npm", ".yarn", ".pnpm-store", ".cargo", ".rustup", "go", ".gradle", ".m2", ".gem",
               ".bun", ".deno", ".nvm", ".local/share/pnpm", "Library/Caches")
UNSAFE_FIXED = ("/tmp", "/var/tmp", "/dev/shm")


def writable_roots(paths: Iterable[str]) -> None:
    """Roots a command may write (the project, ``PAICLI_SANDBOX_WRITABLE``, the sandbox's own
    data): programs are never taken from under them. Called before a command runs; a program
    resolved earlier from such a root is resolved again."""
    added = {os.path.realpath(p) for p in paths if p}
    with _lock:
        new = added - _unsafe
        if not new:
            return
        _unsafe.update(new)
        for name, path in list(_found.items()):
            if path and _under(path, new):
                del _found[name]


def _defaults() -> set[str]:
    home = os.environ.get("HOME") or os.path.expanduser("~")
    roots = {os.path.realpath(p) for p in UNSAFE_FIXED}
    if os.environ.get("TMPDIR"):
        roots.add(os.path.realpath(os.environ["TMPDIR"]))
    if home and home != "/":
        roots |= {os.path.realpath(os.path.join(home, c)) for c in UNSAFE_HOME}
    return roots


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def safe_path(path: str | None = None) -> str:
    """PATH without the entries a command could have written to."""
    roots = _defaults() | _unsafe
    kept = []
    for entry in (os.environ.get("PATH", os.defpath) if path is None else path).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        if _under(os.path.realpath(entry), roots) or entry in kept:
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def program(name: str, *extra: str) -> str | None:
    """The absolute path of ``name`` on the safe PATH (``extra``: directories tried first, such as
    the interpreter's own bin for the ripgrep wheel), resolved once; None when it is nowhere safe."""
    key = "\0".join((name, *extra))
    with _lock:
        if key in _found:
            return _found[key]
    defaults = _defaults()
    roots = defaults | _unsafe
    # paicli's own install (the ripgrep wheel's bin) may sit in a temp dir (a CI clone under /tmp):
    # there a sandboxed command cannot write it (bubblewrap's /tmp is private, the install shown
    # read-only), so only the roots a command really writes rule it out.
    own_roots = roots
    if sys.platform.startswith("linux"):
        temps = [os.path.realpath(p) for p in UNSAFE_FIXED]
        own_roots = _unsafe | {r for r in defaults if not _under(r, temps)}
    prefix = [os.path.realpath(sys.prefix)]
    found = None
    for directory in extra:
        candidate = os.path.join(directory, name)
        real = os.path.realpath(candidate)
        bar = own_roots if _under(real, prefix) else roots
        if os.path.isabs(candidate) and os.access(candidate, os.X_OK) and not _under(real, bar):
            found = candidate
            break
    if found is None:
        found = shutil.which(name, path=safe_path())
    found = os.path.realpath(found) if found else None
    with _lock:
        _found[key] = found
    return found


def git() -> str:
    """paicli's git; ``git`` alone (failing as a missing program would) when none is safe."""
    return program("git") or "git"


def child_environment(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of a child paicli runs for itself (git, rg, a sandbox helper): no key, no
    database URL, no secret-named variable, PATH without writable entries."""
    env = command_environment(os.environ if base is None else base)
    env["PATH"] = safe_path(env.get("PATH"))
    env.update(extra)
    return env
