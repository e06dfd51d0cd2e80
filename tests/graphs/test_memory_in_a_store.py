"""Issue 28 item 1: the graphs reach long-term memory through any LangGraph store.

An ``InMemoryStore`` handed to the graph as its store (as LangGraph Server hands its own): the turn
retrieves what it holds, ``save_memory`` and fact extraction write into it, and paicli's rules
(dedup, conflicts) hold over its items. Before, memory silently turned off under any store but
paicli's file store.
"""

from __future__ import annotations

from datetime import UTC, datetime

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from paicli.graphs.react import build_graph
from paicli.memory.context.rounds import internal_kind
from paicli.memory.longterm.entry import normalize_project_key
from paicli.memory.longterm.store import project_namespace
from paicli.memory.longterm.store_entries import memory_of
from paicli.nodes.core.background import Background
from paicli.nodes.core.state import Deps
from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

FIXED = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def _harness(model, project, store, approval="yes", **deps) -> Harness:
    harness = Harness(model, project, approval=approval, **deps)
    harness.graph = build_graph(Deps(model=model, clock=lambda: FIXED, **deps), checkpointer=InMemorySaver(),
                                store=store)
    return harness


def _contents(store, project) -> list[str]:
    return [item.value["content"] for item in store.search(project_namespace(normalize_project_key(project)))]


async def test_a_turn_retrieves_memories_held_in_an_in_memory_store(project):
    store = InMemoryStore()
    key = normalize_project_key(project)
    memory_of(store).save_fact("数据库是 PostgreSQL 15", scope="project", project_key=key, now=FIXED)
    memory_of(store).save_fact("别的项目用 MySQL", scope="project", project_key="/elsewhere", now=FIXED)
    model = ScriptedChatModel([ai("PostgreSQL 15")])
    await _harness(model, project, store).turn("数据库用的是什么？")
    [block] = [m.content for m in model.seen[0] if internal_kind(m) == "memory_context"]
    assert "数据库是 PostgreSQL 15" in block and "MySQL" not in block


async def test_save_memory_writes_into_the_graphs_store_with_dedup_and_conflicts(project):
    store = InMemoryStore()
    model = ScriptedChatModel([
        ai("", tool_call("save_memory", {"fact": "项目使用 pnpm 管理依赖", "scope": "project"})),
        ai("", tool_call("save_memory", {"fact": "项目使用 pnpm 管理依赖。", "scope": "project"})),
        ai("", tool_call("save_memory", {"fact": "项目使用 npm 管理依赖", "scope": "project"})),
        ai("记下了")])
    harness = _harness(model, project, store, approval="auto")
    asked = await harness.turn("记住：项目使用 pnpm")
    while asked:  # approve whatever save_memory asks
        asked = await harness.resume({"decision": "approve"})
    model.assert_consumed()
    assert _contents(store, project) == ["项目使用 pnpm 管理依赖"]  # the duplicate and the conflict were not stored
    results = [m.content for m in (await harness.messages()) if m.type == "tool"]
    assert "已存在" in results[1] or "重复" in results[1], results[1]
    assert "高度相似但不一致" in results[2] and "未写入" in results[2]


async def test_fact_extraction_saves_into_the_graphs_store(project):
    store, background = InMemoryStore(), Background()
    model = ScriptedChatModel([ai("好的"), ai('{"facts":[{"quote":"我们项目统一使用 pnpm"}]}')])
    harness = _harness(model, project, store, auto_extract=True, background=background)
    await harness.turn("我们项目统一使用 pnpm，帮我看看依赖")
    assert await background.drain(5)
    assert _contents(store, project) == ["我们项目统一使用 pnpm"]
    [item] = store.search(project_namespace(normalize_project_key(project)))
    assert item.value["metadata"]["source"] != "user"  # an automatic fact, pending verification
