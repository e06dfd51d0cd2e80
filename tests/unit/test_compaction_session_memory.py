"""Tier 3b, session memory (reference g, Q6): background preparation, use when ready, fallbacks."""

from langchain_core.messages import AIMessage

from paicli.memory.context.compaction import SESSION_MEMORY_NOTICE, Strategy, compact_if_needed
from paicli.memory.context.profile import ContextProfile
from paicli.memory.context.rounds import user_indices
from paicli.memory.context.session_memory import SessionMemoryCompactor, enabled_from_text, preserve_from, render_delta
from paicli.memory.tokens import Estimator
from tests.graphs.conftest import assert_paired
from tests.unit.compaction_helpers import (FakeSummarizer, ai, call, result, session_prompts, skill_injection,
                                          summary_prompts, user)

PROFILE = ContextProfile.from_window(128_000)  # trigger 95,000; preparation from 57,000
TRIGGER = PROFILE.compression_trigger_tokens


def chat(rounds, chars=20_000):
    """Rounds of about 5,000 tokens each: a long question and a short answer."""
    return [m for i in range(rounds) for m in (user(f"问题 {i} " + "q" * chars), ai(f"回答 {i}"))]


def compactor(summarizer, enabled=True):
    return SessionMemoryCompactor(summarizer, session_prompts(), enabled=enabled)


async def prepared(messages, summarizer):
    memory = compactor(summarizer)
    estimator = Estimator()
    memory.prepare_if_needed("u1", messages, TRIGGER, estimator.estimate(messages), estimator.messages)
    await memory.wait("u1")
    return memory


def test_enabling_values():
    assert [enabled_from_text(v) for v in ("1", "TRUE", " yes ", "on", "0", "off", "", None)] == [
        True, True, True, True, False, False, False, False]


def test_preserve_from_keeps_10k_tokens_and_5_text_messages():
    messages = chat(12)
    users = user_indices(messages)
    assert preserve_from(messages, Estimator().messages) == users[-3]
    huge = chat(3, chars=200_000)  # one round alone is over 40,000 tokens
    assert preserve_from(huge, Estimator().messages) == user_indices(huge)[-1]


async def test_summary_is_prepared_in_the_background_then_used():
    messages = chat(12)  # ~60,000 tokens: between 57,000 and the trigger
    summarizer = FakeSummarizer()
    memory = await prepared(messages, summarizer)
    system, prompt = summarizer.prompts[0]
    assert system.content == "你是会话记忆整理器，只输出会话记忆本身，不调用工具。"
    assert "=== 已完成的会话片段 ===\nUSER: 问题 0" in prompt.content and "问题 9" not in prompt.content
    outcome = memory.compact_if_ready("u1", messages, TRIGGER, Estimator().estimate)
    assert outcome.messages[0].content.startswith("[会话记忆摘要]\n## 当前目标与成功条件")
    assert outcome.messages[2:] == messages[user_indices(messages)[-3]:]
    assert memory.compact_if_ready("u1", messages, TRIGGER, Estimator().estimate) is None  # used once


async def test_nothing_is_prepared_below_60_percent_or_when_disabled():
    summarizer = FakeSummarizer()
    for memory, messages in ((compactor(summarizer), chat(8)), (compactor(summarizer, enabled=False), chat(12))):
        memory.prepare_if_needed("u1", messages, TRIGGER, Estimator().estimate(messages), Estimator().messages)
        await memory.wait("u1")
    assert summarizer.prompts == []


async def test_summary_without_the_four_headings_is_not_used():
    memory = await prepared(chat(12), FakeSummarizer("1. 目标\n2. 决定"))
    assert memory.compact_if_ready("u1", chat(12), TRIGGER, Estimator().estimate) is None


async def test_ready_summary_whose_kept_message_is_gone_is_dropped():
    messages = chat(12)
    memory = await prepared(messages, FakeSummarizer())
    assert memory.compact_if_ready("u1", chat(12), TRIGGER, Estimator().estimate) is None
    assert memory.compact_if_ready("u1", messages, TRIGGER, Estimator().estimate) is None  # state was cleared


async def test_update_prompt_merges_the_new_delta_into_the_memory():
    messages = chat(12)
    summarizer = FakeSummarizer()
    memory = await prepared(messages, summarizer)
    longer = messages + chat(2)
    memory.prepare_if_needed("u1", longer, TRIGGER, 70_000, Estimator().messages)
    await memory.wait("u1")
    update = summarizer.user_prompts[1]
    assert update.startswith("请用新增会话片段更新现有会话记忆") and "=== 现有会话记忆 ===\n## 当前目标与成功条件" in update


def test_delta_rendering_skips_skill_bodies():
    c = call("grep_code", {"pattern": "x"})
    text = render_delta([user("找"), skill_injection("git"), AIMessage("", tool_calls=[c]), result(c, "hit")])
    assert text.startswith("USER: 找\n\nASSISTANT: \nTOOL_CALL grep_code: {\"pattern\": \"x\"}\n\nTOOL: ")
    assert "PAICLI_SKILL_INJECTION" not in text


async def test_pipeline_uses_the_ready_session_memory():
    memory = compactor(FakeSummarizer())
    estimator = Estimator()
    messages = chat(12)
    kwargs = dict(summarize=FakeSummarizer(), prompts=summary_prompts(), session_memory=memory, unit="u1")
    assert await compact_if_needed(messages, PROFILE, estimator, **kwargs) is None  # only prepares
    await memory.wait("u1")
    grown = messages + chat(8)  # now ~100,000 tokens, over the trigger
    result = await compact_if_needed(grown, PROFILE, estimator, **kwargs)
    assert result.strategy is Strategy.SESSION_MEMORY and result.notices() == [SESSION_MEMORY_NOTICE]
    assert result.record.ledger_event("react")[0] == "automatic:session_memory"
    assert result.tokens_after < TRIGGER
    assert_paired(result.messages)


async def test_pipeline_falls_back_to_the_full_summary_when_memory_is_not_ready():
    memory = compactor(FakeSummarizer())
    result = await compact_if_needed(chat(20), PROFILE, Estimator(), summarize=FakeSummarizer(),
                                     prompts=summary_prompts(), session_memory=memory, unit="u1")
    assert result.strategy is Strategy.FULL_SUMMARY
