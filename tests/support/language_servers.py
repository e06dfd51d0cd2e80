"""The real language servers the LSP tests use (issue 38), found the way paicli finds them.

``.ci/run`` installs basedpyright and python-lsp-server (pip) and typescript-language-server with
TypeScript (npm, on PATH). Where one is missing a test is skipped with the reason, and fails
instead under ``CI=true``: CI must have every server its tests name.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.tools.lsp.languages import BY_KEY, Candidate, Language
from paicli.tools.lsp.options import LspOptions
from paicli.tools.lsp.resolve import Missing, ServerCommand, find_server
from paicli.tools.sandbox.command import CommandSandbox, SandboxOptions


def sandbox_in(folder: Path, **options) -> CommandSandbox:
    """The command sandbox a test's servers run in, as a session's: its data (the servers'
    private temp dirs, the caches' layers) under ``folder``, never the real ``~/.paicli/sandbox``."""
    return CommandSandbox(SandboxOptions(data=str(folder / "sandbox"), **options))


def require(language: str, server: str | None = None) -> ServerCommand:
    """The command paicli would run for ``language`` (``server``: that candidate alone)."""
    spec = BY_KEY[language]
    if server is not None:
        spec = Language(spec.key, spec.name, spec.ids, spec.markers,
                        tuple(c for c in spec.candidates if c.name.startswith(server)) or (Candidate((server,)),))
    found = find_server(spec, LspOptions())
    if isinstance(found, Missing):
        message = f"language server not installed: {found.why}"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI must install it: .ci/run)")
        pytest.skip(message)
    return found
