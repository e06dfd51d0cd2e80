"""The pipeline (reference c.2): stop conditions, forced overflow mode, notices, ledger records."""

from langchain_core.messages import HumanMessage, ToolMessage

from paicli.memory.context.clearing import PLACEHOLDER_PREFIX, ToolResultClearer
from paicli.memory.context.compaction import (CLEARING_NOTICE, FULL_SUMMARY_NOTICE, Strategy, compact_if_needed, compact_now)
from paicli.memory.context.profile import ContextProfile
from paicli.memory.context.rounds import user_indices
from paicli.memory.context.summary import SummaryPrompts
from paicli.memory.tokens import Estimator
from tests.graphs.conftest import assert_paired
from tests.unit.compaction_helpers import FakeSummarizer, summary_prompts, tool_round

PROFILE = ContextProfile.from_window(8_000)  # summary trigger 5,000, clearing trigger 3,000
PROMPTS = summary_prompts()


def history(rounds, result_chars=4_000, question_chars=10):
    return [m for i in range(rounds) for m in tool_round(f"问题 {i} " + "q" * question_chars, [result_chars])]


async def run(messages, summarizer=None, **kwargs):
    return await compact_if_needed(messages, PROFILE, Estimator(), summarize=summarizer or FakeSummarizer(),
                                   prompts=PROMPTS, **kwargs)


async def test_nothing_fires_below_the_clearing_trigger():
    summarizer = FakeSummarizer()
    assert await run(history(2), summarizer) is None
    assert summarizer.prompts == []


async def test_clearing_alone_is_enough():
    messages = history(6)  # ~6,300 tokens: clearing 3 of 6 results gets under 5,000
    summarizer = FakeSummarizer()
    result = await run(messages, summarizer)
    assert result.strategy is Strategy.TOOL_RESULT_CLEARING and not result.compacted
    assert result.cleared_tool_results == 3 and summarizer.prompts == []
    assert [m.id for m in result.messages] == [m.id for m in messages]
    assert {m.id for m in result.replaced} == {m.id for m in result.messages if isinstance(m, ToolMessage)
                                              and m.content.startswith(PLACEHOLDER_PREFIX)}
    assert result.tokens_after < PROFILE.compression_trigger_tokens <= result.tokens_before
    assert result.notices() == ["🧹 上下文增长，已清理 3 条较早的工具结果（保留最近几条；需要时可重新调用工具或读回卸载文件）。"]
    assert result.record.ledger_event("react") == ("automatic:tool_result_clearing", {
        "beforeMessages": 24, "afterMessages": 24, "beforeTokens": result.tokens_before, "afterTokens": result.tokens_after})


async def test_summary_runs_when_clearing_is_not_enough():
    messages = history(5, result_chars=100, question_chars=6_000)  # the words themselves fill the window
    result = await run(messages)
    assert result.strategy is Strategy.FULL_SUMMARY and result.compacted and result.cleared_tool_results == 0
    assert result.notices() == [FULL_SUMMARY_NOTICE]
    assert len(user_indices(result.messages)) == 3 and result.replaced == []
    assert result.record.ledger_event("react")[0] == "automatic:full_summary"
    assert_paired(result.messages)


async def test_clearing_and_summary_both_announced():
    messages = history(6, result_chars=4_000, question_chars=4_000)
    result = await run(messages)
    assert result.strategy is Strategy.FULL_SUMMARY and result.cleared_tool_results > 0
    assert result.notices() == [CLEARING_NOTICE.format(n=result.cleared_tool_results), FULL_SUMMARY_NOTICE]
    assert result.record.ledger_event("plan") == ("automatic", {
        "beforeMessages": 24, "afterMessages": len(result.messages), "strategy": "full_summary",
        "clearedToolResults": result.cleared_tool_results})


async def test_failed_summary_keeps_the_clearing_and_proceeds():
    messages = history(6, result_chars=4_000, question_chars=4_000)
    result = await run(messages, FakeSummarizer(RuntimeError("down")))
    assert result.strategy is Strategy.TOOL_RESULT_CLEARING and len(result.messages) == len(messages)
    assert await run(history(5, result_chars=100, question_chars=6_000), FakeSummarizer(RuntimeError("x"))) is None


async def test_tool_schema_counts_toward_the_trigger():
    messages = history(4, result_chars=1_000)  # ~1,200 tokens: under the clearing trigger on its own
    schema = [{"type": "function", "function": {"name": "t", "description": "d" * 8_000, "parameters": {}}}]
    assert await run(messages, system="s" * 100) is None
    result = await run(messages, tools_schema=schema, system="s" * 100)
    assert result.strategy is Strategy.TOOL_RESULT_CLEARING and result.tokens_before > PROFILE.tool_result_clearing_trigger


async def test_forced_overflow_mode_ignores_triggers_and_falls_back_to_one_round():
    messages = history(3)  # far below every trigger, only 3 rounds
    result = await run(messages, force=True)
    assert result.strategy is Strategy.FULL_SUMMARY
    assert len(user_indices(result.messages)) == 1
    assert_paired(result.messages)


async def test_forced_mode_with_one_round_can_only_clear():
    messages = tool_round("唯一的问题", [4_000] * 5)
    result = await run(messages, force=True)
    assert result.strategy is Strategy.TOOL_RESULT_CLEARING and result.cleared_tool_results == 2


async def test_pipeline_errors_never_reach_the_model_call():
    def broken(_conversation):
        raise ValueError("template bug")
    prompts = SummaryPrompts(system="s", summary=broken, chunk=broken, merge=broken, repair=broken)
    messages = history(5, result_chars=100, question_chars=6_000)
    assert await compact_if_needed(messages, PROFILE, Estimator(), summarize=FakeSummarizer(), prompts=prompts) is None


async def test_disabled_clearer_goes_straight_to_the_summary():
    result = await run(history(6, question_chars=3_000), clearer=ToolResultClearer(enabled=False))
    assert result.strategy is Strategy.FULL_SUMMARY and result.cleared_tool_results == 0


async def test_manual_compact_keeps_one_round_and_is_recorded_as_manual():
    messages = history(3)
    result = await compact_now(messages, Estimator(), summarize=FakeSummarizer(), prompts=PROMPTS)
    assert result.strategy is Strategy.FULL_SUMMARY and len(user_indices(result.messages)) == 1
    assert result.record.ledger_event("react")[0] == "manual"
    assert await compact_now([HumanMessage("只有一轮")], Estimator(), summarize=FakeSummarizer(), prompts=PROMPTS) is None


async def test_a_failed_manual_summary_is_reported_not_taken_for_nothing_to_do():
    import pytest

    from paicli.memory.context.summary import SummaryError

    with pytest.raises(SummaryError):
        await compact_now(history(3), Estimator(), summarize=FakeSummarizer(default=""), prompts=PROMPTS)


async def test_plan_and_team_notices():
    result = await run(history(5, result_chars=100, question_chars=6_000))
    assert result.notices("plan") == ["📦 上下文接近窗口上限，已把早期对话压缩为摘要后继续。"]
    assert result.notices("team", agent="coder") == ["📦 [coder] 上下文接近窗口上限，已把早期对话压缩为摘要后继续。"]
    cleared = await run(history(6))
    assert cleared.notices("plan") == []
