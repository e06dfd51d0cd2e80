"""Exact navigation (issue 38 item 4): definitions and references from a real server."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.language_servers import require, sandbox_in
from tests.unit.test_lsp_manager import FAKE, SLOW_MACHINE
from paicli.tools.lsp.manager import LanguageServers
from paicli.tools.lsp.navigate import definition, references
from paicli.tools.lsp.options import LspOptions


async def test_a_definition_by_symbol_name_from_our_own_server(tmp_path):
    (tmp_path / "m.py").write_text("def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n")
    lsp = LanguageServers(LspOptions(commands={"python": (sys.executable, FAKE, "ok")}), sandbox_in(tmp_path))
    try:
        found = await definition(lsp, str(tmp_path.resolve()), "m.py", line=4, symbol="add", timeout=SLOW_MACHINE)
        assert found is not None and found.exact and found.server == "python"
        [where] = found.locations
        assert (where.path, where.line, where.column, where.text) == ("m.py", 1, 5, "def add(a, b):")
    finally:
        await lsp.close()


async def test_references_across_files_from_basedpyright(tmp_path):
    require("python", "basedpyright")
    root = tmp_path.resolve()
    (root / "calc.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    (root / "main.py").write_text("from calc import add\n\ntotal = add(1, 2) + add(3, 4)\n")
    lsp = LanguageServers(LspOptions(), sandbox_in(tmp_path))
    try:
        there = await definition(lsp, str(root), "main.py", line=3, symbol="add", timeout=SLOW_MACHINE)
        assert there is not None and there.server == "basedpyright"
        assert [(w.path, w.line, w.column) for w in there.locations] == [("calc.py", 1, 5)]
        # main.py is open now; files the server has not indexed yet may be missing from references
        # (pyright scans the workspace in the background), as they are in an editor.
        found = await references(lsp, str(root), "calc.py", line=1, symbol="add", timeout=SLOW_MACHINE)
        assert {(w.path, w.line) for w in found.locations} >= {("calc.py", 1), ("main.py", 1), ("main.py", 3)}
        assert [w.column for w in found.locations if w.path == "main.py" and w.line == 3] == [9, 21]
    finally:
        await lsp.close()


async def test_no_server_means_no_answer_so_the_caller_falls_back(tmp_path):
    (tmp_path / "m.go").write_text("package main\n")
    lsp = LanguageServers(LspOptions(commands={"go": ()}), sandbox_in(tmp_path))
    assert await definition(lsp, str(tmp_path), "m.go", line=1, symbol="main") is None
    assert await references(None, str(tmp_path), "m.go", line=1, column=1) is None
    assert not Path(tmp_path / "m.go").read_text() == ""
