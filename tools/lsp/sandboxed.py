"""The one function that turns a language server's argv into the ``Launch`` that runs it confined:
issue 34's ``CommandSandbox.wrap`` with the project read-only, or the server as it is where the
user chose no sandbox.

A server is confined more tightly than a command, because it runs what a repository tells it to
(pyright runs the project's ``.venv/bin/python``, tsserver loads the workspace's TypeScript and
its plugins, rust-analyzer runs build scripts, gopls runs ``go list``) and it runs for a long time:

- **the project is read-only** (``wrap(read_only=True)``: a server has nothing to write there), so
  nothing it starts can plant a ``.git`` hook, a ``PAI.md`` or a ``.mcp.json``, and no sweep is
  needed when it ends;
- writable are the sandbox's private temp dirs (the ``session`` names them), the toolchain caches'
  copy-on-write layers and ``PAICLI_SANDBOX_WRITABLE`` roots outside the project, as for a command;
- no network (``wrap`` gives none: no server needs it, and a hostile plugin must not call out);
- secrets unreadable: what the sandbox hides from a command (``$PAICLI_HOME``, the memory and
  audit folders, the credential stores of ``paicli.tools.sandbox.secrets``, the foreign sockets), and an
  environment filtered as a command's (``command_environment``);
- a server outlives nothing: bubblewrap's ``--die-with-parent`` and pid namespace end everything
  it started when it ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from paicli.tools.sandbox.command import OUTSIDE, REQUIRED_REFUSAL, CommandSandbox, Launch
from paicli.tools.sandbox.secrets import command_environment


def confined(argv: list[str] | tuple[str, ...], root: Path, env: Mapping[str, str], sandbox: CommandSandbox,
             *, session: str) -> tuple[Launch, str]:
    """(the ``Launch`` of ``argv`` (absolute ``argv[0]``) for the project ``root``, why it runs
    outside the sandbox or ""). Raises ``RuntimeError`` with the reference's text when the mode
    is ``required`` and there is no sandbox here: then nothing starts."""
    why = sandbox.why_outside()
    if why is not None:
        if sandbox.settings.mode == "required" and not sandbox.settings.skipped:
            raise RuntimeError(REQUIRED_REFUSAL.format(why=why))
        return Launch(list(argv), OUTSIDE, env=command_environment(env)), why
    return sandbox.wrap(list(argv), root, env, session=session, read_only=True), ""
