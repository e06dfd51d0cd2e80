"""Issue 28 item 6: the three graphs as LangGraph Server runs them on its own PostgreSQL.

The graphs are compiled without a checkpointer or store (as ``paicli/studio/graphs.py`` exports them) and
the server's ``AsyncPostgresSaver`` and ``AsyncPostgresStore`` are put in with ``graph.copy``, as
the server does (notes §5.3). Against a real PostgreSQL: memory one run saves is retrieved by the
next run on another thread; a Plan stops at its review interrupt and resumes from the database;
a Team run completes.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres.aio import AsyncPostgresStore
from langgraph.types import Command

from paicli.graphs.plan import build_graph as build_plan
from paicli.graphs.react import build_react
from paicli.graphs.team import build_graph as build_team
from paicli.memory.context.rounds import internal_kind
from paicli.nodes.core.state import Deps, RunContext
from tests.graphs.plan_support import PLANNING, plan_json, task_key
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


@pytest.fixture
async def server_stores(database_url):
    async with AsyncPostgresSaver.from_conn_string(database_url) as saver, \
            AsyncPostgresStore.from_conn_string(database_url) as store:
        await saver.setup()
        await store.setup()
        yield {"checkpointer": saver, "store": store}


def _served(graph, stores):
    compiled = graph.compile() if hasattr(graph, "compile") else graph  # with no checkpointer or store
    return compiled.copy(update=stores)  # langgraph_api/graph.py: the server's saver and store


async def _run(graph, graph_input, thread: str, context: RunContext) -> list:
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
    found = []
    async for _ns, _mode, data in graph.astream(graph_input, config, context=context, stream_mode=["updates"],
                                              subgraphs=True):
        found += list(data.get("__interrupt__", ()))
    return found


async def test_react_memory_saved_in_one_run_is_retrieved_in_the_next(project, server_stores):
    model = ScriptedChatModel([ai("", tool_call("save_memory", {"fact": "项目使用 pnpm 管理依赖"})), ai("记下了"),
                               ai("pnpm")])
    graph = _served(build_react(Deps(model=model))[0], server_stores)
    context = RunContext(project_root=str(project), approval="yes")
    assert await _run(graph, {"messages": [HumanMessage("记住：项目使用 pnpm")]}, "t-1", context) == []
    assert await _run(graph, {"messages": [HumanMessage("依赖用什么管理？")]}, "t-2", context) == []
    model.assert_consumed()
    [block] = [m.content for m in model.seen[2] if internal_kind(m) == "memory_context"]
    assert "项目使用 pnpm 管理依赖" in block
    items = await server_stores["store"].asearch(("memories",))
    assert [i.value["content"] for i in items] == ["项目使用 pnpm 管理依赖"]


async def test_a_plan_review_interrupt_resumes_from_the_database(project, server_stores):
    model = ScriptedChatModel.by_content({PLANNING: [plan_json(("a", "统计", []))], task_key("统计"): [ai("3 个")]})
    context = RunContext(project_root=str(project), approval="yes", mode="plan", review=True)
    [stop] = await _run(_served(build_plan(Deps(model=model)), server_stores),
                        {"messages": [HumanMessage("统计文件")]}, "p-1", context)
    assert stop.value["kind"] == "plan_review"
    again = _served(build_plan(Deps(model=model)), server_stores)  # another server worker picks it up
    assert await _run(again, Command(resume={stop.id: ""}), "p-1", context) == []
    state = await again.aget_state({"configurable": {"thread_id": "p-1"}})
    assert state.values["status"] == "completed" and "3 个" in state.values["outcome"]


async def test_a_team_run_completes_on_the_servers_saver_and_store(project, server_stores):
    team_plan = ai('{"summary": "s", "steps": [{"id": "a", "description": "读 A", "type": "ANALYSIS", '
                   '"dependencies": []}]}')
    model = ScriptedChatModel.by_content({PLANNING: [team_plan], "当前任务：读 A": [ai("A 的结果")],
                                          "原始任务：读 A": [ai('{"approved": true, "summary": "好"}')]})
    context = RunContext(project_root=str(project), approval="yes", mode="team")
    assert await _run(_served(build_team(Deps(model=model)), server_stores),
                      {"messages": [HumanMessage("读 A")]}, "team-1", context) == []
    state = await server_stores["checkpointer"].aget_tuple({"configurable": {"thread_id": "team-1"}})
    assert state.checkpoint["channel_values"]["status"] == "completed"
