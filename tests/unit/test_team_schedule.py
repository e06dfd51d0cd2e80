"""Team scheduling (reference s.5 Execution), texts and member inputs."""

from __future__ import annotations

from paicli.nodes import dag
from paicli.nodes.dag import next_wave
from paicli.nodes.team.inputs import Dependency, TeamInputs
from paicli.nodes.team.plan import TeamStep
from paicli.nodes.team.run import TEAM
from paicli.nodes.team.schedule import COMPLETED, FAILED, assign, left_pending, reviewer_name
from paicli.nodes.team.texts import wave_line, final_text, plan_lines, rejected


def step(id: str, *deps: str, description: str = "") -> TeamStep:
    return TeamStep(id=id, description=description or f"做 {id}", type="COMMAND", dependencies=list(deps))


STEPS = [step("step_1"), step("step_2"), step("step_3", "step_1", "step_2"), step("step_4")]


def ready(steps: list[TeamStep], records: dict) -> list[TeamStep]:
    """The ready steps as the Team scheduler reads them (``TEAM``: the status in ``records``)."""
    return dag.ready(steps, TEAM.status_of({"records": records}), pending=TEAM.pending, completed=TEAM.completed)


def test_ready_steps_are_pending_with_every_dependency_completed_in_plan_order():
    assert [s["id"] for s in ready(STEPS, {})] == ["step_1", "step_2", "step_4"]
    records = {"step_1": {"status": COMPLETED}, "step_2": {"status": FAILED}, "step_4": {"status": COMPLETED}}
    assert ready(STEPS, records) == []
    assert [s["id"] for s in left_pending(STEPS, records)] == ["step_3"]


def test_a_wave_takes_at_most_two_steps_on_workers_chosen_round_robin():
    wave, cursor = assign(next_wave(TEAM, {"plan": {"steps": STEPS}, "records": {}}), 0)
    assert [(s["id"], w) for s, w in wave] == [("step_1", "worker-1"), ("step_2", "worker-2")]
    wave, cursor = assign([STEPS[3]], cursor)
    assert [w for _, w in wave] == ["worker-1"] and cursor == 3
    wave, cursor = assign(STEPS[:2], cursor)
    assert [w for _, w in wave] == ["worker-2", "worker-1"]  # still two different workers
    assert assign([], cursor) == ([], cursor)


def test_a_parallel_step_gets_its_own_reviewer():
    assert reviewer_name("step_2", parallel=True) == "reviewer-step_2"
    assert reviewer_name("step_2", parallel=False) == "reviewer"


def test_plan_and_wave_lines_are_the_reference_texts():
    assert plan_lines(STEPS[2:3]) == ["📋 执行计划", "  ⏳ [step_3] 做 step_3 (依赖: step_1, step_2)"]
    assert plan_lines(STEPS[:1])[1] == "  ⏳ [step_1] 做 step_1 (依赖: 无)"
    assert wave_line(1, 2) == "⚡ 批次 #1：2 个独立步骤并行执行（最多 2 个并发 Worker）\n"
    assert rejected("step_1", "- 缺测试") == "⚠️ 步骤 [step_1] 审查未通过，正在重新执行...\n   反馈: - 缺测试\n"


def test_the_final_text_has_the_header_and_one_line_per_step():
    records = {s["id"]: {"status": COMPLETED, "result": "好"} for s in STEPS}
    records["step_4"]["result"] = "长" * 130
    text = final_text(STEPS, records)
    assert text.startswith("✅ 多 Agent 协作任务完成！\n\n📋 执行总结：\n[step_1] ✅ 做 step_1\n   结果：好\n")
    assert text.endswith("   结果：" + "长" * 120 + "...")
    records["step_2"] = {"status": FAILED, "result": "执行结果为空"}
    del records["step_3"]
    text = final_text(STEPS, records)
    assert text.startswith("⚠️ 多 Agent 协作任务未完全完成，存在失败步骤。\n\n")
    assert "[step_2] ❌ 做 step_2\n" in text and "[step_3] ⏳ 做 step_3\n" in text
    assert final_text(STEPS, {}).startswith("⚠️ 多 Agent 协作任务部分完成，仍有未执行步骤。\n\n")


def test_a_step_input_carries_the_goal_and_only_its_dependencies_results():
    inputs = TeamInputs()
    context = inputs.context("写个工具", [Dependency(STEPS[0], "结果一"), Dependency(STEPS[1], "x" * 600)],
                             ["https://example.com/a"])
    text = inputs.step(context, STEPS[2])
    assert text == ("总任务上下文：\n写个工具\n\n已完成的依赖步骤 [step_1]: 做 step_1\n结果：结果一\n\n"
                    "已完成的依赖步骤 [step_2]: 做 step_2\n结果：" + "x" * 500 + "...\n\n"
                    "依赖分支经 web_search 验证的 URL（可供当前步骤抓取/导航）：\n- https://example.com/a\n\n"
                    "当前任务：做 step_3")
    assert inputs.step(inputs.context("目标", [], []), STEPS[0]) == "总任务上下文：\n目标\n\n当前任务：做 step_1"


def test_retry_review_and_planning_inputs():
    inputs = TeamInputs()
    retry = inputs.retry("总任务上下文：\n目标", STEPS[0], "- 缺测试")
    assert retry == "总任务上下文：\n目标\n\n之前的执行结果被审查拒绝，原因：\n- 缺测试\n\n当前任务：做 step_1"
    assert inputs.review(STEPS[0], "输出 {{goal}}") == "原始任务：做 step_1\n\n执行结果：\n输出 {{goal}}"
    assert inputs.planning(" 目标 ") == "请为以下任务制定执行计划：\n目标"
