"""The turn tool policy inside the loop: exposure, denials before approval, URL grounding by
web_search results, external sources in state, the audit log, and background fact extraction."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import ToolMessage

from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.nodes.core.background import Background
from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tests.support.web_server import FakeWebServer
from paicli.tools.policy.audit import AuditLog
from paicli.tools.base import WebOptions


def _names(tools: list[dict]) -> set[str]:
    return {t["function"]["name"] for t in tools}


def _results(messages) -> list[str]:
    return [m.content for m in messages if isinstance(m, ToolMessage)]


@pytest.fixture
def web():
    with FakeWebServer() as fake:
        yield fake


async def test_search_results_ground_the_fetch_that_follows(project, web, tmp_path):
    config = WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))
    model = ScriptedChatModel([ai("", tool_call("web_search", {"query": "LangGraph"})),
                               ai("", tool_call("web_fetch", {"url": web.url("/article")})),
                               ai("读完了")])
    harness = Harness(model, project, web=config, audit=AuditLog(tmp_path / "audit"))
    await harness.turn("搜索一下 LangGraph 是什么")
    assert "web_fetch" not in _names(model.seen_tools[0])  # o.4 rule 3: nothing grounded yet
    assert "web_fetch" in _names(model.seen_tools[1])
    search, fetch = _results(await harness.messages())
    assert "🌐 抓取: " in fetch and "LangGraph 用**图**来编排智能体" in fetch
    state = await harness.graph.aget_state(harness.config)
    assert state.values["external_sources"] == ["web_search", "web_fetch"]
    [line] = (tmp_path / "audit").glob("audit-*.jsonl")
    [entry] = [json.loads(x) for x in line.read_text(encoding="utf-8").splitlines()]
    assert entry["tool"] == "web_fetch" and entry["outcome"] == "allow"


async def test_a_guessed_url_is_denied_without_running_or_asking(project, web, tmp_path):
    config = WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))
    model = ScriptedChatModel([ai("", tool_call("web_fetch", {"url": web.url("/article")})), ai("好")])
    harness = Harness(model, project, approval="ask", web=config, audit=AuditLog(tmp_path / "audit"))
    assert await harness.turn("帮我看看 LangGraph 的文档") == []  # no approval question
    [denied] = _results(await harness.messages())
    assert "🛡️ 工具调用已拒绝 [UNGROUNDED_URL]" in denied
    assert not any("/article" in r for r in web.requests)
    [line] = (tmp_path / "audit").glob("audit-*.jsonl")
    entry = json.loads(line.read_text(encoding="utf-8"))
    assert entry["outcome"] == "deny" and entry["approver"] == "policy"


async def test_no_web_turn_hides_web_tools_and_denies_network_commands_before_approval(project):
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "curl https://example.com"})),
                               ai("好，只用本地内容")])
    harness = Harness(model, project, approval="auto")
    assert await harness.turn("不要联网，总结一下 README") == []  # execute_command would ask; the policy answers first
    assert not {"web_search", "web_fetch"} & _names(model.seen_tools[0])
    [denied] = _results(await harness.messages())
    assert "[WEB_FORBIDDEN]" in denied


async def _extraction_harness(project, tmp_path, script, **deps):
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    background = Background()
    model = ScriptedChatModel(script)
    harness = Harness(model, project, memory=memory, auto_extract=True, background=background, **deps)
    return harness, model, memory, background


async def test_extraction_runs_after_a_normal_answer_in_the_background(project, tmp_path):
    harness, model, memory, background = await _extraction_harness(
        project, tmp_path, [ai("好的"), ai('{"facts":[{"quote":"我们项目统一使用 pnpm"}]}')])
    await harness.turn("我们项目统一使用 pnpm，帮我看看依赖")
    assert await background.drain(5)
    assert [e.content for e in memory.entries()] == ["我们项目统一使用 pnpm"]
    assert background.pop_notices() == ["💾 自动提取并保存 1 条项目事实（待核实；可用 /memory list 查看和删除）。"]
    extraction_request = model.seen[-1]
    assert model.seen_tools[-1] == [] and "帮我看看依赖" in extraction_request[-1].content


async def test_no_extraction_after_external_content_or_a_provider_error(project, tmp_path, web):
    config = WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))
    harness, model, memory, background = await _extraction_harness(
        project, tmp_path, [ai("", tool_call("web_search", {"query": "x"})), ai("搜到了")], web=config)
    await harness.turn("我们项目统一使用 pnpm，帮我搜索 pnpm 文档")
    assert background.pending == 0 and model.remaining() == 0 and memory.entries() == []


async def test_no_extraction_when_the_turn_was_budget_finalized(project, tmp_path):
    from paicli.nodes.core.state import BudgetOptions

    harness, model, memory, background = await _extraction_harness(
        project, tmp_path,
        [ai("", tool_call("list_dir", {"path": "."}), usage=(900, 200)), ai("部分结果")],
        budget=BudgetOptions(token_budget=1000))
    await harness.turn("我们项目统一使用 pnpm，列一下目录")
    assert background.pending == 0 and memory.entries() == []


async def test_a_saved_memory_links_the_files_the_turn_read_and_goes_stale_when_they_change(project, tmp_path):
    import os
    import time

    from paicli.memory.longterm.staleness import Stale, staleness

    (project / "pom.xml").write_text("<java>17</java>", encoding="utf-8")
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "./pom.xml"}), tool_call("read_file", {"path": "nope.txt"})),
                               ai("", tool_call("save_memory", {"fact": "项目的 JDK 固定为 17"})), ai("记住了")])
    await Harness(model, project, memory=memory).turn("看一下 pom.xml，记住 JDK 版本")
    [entry] = memory.entries()
    assert entry.source_files == ["pom.xml"]  # the failed read of nope.txt does not count
    assert staleness(entry) is None
    later = time.time() + 60
    os.utime(project / "pom.xml", (later, later))
    assert staleness(entry) is Stale.FILES
