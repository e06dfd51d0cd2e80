"""Issue 37 item 7: a Plan task has search_code like ReAct, and the first call indexes the project
with its progress shown as notices."""

from __future__ import annotations

from paicli.codeindex.options import CodeIndexOptions
from tests.graphs.plan_support import PLANNING, PlanHarness, plan_json, task_key
from tests.support.code_project import write_polyglot
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.builtin.code_search import code_index_specs
from paicli.tools.registry import BUILTIN_TOOLS


async def test_a_plan_task_searches_the_code_and_the_first_search_indexes_it(project, tmp_path):
    write_polyglot(project)
    tools = {**BUILTIN_TOOLS, **code_index_specs(tmp_path / "home", CodeIndexOptions())}
    model = ScriptedChatModel.by_content({PLANNING: [plan_json(("t", "找到限流的实现", []))], task_key("找到限流的实现"): [
        ai("", tool_call("search_code", {"query": "token bucket rate limiter"})),
        ai("在 engine/src/lib.rs")]})
    h = PlanHarness(model, project, tools=tools)
    assert await h.run("找到限流的实现") == []
    task_calls = [i for i, prompt in enumerate(model.seen) if "当前任务：找到限流的实现" in str(prompt)]
    assert "search_code" in str(model.seen_tools[task_calls[0]])
    result = model.seen[task_calls[1]][-1].content
    assert "代码检索结果" in result and "engine/src/lib.rs:4-6 · struct RateLimiter" in result
    assert "⏳ 代码库尚未索引，正在建立代码索引…" in h.notices
    model.assert_consumed()
