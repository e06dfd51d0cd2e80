"""The Plan graph with a scripted model answering by content (parallel tasks call it in no fixed
order): DAG shapes, a failing task among parallel ones, replan, skip, review, approvals, cancel."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.exceptions import LangChainException
from langchain_core.messages import HumanMessage

from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.nodes.core.background import Background
from paicli.nodes.plan.text import PLAN_REVIEW_CANCELLED
from tests.graphs.conftest import slow_tool
from tests.graphs.plan_support import PLANNING, PlanHarness, plan_json, task_key, top_level_write
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tests.support.waiting import until

GOAL = "先统计项目再写总结，最后检查"


async def test_simple_goal_is_one_task_without_a_planning_call(project):
    model = ScriptedChatModel.by_content({"当前任务：列出当前目录的文件": [ai("a.txt b.txt")]})
    h = PlanHarness(model, project)
    assert await h.run("列出当前目录的文件") == []
    assert await h.outcome() == "✅ 计划执行完成！\n[task_1] a.txt b.txt"
    assert not h.prompts_for(PLANNING)
    assert "📋 正在规划任务: 列出当前目录的文件" in h.notices
    model.assert_consumed()


async def test_chain_runs_one_task_per_wave_each_seeing_the_previous_result(project):
    model = ScriptedChatModel.by_content({
        PLANNING: [plan_json(("x", "读 A", []), ("y", "改 B", ["x"]), ("z", "验 C", ["y"]))],
        task_key("读 A"): [ai("A 的内容")], task_key("改 B"): [ai("B 已改")], task_key("验 C"): [ai("C 通过")]})
    h = PlanHarness(model, project)
    await h.run(GOAL)
    assert await h.outcome() == "✅ 计划执行完成！\n[task_3] C 通过"
    assert [n for n in h.notices if n.startswith("▶️")] == ["▶️ 执行任务 [task_1]: 读 A", "▶️ 执行任务 [task_2]: 改 B",
                                                            "▶️ 执行任务 [task_3]: 验 C"]
    brief = h.prompts_for(task_key("改 B"))[0][-1].content
    assert "- task_1 / 读 A / 状态=COMPLETED\nA 的内容" in brief
    assert "B 已改" in h.prompts_for(task_key("验 C"))[0][-1].content
    model.assert_consumed()
    h.check_prompts()


async def test_diamond_fans_out_then_joins_with_both_results(project):
    model = ScriptedChatModel.by_content({
        PLANNING: [plan_json(("1", "准备", []), ("2", "左支", ["1"]), ("3", "右支", ["1"]), ("4", "合并", ["2", "3"]))],
        task_key("准备"): [ai("ready")], task_key("左支"): [ai("L")], task_key("右支"): [ai("R")],
        task_key("合并"): [ai("L+R")]}, delay=0.2)
    h = PlanHarness(model, project)
    await h.run(GOAL)
    assert "⚡ 本轮并行执行 2 个任务: task_2, task_3" in h.notices
    joined = h.prompts_for(task_key("合并"))[0][-1].content
    assert "状态=COMPLETED\nL" in joined and "状态=COMPLETED\nR" in joined
    assert await h.outcome() == "✅ 计划执行完成！\n[task_4] L+R"
    h.check_prompts()


async def test_independent_tasks_run_concurrently_and_report_every_leaf(project):
    model = ScriptedChatModel.by_content({
        PLANNING: [plan_json(("a", "甲", []), ("b", "乙", []), ("c", "丙", []))],
        task_key("甲"): [ai("1")], task_key("乙"): [ai("2")], task_key("丙"): [ai("3")]}, delay=0.5)
    h = PlanHarness(model, project)
    started = asyncio.get_running_loop().time()
    await h.run(GOAL)
    assert asyncio.get_running_loop().time() - started < 1.7  # planner + one wave, not four calls in a row
    assert await h.outcome() == "✅ 计划执行完成！\n[task_1] 1\n[task_2] 2\n[task_3] 3"


async def test_a_failing_task_does_not_stop_its_parallel_siblings(project):
    model = ScriptedChatModel.by_content({
        PLANNING: [plan_json(("a", "甲", []), ("b", "乙", []), ("c", "丙", []))],
        task_key("甲"): [LangChainException("上游 502")],
        task_key("乙"): [ai("", tool_call("list_dir", {"path": "."})), ai("乙完成")],
        task_key("丙"): [ai("丙完成")]})
    h = PlanHarness(model, project, max_replans=0)
    await h.run(GOAL)
    outcome = await h.outcome()
    assert outcome.startswith("⚠️ 计划部分完成，有任务失败。\n已完成的任务结果:\n[task_2] 乙完成\n[task_3] 丙完成\n")
    assert "任务 task_1 失败: ❌ 调用 LLM 失败" in outcome
    assert "🛑 已达到重新规划上限（0 次），停止执行剩余任务。" in outcome
    assert (await h.values())["status"] == "partial"
    model.assert_consumed()
    h.check_prompts()


async def test_an_early_failure_replans_with_the_reason_and_runs_the_new_plan(project):
    model = ScriptedChatModel.by_content({  # first match wins: the new task's brief quotes the replan goal
        task_key("原办法"): [LangChainException("不行")],
        task_key("换个办法"): [ai("成了")],
        "失败原因: ": [plan_json(("n", "换个办法", []))],
        PLANNING: [plan_json(("a", "原办法", []), ("b", "后续", ["a"]))]})
    h = PlanHarness(model, project)
    await h.run(GOAL)
    assert "🔄 尝试重新规划（第 1/2 次）..." in h.notices
    replan = h.prompts_for("失败原因: ")[0][-1].content
    assert f"原任务: {GOAL}" in replan and "请制定新的执行计划，避开之前的问题。" in replan
    assert await h.outcome() == "✅ 计划执行完成！\n[task_1] 成了"
    assert not h.prompts_for(task_key("后续"))
    model.assert_consumed()


async def test_a_late_failure_skips_what_depends_on_it(project):
    model = ScriptedChatModel.by_content({
        PLANNING: [plan_json(("a", "甲", []), ("b", "乙", []), ("c", "丙", ["a", "b"]), ("d", "丁", ["c"]))],
        task_key("甲"): [ai("1")], task_key("乙"): [ai("2")], task_key("丙"): [LangChainException("坏了")]})
    h = PlanHarness(model, project)
    await h.run(GOAL)
    outcome = await h.outcome()
    assert "任务 task_4 已跳过: 依赖的任务 task_3 失败" in outcome
    assert not any("重新规划" in n for n in h.notices)
    plan = (await h.values())["plan"]
    assert [t["status"] for t in plan["tasks"]] == ["COMPLETED", "COMPLETED", "FAILED", "SKIPPED"]


async def test_an_unusable_plan_ends_the_run_with_the_reference_error(project):
    model = ScriptedChatModel.by_content({PLANNING: [ai('{"tasks": [{"id": "a", "dependencies": ["zz"]}]}')]})
    h = PlanHarness(model, project)
    await h.run(GOAL)
    assert await h.outcome() == "❌ 执行失败: 计划依赖必须引用已声明的任务 id"
    assert (await h.values())["status"] == "failed"


@pytest.mark.parametrize("answer", ["", "y", {"action": "execute"}])
async def test_review_shows_the_plan_and_executes_on_enter(project, answer):
    model = ScriptedChatModel.by_content({PLANNING: [plan_json(("a", "甲", []), ("b", "乙", ["a"]))],
                                          task_key("甲"): [ai("1")], task_key("乙"): [ai("2")]})
    h = PlanHarness(model, project, review=True)
    [stop] = await h.run(GOAL)
    assert stop.value["kind"] == "plan_review"
    assert stop.value["tasks"] == [  # issue 26: the plan as data
        {"id": "task_1", "description": "甲", "type": "ANALYSIS", "dependencies": [], "batch": 1},
        {"id": "task_2", "description": "乙", "type": "ANALYSIS", "dependencies": ["task_1"], "batch": 2}]
    assert set(stop.value["resume"]) == set(stop.value["meanings"]) == {"execute", "cancel", "supplement"}
    assert "Ctrl" not in json.dumps(stop.value, ensure_ascii=False)  # no terminal keys in the data
    assert await h.resume({stop.id: answer}) == []
    assert await h.outcome() == "✅ 计划执行完成！\n[task_2] 2"


async def test_review_cancel_runs_nothing(project):
    model = ScriptedChatModel.by_content({PLANNING: [plan_json(("a", "甲", []), ("b", "乙", ["a"]))]})
    h = PlanHarness(model, project, review=True)
    [stop] = await h.run(GOAL)
    await h.resume({stop.id: "cancel"})
    assert await h.outcome() == PLAN_REVIEW_CANCELLED
    assert (await h.values())["status"] == "cancelled"
    assert model.calls == 1


async def test_review_supplement_replans_with_it_and_asks_again(project):
    model = ScriptedChatModel.by_content({
        task_key("甲"): [ai("1")], task_key("跑测试"): [ai("全绿")],
        "补充要求：顺便跑测试": [plan_json(("a", "甲", []), ("t", "跑测试", ["a"]))],
        PLANNING: [plan_json(("a", "甲", []))]})
    h = PlanHarness(model, project, review=True)
    [first] = await h.run(GOAL)
    [second] = await h.resume({first.id: "顺便跑测试"})
    assert "📝 已收到补充要求，正在重新规划..." in h.notices
    assert [t["description"] for t in second.value["tasks"]] == ["甲", "跑测试"]
    await h.resume({second.id: ""})
    assert await h.outcome() == "✅ 计划执行完成！\n[task_2] 全绿"
    model.assert_consumed()


async def test_two_parallel_tasks_stop_for_approval_together_and_resume_together(project):
    model = ScriptedChatModel.by_content({
        PLANNING: [plan_json(("a", "写甲", [], "FILE_WRITE"), ("b", "写乙", [], "FILE_WRITE"))],
        task_key("写甲"): [ai("", tool_call("write_file", {"path": "a.txt", "content": "A"})), ai("甲写好")],
        task_key("写乙"): [ai("", tool_call("write_file", {"path": "b.txt", "content": "B"})), ai("乙没写")]})
    h = PlanHarness(model, project, approval="ask")
    stops = await h.run(GOAL)
    assert sorted(s.value["unit"] for s in stops) == ["task_1", "task_2"]
    assert {s.value["tool"] for s in stops} == {"write_file"}
    answers = {s.id: {"decision": "approve"} if s.value["unit"] == "task_1" else {"decision": "reject"} for s in stops}
    assert await h.resume(answers) == []
    assert (project / "a.txt").read_text() == "A" and not (project / "b.txt").exists()
    assert await h.outcome() == "✅ 计划执行完成！\n[task_1] 甲写好\n[task_2] 乙没写"
    model.assert_consumed()
    h.check_prompts()


async def test_cancelling_a_run_mid_wave_leaves_it_unfinished_without_a_result(project):
    model = ScriptedChatModel.by_content({PLANNING: [plan_json(("a", "甲", []), ("b", "乙", []))],
                                          task_key("甲"): [ai("1")], task_key("乙"): [ai("2")]}, delay=0.3)
    h = PlanHarness(model, project)
    run = asyncio.ensure_future(h.run(GOAL))
    while not any(n.startswith("⚡") for n in h.notices):
        await asyncio.sleep(0.05)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    state = await h.graph.aget_state(h.config)
    assert state.next and not state.values.get("outcome")


async def test_task_prompts_use_the_plan_mode_prompt_and_lead_with_the_users_text(project):
    model = ScriptedChatModel.by_content({PLANNING: [plan_json(("a", "甲", []))], task_key("甲"): [ai("1")]})
    h = PlanHarness(model, project)
    await h.run(GOAL)
    system, user, brief = h.prompts_for(task_key("甲"))[0][:3]
    assert "## Mode: Plan Task Executor" in system.content and "## Mode: Agent" not in system.content
    assert isinstance(user, HumanMessage) and user.content == GOAL
    assert brief.content.startswith("当前任务类型：ANALYSIS\n任务描述：甲\n")
    planner = h.prompts_for(PLANNING)[0]
    assert "## Mode: Plan Builder" in planner[0].content


async def test_a_run_cut_short_mid_tool_continues_without_rerunning_finished_work(project):
    """Q11: the sibling that finished keeps its result; the interrupted task's tool call is
    reported as cancelled instead of being run a second time."""
    runs: list[str] = []
    spec = slow_tool(runs)
    model = ScriptedChatModel.by_content({
        PLANNING: [plan_json(("a", "甲", []), ("b", "乙", []))],
        task_key("甲"): [ai("", tool_call("slow", {})), ai("甲换了办法")], task_key("乙"): [ai("乙好")]})
    h = PlanHarness(model, project, tools={"slow": spec})
    run = asyncio.ensure_future(h.run(GOAL))
    await until(lambda: runs, 30, "the slow tool's start")
    # task_2's end is saved in the run's own checkpoint (a write of the top graph, not of its task's subgraph)
    await until(lambda: top_level_write(h.checkpointer, "乙好"), 30, "task_2's result in the checkpoint")
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await h.send(None) == []
    assert runs == ["slow"]
    assert await h.outcome() == "✅ 计划执行完成！\n[task_1] 甲换了办法\n[task_2] 乙好"
    assert len(h.prompts_for(task_key("乙"))) == 1
    last = h.prompts_for(task_key("甲"))[-1]
    assert last[-1].content == "用户取消了此次工具调用"
    model.assert_consumed()
    h.check_prompts()


async def test_facts_are_extracted_from_the_users_goal_after_a_completed_plan_only(project, tmp_path):
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    background = Background()
    goal = "我们项目统一使用 pnpm，先统计依赖再写总结"
    light = ScriptedChatModel([ai('{"facts":[{"quote":"我们项目统一使用 pnpm"}]}')])
    model = ScriptedChatModel.by_content({task_key("统计依赖"): [ai("12 个")], task_key("写总结"): [ai("总结")],
                                          PLANNING: [plan_json(("a", "统计依赖", []), ("b", "写总结", ["a"]))]})
    h = PlanHarness(model, project, memory=memory, auto_extract=True, background=background, light_model=light)
    await h.run(goal)
    assert await background.drain(5)
    assert [e.content for e in memory.entries()] == ["我们项目统一使用 pnpm"]
    assert goal in light.seen[0][-1].content and "12 个" not in light.seen[0][-1].content

    failing = ScriptedChatModel.by_content({task_key("统计依赖"): [LangChainException("坏了")],
                                            PLANNING: [plan_json(("a", "统计依赖", []))]})
    again = PlanHarness(failing, project, memory=memory, auto_extract=True, background=background,
                        light_model=light, max_replans=0)
    await again.run("我们项目统一使用 yarn，先统计依赖再写总结")
    assert background.pending == 0 and light.calls == 1


async def test_a_task_may_fetch_the_urls_its_dependency_found_with_web_search(project, tmp_path):
    from tests.support.web_server import FakeWebServer
    from paicli.tools.base import WebOptions

    with FakeWebServer() as web:
        config = WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))
        model = ScriptedChatModel.by_content({
            task_key("搜文档"): [ai("", tool_call("web_search", {"query": "LangGraph"})), ai("找到了")],
            task_key("读文档"): [ai("", tool_call("web_fetch", {"url": web.url("/article")})), ai("读完了")],
            PLANNING: [plan_json(("s", "搜文档", []), ("r", "读文档", ["s"]))]})
        h = PlanHarness(model, project, web=config)
        await h.run("先搜索 LangGraph 文档再读它")
        reader = h.prompts_for(task_key("读文档"))
        assert f"依赖分支经 web_search 验证的 URL（可供当前任务抓取/导航）：\n- {web.url('/article')}" in reader[0][2].content
        assert "🌐 抓取: " in reader[-1][-1].content and "LangGraph 用**图**来编排智能体" in reader[-1][-1].content
        assert await h.outcome() == "✅ 计划执行完成！\n[task_2] 读完了"
