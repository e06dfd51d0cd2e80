"""The Team graph with a scripted model answering by content (reference s.5): planning and
its strict rejections, waves of two, review, retries with kept history, failures, cancel."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from paicli.graphs.team import build_graph
from paicli.nodes.core.state import Deps, RunContext
from tests.graphs.conftest import assert_paired, slow_tool
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

PLANNING = "请为以下任务制定执行计划"
YES = ai('{"approved": true, "summary": "好"}')


def plan(*steps: tuple[str, str, list[str]]) -> Any:
    return ai(json.dumps({"summary": "s", "steps": [
        {"id": i, "description": d, "type": "ANALYSIS", "dependencies": deps} for i, d, deps in steps]},
        ensure_ascii=False))


class Team:
    def __init__(self, model: ScriptedChatModel, project, **deps: Any):
        self.model = model
        self.graph = build_graph(Deps(model=model, **deps), checkpointer=InMemorySaver())
        self.config = {"configurable": {"thread_id": "t1"}, "recursion_limit": 500}
        self.context = RunContext(project_root=str(project), approval="yes", session_id="s1", mode="team")
        self.notices: list[str] = []
        self.stamps: list[tuple[float, str]] = []

    async def run(self, goal: str) -> dict[str, Any]:
        async for _ns, mode, data in self.graph.astream(
                {"messages": [HumanMessage(goal)]}, self.config, context=self.context,
                stream_mode=["updates", "custom"], subgraphs=True):
            if mode == "custom":
                if "notice" in data:  # other events: a unit starting, the planner's token usage
                    self.notices.append(data["notice"])
        return dict((await self.graph.aget_state(self.config)).values)

    def requests(self, key: str) -> list[list[Any]]:
        return [p for p in self.model.seen if key in "\n".join(str(m.content) for m in p if m.type == "human")]

    def check_prompts(self) -> None:
        """Every request: paired calls; tools only on workers' requests."""
        for prompt, tools in zip(self.model.seen, self.model.seen_tools):
            assert isinstance(prompt[0], SystemMessage)
            assert_paired(prompt[1:])
            system = prompt[0].content
            if "## Mode: Team Worker" in system:
                assert tools
            else:
                assert not tools and ("## Mode: Team Planner" in system or "## Mode: Team Reviewer" in system)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return root


async def test_two_independent_steps_then_a_dependent_one_that_sees_only_approved_results(project):
    (project / "a.txt").write_text("甲的内容")
    model = ScriptedChatModel.by_content({
        PLANNING: [plan(("a", "读 A", []), ("b", "读 B", []), ("c", "合并", ["a", "b"]))],
        "原因：\n- 还要写行数": [ai("A 的结果 v2")],
        "当前任务：读 A": [ai("", tool_call("read_file", {"path": "a.txt"})), ai("A 的结果 v1")],
        "当前任务：读 B": [ai("B 的结果")],
        "当前任务：合并": [ai("合并结果")],
        "执行结果：\nA 的结果 v1": [ai('{"approved": false, "issues": ["还要写行数"]}')],
        "原始任务：读 A": [YES],
        "原始任务：读 B": [YES],
        "原始任务：合并": [YES],
    })
    team = Team(model, project)
    state = await team.run("汇总两个文件")
    model.assert_consumed()
    team.check_prompts()
    assert state["status"] == "completed"
    assert state["outcome"].startswith("✅ 多 Agent 协作任务完成！\n\n📋 执行总结：\n[step_1] ✅ 读 A\n   结果：A 的结果 v2\n")
    assert state["messages"][-1].content == state["outcome"]
    # the dependent step's brief: the goal and both approved results, never the rejected one
    [merge] = team.requests("当前任务：合并")
    brief = "\n".join(str(m.content) for m in merge if m.type == "human")
    assert "总任务上下文：\n汇总两个文件" in brief and "A 的结果 v2" in brief and "B 的结果" in brief
    assert "A 的结果 v1" not in brief and "还要写行数" not in brief
    # the retry kept the worker's history: its first attempt, tool call included, then the feedback
    [retry] = team.requests("原因：\n- 还要写行数")
    assert [m.type for m in retry[1:]] == ["human", "human", "ai", "tool", "ai", "human"]
    assert retry[-1].content.endswith("当前任务：读 A")
    assert team.notices[:2] == ["📋 第一阶段：规划", "🧑‍💼 规划者正在分析任务..."]
    for line in ["📋 执行计划", "  ⏳ [step_3] 合并 (依赖: step_1, step_2)", "⚡ 第二阶段：执行",
                 "⚡ 批次 #1：2 个独立步骤并行执行（最多 2 个并发 Worker）", "🛠️ worker-1 执行步骤 [step_1]: 读 A",
                 "🛠️ worker-2 执行步骤 [step_2]: 读 B", "🔍 reviewer-step_1 正在审查步骤 [step_1] 的结果...",
                 "⚠️ 步骤 [step_1] 审查未通过，正在重新执行...\n   反馈: - 还要写行数", "✅ 步骤 [step_1] 重试后审查通过",
                 "✅ 步骤 [step_2] 审查通过", "🛠️ worker-1 执行步骤 [step_3]: 合并",
                 "🔍 reviewer 正在审查步骤 [step_3] 的结果...", "✅ 步骤 [step_3] 审查通过"]:
        assert line in team.notices, line


@pytest.mark.parametrize("reply, reason", [
    ('{"steps": [{"id": "a"}], "steps": [{"id": "b"}]}', "JSON 对象中存在重复键：steps"),
    ('{"steps": [{"id": "a"}]} 完毕', "JSON 对象之后还有多余内容"),
    ('```python\n{"steps": [{"id": "a"}]}\n```', "代码块语言必须为 json"),
    ('```json\n{"steps": [{"id": "a"}]}', "代码块围栏不完整"),
    ('{"steps": [{"id": "a", "dependencies": ["x"]}]}', "计划依赖必须引用已声明的步骤 id：x"),
    ('{"steps": [{"id": "a", "dependencies": ["b"]}, {"id": "b", "dependencies": ["a"]}]}', "计划中存在循环依赖"),
    ('{"steps": []}', "计划必须包含非空 steps 数组"),
])
async def test_a_rejected_plan_ends_the_run_before_any_worker(project, reply, reason):
    model = ScriptedChatModel.by_content({PLANNING: [ai(reply)]})
    team = Team(model, project)
    state = await team.run("做点事")
    model.assert_consumed()
    assert model.calls == 1 and not model.seen_tools[0]
    assert state["outcome"] == f"❌ 规划失败：无法解析执行计划\n原因：{reason}\n原始输出:\n{reply}"
    assert state["status"] == "failed" and "⚡ 第二阶段：执行" not in team.notices


async def test_a_blank_plan_and_a_failing_planner_have_their_texts(project):
    team = Team(ScriptedChatModel.by_content({PLANNING: [ai("  ")]}), project)
    assert (await team.run("做点事"))["outcome"] == "❌ 规划失败：规划者未能生成有效计划"
    team = Team(ScriptedChatModel.by_content({PLANNING: [RuntimeError("boom")]}), project)
    assert (await team.run("做点事"))["outcome"] == "❌ 规划阶段失败，规划者 LLM 调用出错：LLM 调用失败: boom"


@pytest.mark.parametrize("verdict, approved", [
    ('{"approved": true}', True),
    ('```json\n{"approved": true}\n```', True),
    ('{"approved": "true"}', False),
    ('{"approved": 1}', False),
    ('{"summary": "通过"}', False),
    ("通过，没有问题", False),
])
async def test_the_verdict_fails_closed_through_the_graph(project, verdict, approved):
    again = [ai(verdict)] * 3
    model = ScriptedChatModel.by_content({PLANNING: [plan(("a", "读 A", []))],
                                          "原始任务：读 A": again if not approved else [ai(verdict)],
                                          "当前任务：读 A": [ai(f"v{i}") for i in range(1, 4 if not approved else 2)]})
    team = Team(model, project)
    state = await team.run("目标")
    model.assert_consumed()
    assert state["records"]["step_1"]["status"] == "completed"  # review never fails a step
    assert state["records"]["step_1"]["result"] == ("v1" if approved else "v3")
    assert ("⚠️ 步骤 [step_1] 超过最大重试次数，保留当前结果" in team.notices) is not approved


@pytest.mark.parametrize("verdict, feedback", [
    ('{"approved": false, "issues": ["缺测试"], "suggestions": ["加注释"]}', "- 缺测试"),
    ('{"approved": false, "suggestions": ["加注释"], "summary": "s"}', "- 加注释"),
    ('{"approved": false, "summary": "不完整"}', "不完整"),
    ('{"approved": false}', "审查未通过，请改进执行结果"),
])
async def test_the_retry_brief_carries_the_feedback(project, verdict, feedback):
    model = ScriptedChatModel.by_content({PLANNING: [plan(("a", "读 A", []))],
                                          "被审查拒绝": [ai("v2")],
                                          "执行结果：\nv1": [ai(verdict)], "执行结果：\nv2": [YES],
                                          "当前任务：读 A": [ai("v1")]})
    team = Team(model, project)
    await team.run("目标")
    model.assert_consumed()
    [retry] = team.requests("被审查拒绝")
    assert retry[-1].content.endswith(f"之前的执行结果被审查拒绝，原因：\n{feedback}\n\n当前任务：读 A")


async def test_a_failing_reviewer_keeps_the_workers_result(project):
    model = ScriptedChatModel.by_content({PLANNING: [plan(("a", "读 A", []))],
                                          "原始任务：读 A": [RuntimeError("reviewer down")],
                                          "当前任务：读 A": [ai("v1")]})
    team = Team(model, project)
    state = await team.run("目标")
    model.assert_consumed()
    assert state["status"] == "completed" and state["records"]["step_1"]["result"] == "v1"
    assert "⚠️ 步骤 [step_1] 审查阶段 LLM 调用失败，保留当前执行结果" in team.notices


async def test_a_failing_worker_fails_its_step_only_and_skips_its_dependents(project):
    model = ScriptedChatModel.by_content({
        PLANNING: [plan(("a", "读 A", []), ("b", "读 B", []), ("c", "用 A", ["a"]))],
        "当前任务：读 A": [RuntimeError("provider down")], "当前任务：读 B": [ai("B")], "原始任务：读 B": [YES]})
    team = Team(model, project)
    state = await team.run("目标")
    model.assert_consumed()
    team.check_prompts()
    assert state["records"]["step_2"]["status"] == "completed" and state["records"]["step_1"]["status"] == "failed"
    assert state["status"] == "failed"
    assert state["outcome"].startswith("⚠️ 多 Agent 协作任务未完全完成，存在失败步骤。\n\n")
    assert "[step_3] ⏳ 用 A" in state["outcome"]
    assert "⏭️ 步骤 [step_3] 因前置步骤失败被跳过: 用 A" in team.notices
    assert any(n.startswith("❌ 步骤 [step_1] 执行失败：") for n in team.notices)
    assert not team.requests("原始任务：读 A")  # a failed worker result is not reviewed


async def test_cancelling_mid_step_leaves_no_review_and_a_paired_history(project):
    model = ScriptedChatModel.by_content({PLANNING: [plan(("a", "读 A", []))],
                                          "当前任务：读 A": [ai("", tool_call("list_dir", {"path": "."})), ai("v1")]},
                                         delay=0.3)
    team = Team(model, project)
    task = asyncio.ensure_future(team.run("目标"))
    while model.calls < 2:  # the worker's second model call is under way
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not team.requests("原始任务")
    state = (await team.graph.aget_state(team.config)).values
    assert not state.get("outcome") and not (state.get("records") or {})


async def test_a_step_may_fetch_the_urls_its_dependency_found_with_web_search(project):
    """reference s.5 runStep item 2: the dependency's grounded URLs are listed and trusted."""
    from tests.support.web_server import FakeWebServer
    from paicli.tools.base import WebOptions

    with FakeWebServer() as web:
        config = WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))
        model = ScriptedChatModel.by_content({
            PLANNING: [plan(("s", "搜文档", []), ("r", "读文档", ["s"]))],
            "当前任务：搜文档": [ai("", tool_call("web_search", {"query": "LangGraph"})), ai("找到了")],
            "当前任务：读文档": [ai("", tool_call("web_fetch", {"url": web.url("/article")})), ai("读完了")],
            "原始任务：搜文档": [YES], "原始任务：读文档": [YES]})
        team = Team(model, project, web=config)
        values = await team.run("先搜索 LangGraph 文档再读它")
        reader = team.requests("当前任务：读文档")
        assert f"依赖分支经 web_search 验证的 URL（可供当前步骤抓取/导航）：\n- {web.url('/article')}" in reader[0][2].content
        assert "LangGraph 用**图**来编排智能体" in reader[-1][-1].content
        assert values["status"] == "completed"


async def test_the_planner_request_carries_the_memories_relevant_to_the_goal(project, tmp_path):
    """Q16: as in every turn, the relevant memories ride after the request, not in the system prompt."""
    from paicli.memory.context.rounds import internal_kind
    from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
    from paicli.memory.longterm.entry import normalize_project_key

    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    memory.save_fact("项目使用 pnpm 管理依赖", scope="project", project_key=normalize_project_key(project))
    model = ScriptedChatModel.by_content({PLANNING: [plan(("a", "列出依赖", []))],
                                          "当前任务：列出依赖": [ai("3 个依赖")], "原始任务：": [YES]})
    team = Team(model, project, memory=memory)
    assert (await team.run("用 pnpm 列出项目依赖"))["status"] == "completed"
    [planner] = [p for p in model.seen if "## Mode: Team Planner" in p[0].content]
    assert planner[1].content.startswith(PLANNING) and "## 相关长期记忆" not in planner[0].content
    assert internal_kind(planner[2]) == "memory_context" and "项目使用 pnpm 管理依赖" in planner[2].content


async def test_a_step_cut_short_mid_tool_continues_without_running_the_call_again(project):
    """Q11 for Team: a step killed inside execute_tools reports its unanswered call as
    cancelled when the run continues, instead of running it a second time."""
    runs: list[str] = []
    spec = slow_tool(runs)
    model = ScriptedChatModel.by_content({PLANNING: [plan(("a", "读 A", []))],
                                          "当前任务：读 A": [ai("", tool_call("slow", {})), ai("换了办法")],
                                          "原始任务：读 A": [YES]})
    team = Team(model, project, tools={"slow": spec})
    run = asyncio.ensure_future(team.run("目标"))
    while not runs:
        await asyncio.sleep(0.02)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    async for _ in team.graph.astream(None, team.config, context=team.context, subgraphs=True):
        pass
    values = dict((await team.graph.aget_state(team.config)).values)
    assert runs == ["slow"]
    assert values["status"] == "completed" and "换了办法" in values["outcome"]
    assert team.requests("当前任务：读 A")[-1][-1].content == "用户取消了此次工具调用"
    model.assert_consumed()
    team.check_prompts()
