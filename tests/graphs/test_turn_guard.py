"""Budgets and the runaway guard in the loop (reference s.3)."""

from __future__ import annotations

from paicli.memory.context.rounds import BUDGET_FINALIZATION, RUNAWAY_REMINDER, internal_kind
from paicli.nodes.core.state import BudgetOptions
from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


def same_call(n: int) -> list:
    return [ai("", tool_call("list_dir", {"path": "."})) for _ in range(n)]


async def test_three_identical_steps_get_one_reminder(project):
    model = ScriptedChatModel(same_call(4) + [ai("换个思路")])
    h = Harness(model, project)
    await h.turn("看看目录")
    kinds = [internal_kind(m) for m in await h.messages()]
    assert kinds.count(RUNAWAY_REMINDER) == 1
    assert "  ↻ 检测到重复的工具调用，已提醒模型换个思路" in h.notices
    reminded = model.seen[3][-1]
    assert reminded.content.startswith("[runaway guard] 同一个工具调用（参数完全相同）已经连续出现 3 次。")
    h.check_prompts()


async def test_five_identical_responses_stop_the_turn_with_a_partial_result(project):
    model = ScriptedChatModel(same_call(5) + [ai("已完成：列了目录；未完成：其余")])
    h = Harness(model, project)
    await h.turn("看看目录")
    final_request, tools = model.seen[-1], model.seen_tools[-1]
    assert not tools and final_request[-1].content.startswith("执行预算安全阀已触发：检测到连续 5 轮重复的工具调用")
    last = (await h.messages())[-1]
    assert last.content.startswith("⚠️ 部分完成（检测到连续 5 轮重复的工具调用，疑似死循环，将停止工具执行并收尾）\n\n已完成")
    assert "⚠️ 执行预算已触发，正在整理部分结果" in h.notices
    assert internal_kind((await h.messages())[-2]) == BUDGET_FINALIZATION
    model.assert_consumed()


async def test_a_new_turn_starts_with_a_fresh_budget(project):
    model = ScriptedChatModel(same_call(5) + [ai("部分结果"), ai("新一轮回答")])
    h = Harness(model, project)
    await h.turn("看看目录")
    await h.turn("换个问题")
    assert (await h.messages())[-1].content == "新一轮回答"


async def test_hard_iteration_limit(project):
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": f"f{i}"})) for i in range(2)] + [ai("收尾")])
    h = Harness(model, project, budget=BudgetOptions(hard_max_iterations=2))
    await h.turn("读文件")
    assert (await h.messages())[-1].content.startswith("⚠️ 部分完成（达到显式硬轮数上限（2），将停止工具执行并收尾）")
