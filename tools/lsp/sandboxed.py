"""The one function that turns a language server's argv into the argv that runs it confined.

Built on the command sandbox's pieces (``tools/sandbox/``: the session's ``CommandSandbox`` for
the user's mode and this machine's mechanism, ``layout`` for what is writable, the mechanism's
``argv``) and nothing else of it, so it can be pointed at the sandbox's own API for long-running
processes (issue 34) by changing this function alone.

A server is confined more tightly than a command, because it runs what a repository tells it to
(pyright runs the project's ``.venv/bin/python``, tsserver loads the workspace's TypeScript and
its plugins, rust-analyzer runs build scripts, gopls runs ``go list``) and it runs for a long time:

- **the project is read-only** (a server has nothing to write there): so nothing it starts can
  plant a ``.git`` hook, a ``PAI.md`` or a ``.mcp.json``, and no sweep is needed when it ends;
- writable are the temp dirs, the toolchain caches and ``PAICLI_SANDBOX_WRITABLE``, as for a command;
- no network (``network=False`` always: no server needs it, and a hostile plugin must not call out);
- secrets unreadable: ``$PAICLI_HOME`` and the usual credential stores are empty inside, and the
  caller passes an environment without secret variables (``ToolContext.command_env``'s rule);
- a server outlives nothing: bubblewrap's ``--die-with-parent`` and pid namespace end everything
  it started when it ends.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

from tools.sandbox import bwrap, seatbelt
from tools.sandbox.command import OUTSIDE, REQUIRED_REFUSAL, SANDBOXED, CommandSandbox, Unavailable
from tools.sandbox.layout import layout, linked_git

# Credential stores under HOME (directories shown empty, files shown as /dev/null): issue 34's
# list for commands will replace this one.
SECRET_DIRS = (".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube", ".docker")
SECRET_FILES = (".netrc", ".git-credentials", ".pgpass", ".npmrc", ".pypirc")


@dataclass(frozen=True)
class Confined:
    argv: list[str]
    how: str  # tools.sandbox.command.SANDBOXED | OUTSIDE
    why_outside: str = ""  # why it is not confined (the user's PAICLI_COMMAND_SANDBOX=off, no bwrap...)


def sandboxed_argv(argv: list[str] | tuple[str, ...], root: Path, env: Mapping[str, str], sandbox: CommandSandbox,
                   *, paicli_home: Path | None = None) -> Confined:
    """``argv`` (absolute ``argv[0]``) run in the project ``root`` under ``sandbox``'s mechanism.
    Raises ``RuntimeError`` with the reference's text when the mode is ``required`` and there
    is no sandbox here."""
    why = sandbox.why_outside()
    if why is not None:
        if sandbox.settings.mode == "required" and not sandbox.settings.skipped:
            raise RuntimeError(REQUIRED_REFUSAL.format(why=why))
        return Confined(list(argv), OUTSIDE, why)
    found = sandbox.mechanism()
    if isinstance(found, Unavailable):  # why_outside said otherwise: a finder that changed its mind
        return Confined(list(argv), OUTSIDE, found.why)
    plan = layout(root, dict(env), sandbox.settings.writable)
    git = {os.path.realpath(p) for p in linked_git(str(root))}
    writable = tuple(p for p in plan.writable if not p.is_relative_to(root) and str(p) not in git)
    hidden, masked = _secrets(root, env.get("HOME") or "", paicli_home)
    plan = replace(plan, writable=writable, protected=(root,), pinned=(), missing=(),
                   hidden=plan.hidden + hidden, masked=plan.masked + masked)
    command = "exec " + shlex.join(argv)
    if found.kind == "seatbelt":
        return Confined(seatbelt.argv(plan, command, False), SANDBOXED)
    return Confined(bwrap.argv(found.path, plan, command, False), SANDBOXED)


def _secrets(root: Path, home: str, paicli_home: Path | None) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(directories, files) that exist and do not hold the project."""
    dirs = [Path(home) / d for d in SECRET_DIRS] if home else []
    dirs += [paicli_home] if paicli_home is not None else []
    files = [Path(home) / f for f in SECRET_FILES] if home else []
    hidden = tuple(Path(os.path.realpath(d)) for d in dirs if d.is_dir() and not root.is_relative_to(os.path.realpath(d)))
    return hidden, tuple(f for f in files if f.is_file() and not f.is_symlink())
