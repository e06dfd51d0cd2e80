"""``code_map(symbol=…)`` in the agent loop (issue 38 item 4): the session's language servers
(``Deps.lsp``) reach the tool through its context, so a served language's answer is the server's
and says exact; a language without a server, and a session without servers, get the code index's
answer, which says approximate. Our own small server (``tests/support/fake_lsp.py``) serves Python."""

from __future__ import annotations

import sys

import pytest

from paicli.codeindex.options import CodeIndexOptions
from tests.graphs.conftest import Harness
from tests.support.code_project import write_polyglot
from tests.support.language_servers import sandbox_in
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tests.unit.test_lsp_manager import FAKE, SLOW_MACHINE
from paicli.tools.builtin.code_search import code_index_specs
from paicli.tools.lsp.manager import LanguageServers
from paicli.tools.lsp.options import LspOptions
from paicli.tools.registry import BUILTIN_TOOLS


@pytest.fixture
async def lsp(tmp_path):
    commands = {"python": (sys.executable, FAKE, "ok"), "java": ()}
    servers = LanguageServers(LspOptions(commands=commands, wait=SLOW_MACHINE), sandbox_in(tmp_path))
    yield servers
    await servers.close()


def script() -> ScriptedChatModel:
    return ScriptedChatModel([ai("", tool_call("code_map", {"symbol": "PriceRule"}),
                                 tool_call("code_map", {"symbol": "Warehouse"})),
                              ai("", tool_call("code_map", {"symbol": "NoSuchThing"})), ai("看完了")])


async def tool_results(project, tmp_path, **deps) -> list[str]:
    tools = {**BUILTIN_TOOLS, **code_index_specs(tmp_path / "home", CodeIndexOptions())}
    model = script()
    h = Harness(model, project, tools=tools, **deps)
    assert await h.turn("PriceRule 在哪里被用到") == []
    model.assert_consumed()
    h.check_prompts()
    assert "symbol" in str(model.seen_tools[0])  # the model is offered the parameter
    return [m.content for m in await h.messages() if m.type == "tool"]


async def test_code_map_of_a_symbol_is_exact_where_a_server_answers_and_says_which(project, tmp_path, lsp):
    write_polyglot(project)
    assert await lsp.servers_ready(str(project / "shop/pricing.py"), str(project), SLOW_MACHINE)
    python, java, missing = await tool_results(project, tmp_path, lsp=lsp)
    assert "\n符号 PriceRule · 精确（python）\n" in python  # the first line inside the boundary
    assert "    shop/pricing.py:13  BulkDiscount (extends)" in python  # the server's reference
    assert "    shop/pricing.py:32  default_rule (call)" in python
    assert "  子类/实现（1）· 近似（代码索引）:" in python
    assert "\n符号 Warehouse · 近似（代码索引）\n" in java
    assert "ColdStorage.java:9  ColdStorage (实现)" in java
    assert "代码索引里没有名为 NoSuchThing 的符号。" in missing


async def test_without_language_servers_code_map_of_a_symbol_is_the_index_s_and_says_approximate(project, tmp_path):
    write_polyglot(project)
    python, java, _missing = await tool_results(project, tmp_path)
    assert "\n符号 PriceRule · 近似（代码索引）\n" in python
    assert "shop/pricing.py:13  BulkDiscount (extends)" not in python  # by name, the index files it as a subclass
    assert "按名称匹配" in python and "\n符号 Warehouse · 近似（代码索引）\n" in java
