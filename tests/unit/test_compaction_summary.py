"""Tier 3a, the full summary (reference f): rounds, rendering, chunks, headings, repair, aborts, rebuild."""

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from paicli.memory.context.rounds import (ACK_TEXT, COMPACTION_SUMMARY, IMAGE_TOOL_RESULT, RUNAWAY_REMINDER, internal,
                           internal_kind, rebuild, render, render_chunks, user_indices)
from paicli.memory.context.summary import (HEADINGS, Abort, choose_split, compact_full, has_required_headings)
from paicli.memory.tokens import Estimator
from tests.graphs.conftest import assert_paired
from tests.unit.compaction_helpers import (VALID_SUMMARY, FakeSummarizer, ai, call, result, skill_injection,
                                          summary_prompts, tool_round, user)

PROMPTS = summary_prompts()


def rounds(count, size=2_000):
    return [m for i in range(count) for m in tool_round(f"问题 {i}", [size, size])]


async def full(messages, summarizer, **kwargs):
    kwargs.setdefault("force", True)
    return await compact_full(messages, summarize=summarizer, prompts=PROMPTS, estimate=Estimator().estimate, **kwargs)


# --- rounds and splitting ------------------------------------------------------------------

def test_internal_messages_are_not_rounds_but_look_alikes_typed_by_the_user_are():
    messages = [user("a"), skill_injection("git"), internal("[runaway guard] 换个思路", RUNAWAY_REMINDER),
                HumanMessage("[runaway guard] 这是用户自己打的字"), internal("图片", IMAGE_TOOL_RESULT)]
    assert user_indices(messages) == [0, 3]
    assert internal_kind(messages[1]) == "skill_injection"


def test_split_keeps_three_real_rounds_despite_interleaved_internal_messages():
    messages = rounds(5)
    messages[-2:-2] = [skill_injection("a"), internal("[runaway guard] x", RUNAWAY_REMINDER)]
    real = user_indices(messages)
    assert choose_split(messages, 3) == real[-3]
    assert choose_split(messages, 1) == real[-1]
    assert choose_split(rounds(3), 3) is None


def test_split_never_cuts_a_call_from_its_result_in_a_damaged_history():
    c = call()
    messages = [*rounds(2), ai("", c), user("打断后的新问题"), result(c, "late"), *rounds(2)]
    real = user_indices(messages)
    split = choose_split(messages, 3)  # users[-3] would separate c from its late result
    assert split == real[-4] and split < messages.index(next(m for m in messages if getattr(m, "tool_calls", None) == [c]))


# --- rendering -----------------------------------------------------------------------------

def test_render_format():
    c = call("read_file", {"path": "a.py"}, cid="c9")
    image = HumanMessage([{"type": "text", "text": "看图"}, {"type": "image_url", "image_url": {"url": "https://x/a.png"}}])
    text = render([HumanMessage("hi"), AIMessage("ok", tool_calls=[c]), result(c, "body"), image])
    assert text == (
        "USER: hi\n\n"
        'ASSISTANT: ok\n  TOOL_CALL[c9] read_file: {"path": "a.py"}\n\n'
        'TOOL[c9]: <tool_result tool="read_file" trust="untrusted-data">\nbody\n</tool_result>\n\n'
        "USER: 看图\n  [图片附件：此文本摘要无法读取图像内容]\n\n"
    )


def test_a_59992_char_message_is_exactly_one_full_chunk():
    chunks = render_chunks([HumanMessage("x" * 59_992)])
    assert len(chunks) == 1 and len(chunks[0]) == 60_000 and chunks[0] == "USER: " + "x" * 59_992 + "\n\n"


def test_long_histories_split_into_chunks_without_loss():
    messages = [HumanMessage("y" * 70_000), HumanMessage("z" * 80_000)]
    chunks = render_chunks(messages)
    assert len(chunks) >= 3 and all(len(c) <= 60_000 for c in chunks)
    assert "".join(chunks) == render(messages)


# --- headings ------------------------------------------------------------------------------

def test_heading_check_needs_all_four_in_order():
    assert has_required_headings(VALID_SUMMARY)
    assert has_required_headings("前言\n  " + "  \n正文\n".join(HEADINGS) + "  \n")
    assert not has_required_headings("\n".join(reversed(HEADINGS)))
    assert not has_required_headings("\n".join(HEADINGS[:3]))
    assert not has_required_headings("\n".join(h + "（补充）" for h in HEADINGS))


# --- the summary call ----------------------------------------------------------------------

async def test_one_chunk_uses_the_summary_prompt_and_rebuilds():
    messages = rounds(5)
    summarizer = FakeSummarizer()
    outcome = await full(messages, summarizer, force=False, trigger=1)
    assert outcome.reason is None and outcome.tokens_after < outcome.tokens_before
    system, prompt = summarizer.prompts[0]
    assert isinstance(system, SystemMessage) and system.content == "你是一个对话摘要助手，只输出摘要本身，不输出元描述。"
    assert prompt.content.startswith("请把下面的对话历史整理成") and "USER: 问题 0" in prompt.content
    assert "=== 待压缩的对话 ===\nUSER: 问题 0" in prompt.content
    assert "USER: 问题 2" not in prompt.content  # kept rounds are not summarised


async def test_rebuild_shape():
    messages = rounds(5)
    outcome = await full(messages, FakeSummarizer())
    rebuilt = outcome.messages
    kept = messages[choose_split(messages, 3):]
    summary, ack = rebuilt[0], rebuilt[1]
    assert summary.content == "[已压缩的历史对话摘要]\n" + VALID_SUMMARY
    assert internal_kind(summary) == COMPACTION_SUMMARY
    assert isinstance(ack, AIMessage) and ack.content == ACK_TEXT and not ack.tool_calls
    assert rebuilt[2:] == kept and [m.id for m in rebuilt[2:]] == [m.id for m in kept]
    assert summary.id and ack.id and {summary.id, ack.id}.isdisjoint(m.id for m in messages)
    assert_paired(rebuilt)


async def test_skill_bodies_are_dropped_and_named_in_the_summary():
    messages = rounds(5)
    messages[3:3] = [skill_injection("git-flow", "pdf"), skill_injection("pdf")]
    summarizer = FakeSummarizer()
    outcome = await full(messages, summarizer)
    assert "的正文" not in summarizer.user_prompts[0] and "PAICLI_SKILL_INJECTION" not in summarizer.user_prompts[0]
    assert outcome.messages[0].content.endswith(
        "\n\n[Skill 正文已随压缩移出上下文：git-flow、pdf。还需要按这些 Skill 操作时，重新调用 load_skill 加载。]")


async def test_reminders_are_not_summarised_but_image_messages_are():
    messages = rounds(5)
    messages[3:3] = [internal("[runaway guard] 同一个工具调用", RUNAWAY_REMINDER), internal("截图说明", IMAGE_TOOL_RESULT)]
    summarizer = FakeSummarizer()
    await full(messages, summarizer)
    assert "runaway guard" not in summarizer.user_prompts[0] and "USER: 截图说明" in summarizer.user_prompts[0]


async def test_missing_headings_get_one_repair():
    summarizer = FakeSummarizer("只有正文，没有标题", VALID_SUMMARY)
    outcome = await full(rounds(5), summarizer)
    assert outcome.reason is None and len(summarizer.prompts) == 2
    assert summarizer.user_prompts[1].startswith("请仅整理下面已有的会话摘要") and "只有正文，没有标题" in summarizer.user_prompts[1]


async def test_failed_repair_aborts_and_keeps_the_history():
    messages = rounds(5)
    snapshot = list(messages)
    summarizer = FakeSummarizer("没有标题", "还是没有标题")
    outcome = await full(messages, summarizer)
    assert (outcome.messages, outcome.reason) == (None, Abort.NO_HEADINGS)
    assert messages == snapshot and len(summarizer.prompts) == 2


async def test_summary_that_does_not_shrink_the_history_aborts():
    bloated = VALID_SUMMARY + "\n" + "很长的摘要" * 20_000
    outcome = await full(rounds(5), FakeSummarizer(bloated))
    assert (outcome.messages, outcome.reason) == (None, Abort.NOT_SMALLER)
    assert outcome.tokens_after >= outcome.tokens_before


@pytest.mark.parametrize("reply, reason", [(RuntimeError("HTTP 500"), Abort.LLM_ERROR), ("  \n", Abort.EMPTY_SUMMARY)])
async def test_llm_errors_and_blank_summaries_abort(reply, reason):
    outcome = await full(rounds(5), FakeSummarizer(reply))
    assert (outcome.messages, outcome.reason) == (None, reason)


async def test_too_few_rounds_or_below_trigger_never_call_the_model():
    summarizer = FakeSummarizer()
    assert (await full(rounds(3), summarizer)).reason is Abort.TOO_FEW_ROUNDS
    assert (await full(rounds(5), summarizer, force=False, trigger=10**9)).reason is Abort.BELOW_TRIGGER
    assert (await full([], summarizer)).reason is Abort.EMPTY_HISTORY
    assert summarizer.prompts == []


async def test_manual_compaction_keeps_one_round():
    messages = rounds(3)
    outcome = await full(messages, FakeSummarizer(), retain_rounds=1)
    assert outcome.messages[2:] == messages[choose_split(messages, 1):]
    assert len(user_indices(outcome.messages)) == 1


# --- chunked summaries ---------------------------------------------------------------------

def long_history(chunks):
    """Old rounds rendering to about ``chunks`` x 60,000 chars, then 3 short kept rounds."""
    old = [m for i in range(chunks) for m in (user(f"旧问题 {i}"), ai("x" * 59_000))]
    return old + rounds(3, size=100)


async def test_several_chunks_are_summarised_then_merged_in_order():
    summarizer = FakeSummarizer(default=lambda prompt: "片段摘要" if "段。" in prompt[:30] else VALID_SUMMARY)
    outcome = await full(long_history(3), summarizer)
    prompts = summarizer.user_prompts
    chunk_prompts = [p for p in prompts if p.startswith("这是待压缩对话的第")]
    assert [p[:15] for p in chunk_prompts] == ["这是待压缩对话的第 1/3 段", "这是待压缩对话的第 2/3 段", "这是待压缩对话的第 3/3 段"]
    merge = prompts[-1]
    assert merge.startswith("按时间顺序合并") and merge.index("--- 片段 1 ---") < merge.index("--- 片段 2 ---") < merge.index("--- 片段 3 ---")
    assert outcome.reason is None


async def test_merge_runs_level_by_level_when_partials_do_not_fit_one_request():
    partial = "p" * 7_990
    summarizer = FakeSummarizer(default=lambda prompt: partial if not prompt.startswith("按时间顺序合并") else VALID_SUMMARY)
    outcome = await full(long_history(19), summarizer)
    merges = [p for p in summarizer.user_prompts if p.startswith("按时间顺序合并")]
    assert outcome.reason is None and len(merges) == 4  # 20 partials -> 3 groups -> 1


@pytest.mark.parametrize("partial", ["p" * 8_001, "   "])
async def test_oversized_or_blank_chunk_summary_aborts(partial):
    summarizer = FakeSummarizer(default=lambda prompt: partial if prompt.startswith("这是待压缩") else VALID_SUMMARY)
    assert (await full(long_history(2), summarizer)).reason is Abort.BAD_PARTIAL


def test_rebuild_keeps_a_leading_system_message():
    messages = [SystemMessage("sys"), *rounds(4)]
    rebuilt = rebuild(messages, choose_split(messages, 3), "摘要")
    assert rebuilt[0] is messages[0] and rebuilt[1].content == "摘要"


def test_prompt_files_carry_the_headings_and_markers():
    for prompt in (PROMPTS.summary("X"), PROMPTS.merge("X"), PROMPTS.repair("X")):
        assert has_required_headings(prompt)
    assert PROMPTS.summary("X").endswith("=== 待压缩的对话 ===\nX\n=== 待压缩的对话（结束）===")
    assert PROMPTS.chunk(2, 5, "X").startswith("这是待压缩对话的第 2/5 段。只记录本段出现的事实")
    assert PROMPTS.chunk(2, 5, "X").endswith("输出不超过 8000 字符的中文摘要。\n\n=== 对话片段 ===\nX\n=== 对话片段结束 ===")
    assert PROMPTS.merge("X").endswith("=== 按时间顺序排列的片段摘要 ===\nX\n=== 片段摘要结束 ===")
    assert "缺少证据的栏目写“未记录”，不要猜测。" in PROMPTS.repair("X")


def test_session_memory_prompts_ask_for_the_four_headings():
    from tests.unit.compaction_helpers import session_prompts
    prompts = session_prompts()
    assert has_required_headings(prompts.initial("D")) and has_required_headings(prompts.update("M", "D"))
    assert prompts.update("M", "D").endswith("=== 现有会话记忆 ===\nM\n=== 新增会话片段 ===\nD\n=== 新增片段结束 ===")
