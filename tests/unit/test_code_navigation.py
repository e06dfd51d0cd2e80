"""A symbol's graph, exact where a language server answers (issue 38 item 4 on issue 37's index):
``tools/builtin/code_navigation.py`` with our own small server (``tests/support/fake_lsp.py``) that
crashes, never starts, answers late or points outside the project, and with basedpyright where
matching by name is wrong."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from paicli.codeindex.indexer import update
from paicli.codeindex.store import Store
from tests.support.code_project import write_polyglot
from tests.support.language_servers import require, sandbox_in
from tests.unit.test_lsp_manager import FAKE, SLOW_MACHINE
from paicli.tools.builtin.code_navigation import APPROXIMATE_LABEL, render, symbol_graph
from paicli.tools.lsp.manager import LanguageServers
from paicli.tools.lsp.navigate import definition
from paicli.tools.lsp.options import LspOptions

NO_JAVA = {"java": ()}  # PAICLI_LSP_JAVA=off: a language no server serves, whatever is installed


@pytest.fixture
def poly(tmp_path) -> Path:
    return write_polyglot(tmp_path / "poly").resolve()


@pytest.fixture
def store(tmp_path, poly) -> Store:
    store = Store(tmp_path / "index")
    update(store, poly)
    return store


def fake(tmp_path: Path, mode: str, *args: str, **options) -> LanguageServers:
    commands = {"python": (sys.executable, FAKE, mode, *args), **NO_JAVA}
    return LanguageServers(LspOptions(commands=commands, **options), sandbox_in(tmp_path))


async def test_a_served_language_gets_the_server_s_references_and_calls_and_says_exact(tmp_path, poly, store):
    lsp = fake(tmp_path, "ok")
    try:
        graph = await symbol_graph(store, lsp, str(poly), "PriceRule", wait=SLOW_MACHINE)
        assert graph.exact and graph.users_by == ["python"]
        # the server also sees the use in BulkDiscount's bases, which the index files as a subclass only
        assert [(u.path, u.line, u.qualified, u.kind) for u in graph.users] == [
            ("shop/pricing.py", 13, "BulkDiscount", "extends"), ("shop/pricing.py", 32, "default_rule", "call")]
        lines = render(graph, "🕸️ PriceRule")
        assert lines[0] == "🕸️ PriceRule · 精确（python）"
        assert "  子类/实现（1）· 近似（代码索引）:" in lines  # no server request for subclasses: the index's, said so
        called = await symbol_graph(store, lsp, str(poly), "BulkDiscount.apply", wait=SLOW_MACHINE)
        assert called.calls_by == ["python"] and dict(called.calls)["round_cents"][0].line == 20
        assert "    round_cents → shop/pricing.py:20" in render(called, "x")
    finally:
        await lsp.close()


async def test_a_language_without_a_server_keeps_the_index_s_graph_and_says_approximate(tmp_path, poly, store):
    lsp = fake(tmp_path, "ok")
    try:
        graph = await symbol_graph(store, lsp, str(poly), "Warehouse", wait=SLOW_MACHINE)
        assert not graph.exact and graph.label == APPROXIMATE_LABEL
        lines = render(graph, "🕸️ Warehouse")
        assert lines[0] == "🕸️ Warehouse · 近似（代码索引）" and "按名称匹配" in lines[-1]
        assert any("ColdStorage.java:9  ColdStorage (实现)" in line for line in lines)
        assert lsp.servers == {}  # nothing was started for Java, nor for Python
    finally:
        await lsp.close()


async def test_no_servers_at_all_is_the_index_s_graph(poly, store):
    graph = await symbol_graph(store, None, str(poly), "PriceRule")
    assert not graph.exact and [(u.path, u.line) for u in graph.users] == [("shop/pricing.py", 32)]
    assert render(graph, "🕸️ PriceRule")[0] == "🕸️ PriceRule · 近似（代码索引）"


@pytest.mark.parametrize("mode, args", [("crash", ()), ("mute", ()), ("slow-nav", ("30",))],
                         ids=["crashes-on-start", "never-starts", "answers-too-late"])
async def test_a_server_that_fails_is_the_index_s_answer_within_the_bound_never_an_error(tmp_path, poly, store,
                                                                                          mode, args):
    lsp = fake(tmp_path, mode, *args)
    try:
        if mode == "slow-nav":  # up and ready: only its navigation answers are late
            assert await lsp.servers_ready(str(poly / "shop/pricing.py"), str(poly), SLOW_MACHINE)
        started = time.monotonic()
        graph = await symbol_graph(store, lsp, str(poly), "PriceRule", wait=1.0)
        assert time.monotonic() - started < 8  # two waits of 1 s, with room for a loaded machine
        assert not graph.exact and [(u.path, u.line) for u in graph.users] == [("shop/pricing.py", 32)]
        assert render(graph, "🕸️ PriceRule")[0].endswith("近似（代码索引）")
    finally:
        await lsp.close()


async def test_a_location_outside_the_project_is_shown_as_its_path_and_never_read(tmp_path):
    project = (tmp_path / "project").resolve()
    project.mkdir()
    (project / "use.py").write_text("import vendor\n\n\ndef run():\n    return vendor.frobnicate(1)\n")
    outside = tmp_path / "stubs" / "vendor.pyi"
    outside.parent.mkdir()
    outside.write_text("def frobnicate(x: int) -> int: ...\n")
    store = Store(tmp_path / "index")
    update(store, project)
    lsp = fake(tmp_path, "elsewhere", str(outside))
    try:
        found = await definition(lsp, str(project), "use.py", line=5, symbol="frobnicate", timeout=SLOW_MACHINE)
        [where] = found.locations
        assert (where.path, where.line, where.text) == (str(outside), 1, "")  # its line was not read
        graph = await symbol_graph(store, lsp, str(project), "frobnicate", wait=SLOW_MACHINE)
        assert graph.exact and [(d.path, d.line) for d in graph.definitions] == [(str(outside), 1)]
        assert f"    {outside}:1" in render(graph, "x")
        assert [(u.path, u.line, u.qualified) for u in graph.users] == [("use.py", 5, "run")]
    finally:
        await lsp.close()


async def test_basedpyright_tells_two_methods_of_one_name_apart_where_the_index_cannot(tmp_path):
    require("python", "basedpyright")
    root = (tmp_path / "project").resolve()
    root.mkdir()
    (root / "shop.py").write_text("class Cart:\n    def total(self) -> int:\n        return 1\n\n\n"
                                  "class Invoice:\n    def total(self) -> int:\n        return 2\n")
    (root / "pay.py").write_text("from shop import Cart, Invoice\n\n\ndef pay(cart: Cart) -> int:\n"
                                 "    return cart.total()\n\n\ndef bill(invoice: Invoice) -> int:\n"
                                 "    return invoice.total()\n")
    store = Store(tmp_path / "index")
    update(store, root)
    guessed = await symbol_graph(store, None, str(root), "Cart.total")
    assert [u.qualified for u in guessed.users] == ["pay", "bill"]  # by name: Invoice's use too
    lsp = LanguageServers(LspOptions(), sandbox_in(tmp_path))
    try:
        graph = await symbol_graph(store, lsp, str(root), "Cart.total", wait=SLOW_MACHINE)
        assert graph.users_by == ["basedpyright"]
        assert [(u.path, u.line, u.qualified, u.kind) for u in graph.users] == [("pay.py", 5, "pay", "call")]
        assert render(graph, "🕸️ Cart.total")[0] == "🕸️ Cart.total · 精确（basedpyright）"
    finally:
        await lsp.close()


async def test_a_decorated_definition_is_asked_at_the_line_that_names_it(tmp_path):
    project = (tmp_path / "project").resolve()
    project.mkdir()
    (project / "m.py").write_text("import functools\n\n\n@functools.cache\ndef heavy(x):\n    return x\n\n\n"
                                  "def use():\n    return heavy(1)\n")
    store = Store(tmp_path / "index")
    update(store, project)
    lsp = fake(tmp_path, "ok")
    try:
        graph = await symbol_graph(store, lsp, str(project), "heavy", wait=SLOW_MACHINE)
        assert [(d.line, d.end_line) for d in graph.definitions] == [(4, 6)]  # the index's, from the decorator
        assert graph.exact and [(u.line, u.qualified) for u in graph.users] == [(10, "use")]
    finally:
        await lsp.close()
