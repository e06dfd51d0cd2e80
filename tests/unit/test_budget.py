"""Budgets and the runaway guard (reference s.3) and their model-facing texts."""

import pytest

from paicli.nodes.guards.budget import (AgentBudget, BudgetStatus, Reminder, RunawayGuard, IterationResult, error_family,
                           partial_result)
from paicli.prompts import PromptSources, load_resource, render

READ = {"name": "read_file", "args": {"path": "a.py"}}


def test_five_identical_responses_are_stagnation_until_the_end_of_the_run():
    budget = AgentBudget()
    for _ in range(4):
        budget.record_response([READ])
    assert budget.check() is BudgetStatus.WITHIN_BUDGET
    budget.record_response([READ])
    assert budget.check() is BudgetStatus.STAGNATION_DETECTED
    budget.record_response([])
    assert budget.check() is BudgetStatus.STAGNATION_DETECTED


def test_a_final_answer_or_a_different_call_breaks_the_streak():
    budget = AgentBudget()
    for response in ([READ], [READ], [], [READ], [READ], [READ], [{"name": "read_file", "args": {"path": "b"}}], [READ]):
        budget.record_response(response)
    assert budget.check() is BudgetStatus.WITHIN_BUDGET


def test_token_budget_and_hard_limit_in_check_order():
    budget = AgentBudget(token_budget=1_000, hard_max_iterations=2)
    budget.record_usage(600, 300)
    budget.iteration = 2
    assert budget.check() is BudgetStatus.HARD_ITERATION_LIMIT
    budget.record_usage(100, 0)
    assert budget.check() is BudgetStatus.TOKEN_BUDGET_EXCEEDED
    assert budget.describe_exit(BudgetStatus.TOKEN_BUDGET_EXCEEDED) == "Token 预算已用尽（1000 / 1000），将停止工具执行并收尾"
    assert budget.describe_exit(BudgetStatus.HARD_ITERATION_LIMIT) == "达到显式硬轮数上限（2），将停止工具执行并收尾"
    assert AgentBudget().describe_exit(BudgetStatus.STAGNATION_DETECTED) == "检测到连续 5 轮重复的工具调用，疑似死循环，将停止工具执行并收尾"
    with pytest.raises(ValueError):
        AgentBudget(stagnation_window=1)


def test_partial_result_text():
    assert partial_result("原因", "已完成 A") == "⚠️ 部分完成（原因）\n\n已完成 A"
    assert partial_result("原因", "  ") == "⚠️ 部分完成（原因）"


def ok(args='{"path": "a"}', text="内容", name="read_file"):
    return IterationResult(name, args, text, True)


def failed(text, args='{"cmd": 1}', name="execute_command"):
    return IterationResult(name, args, text, False)


def test_three_identical_steps_remind_once():
    guard = RunawayGuard()
    assert guard.observe([ok()]) is None and guard.observe([ok('{ "path" : "a" }')]) is None
    assert guard.observe([ok()]) is Reminder.EXACT_ACTION_REPEAT
    assert guard.observe([ok()]) is None and guard.reminded


def test_canonical_arguments_ignore_key_order():
    guard = RunawayGuard()
    steps = ['{"a": 1, "b": {"y": 2, "x": 1}}', '{"b": {"x": 1, "y": 2}, "a": 1}', {"b": {"y": 2, "x": 1}, "a": 1}]
    assert [guard.observe([ok(s)]) for s in steps] == [None, None, Reminder.EXACT_ACTION_REPEAT]


def test_same_error_family_wins_over_exact_repeat():
    guard = RunawayGuard()
    texts = ["Connection timed out", "request TIMEOUT after 30s", "操作超时"]
    assert [guard.observe([failed(t)]) for t in texts] == [None, None, Reminder.SAME_ERROR_FAMILY]


def test_a_step_without_the_key_resets_its_streak_and_ignored_results_do_not_count():
    guard = RunawayGuard()
    for step in ([ok()], [ok()], [ok('{"path": "b"}')], [ok()], [ok()]):
        assert guard.observe(step) is None
    assert guard.observe([IterationResult("read_file", '{"path": "a"}', "🛡️ 策略拒绝: x", False, decided=True)]) is None
    assert guard.observe([ok(), ok(), ok()]) is Reminder.EXACT_ACTION_REPEAT  # 3 in one step crosses too
    with pytest.raises(ValueError):
        RunawayGuard(remind_after=2)


def test_error_families():
    assert error_family("HTTP 429 Too Many Requests") == "category:rate_limit"
    assert error_family("读取文件失败: 文件不存在") == "category:not_found"
    assert error_family("Something  ODD\nhappened") == "text:something odd happened"


def runtime(name, **variables):
    return render(load_resource(f"runtime/{name}.md", PromptSources()).strip(), variables)


def test_runtime_texts_match_the_reference():
    suffix = "\n这是只对本次任务有效的临时运行提醒，不是用户偏好，也不是长期规则；不要保存它，也不要把它总结进长期记忆、Skill 或其他持久化指令。"
    assert runtime("runaway-exact-repeat", count="3") == (
        "[runaway guard] 同一个工具调用（参数完全相同）已经连续出现 3 次。不要再原样重复。先看已经拿到的结果，然后换一个策略并说明预期会带来什么具体变化，"
        "或者说明卡在了哪里。重复本身不能说明任务已经完成，也不能说明任务无法完成。" + suffix)
    assert runtime("runaway-same-error", count="3").startswith("[runaway guard] 同一类工具错误已经连续出现 3 次。")
    assert runtime("budget-finalization", reason="R") == (
        "执行预算安全阀已触发：R。\n不要再调用任何工具。请只基于当前会话和已有工具结果，给出最佳努力的部分完成结果。\n"
        "必须明确说明：1. 已完成；2. 已验证；3. 未完成或阻塞；4. 建议下一步。\n不得声称任务已经全部完成。")


def test_only_typed_decisions_are_ignored_never_a_look_alike_text():
    """A failure that merely starts like a denial is the model's doing: its streak counts."""
    guard = RunawayGuard()
    look_alike = IterationResult("execute_command", '{"command": "x"}', "🛡️ printed by the command", False)
    assert [guard.observe([look_alike]) for _ in range(3)] == [None, None, Reminder.SAME_ERROR_FAMILY]
    decided = RunawayGuard()
    denial = IterationResult("execute_command", '{"command": "x"}', "🛡️ 工具调用已拒绝 [X]: y", False, decided=True)
    assert [decided.observe([denial]) for _ in range(4)] == [None, None, None, None]
