"""Cache-stable requests (issue 13), the pure parts: the turn's memory message and what it
leaves out, the prefix a cache can serve, cached tokens in each provider's spelling, and how
the token line and /context show them."""

from __future__ import annotations


from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from paicli.memory.context.prefix_cache import common_prefix, prefix_share, serialize
from paicli.memory.context.rounds import MEMORY_CONTEXT, NOT_SUMMARISED, internal, user_indices
from paicli.memory.context.turn_memory import memory_message, shown_lines
from paicli.run.cache_usage import cached_input_tokens, record_cache_read
from paicli.ui.context_view import ContextUsage, render_context
from paicli.run.result import RunResult, Usage
from paicli.ui.render import usage_line

BLOCK = "## 相关长期记忆\n\n以下记忆是线索而不是事实。\n\n- [FACT] 项目使用 Java 17（写入 2026-11-29）\n\n"


def test_the_memory_message_is_internal_never_a_round_and_never_summarised():
    message = memory_message(BLOCK)
    assert message.content == BLOCK.strip() and message.id
    assert user_indices([HumanMessage("问"), message]) == [0]
    assert MEMORY_CONTEXT in NOT_SUMMARISED
    assert memory_message("  \n") is None


def test_shown_lines_come_from_memory_messages_only():
    pasted = HumanMessage("- [FACT] 项目使用 Java 17（写入 2026-11-29）")  # the user's text does not count
    other = internal("- [FACT] 别的", "runaway_reminder")
    assert shown_lines([pasted, other, memory_message(BLOCK)]) == {"- [FACT] 项目使用 Java 17（写入 2026-11-29）"}


def test_the_stable_prefix_is_the_common_start_of_the_serialized_requests():
    first = [SystemMessage("系统"), HumanMessage("问"), memory_message(BLOCK)]
    second = [*first, AIMessage("答"), HumanMessage("再问")]
    share = prefix_share(first, second)
    assert share.stable == sum(map(len, serialize(first))) and 0.5 < share.share < 1
    assert prefix_share(second, second).share == 1.0
    changed = prefix_share(first, [SystemMessage("系统 2"), *first[1:]])
    assert changed.stable == len('{"content": "系统')  # up to the first differing character
    assert common_prefix(["abc", "de"], ["abc", "dx"]) == 4 and common_prefix([], ["a"]) == 0


def test_cached_tokens_are_read_in_every_providers_spelling():
    assert cached_input_tokens({"prompt_tokens_details": {"cached_tokens": 7}}) == 7  # OpenAI, GLM
    assert cached_input_tokens({"prompt_cache_hit_tokens": 8, "prompt_cache_miss_tokens": 2}) == 8  # DeepSeek
    assert cached_input_tokens({"cached_tokens": 9}) == 9  # Kimi
    assert cached_input_tokens({"prompt_tokens": 10}) is None and cached_input_tokens(None) is None
    assert cached_input_tokens({"cached_tokens": True}) is None


def test_a_cache_count_the_client_already_read_is_kept():
    message = AIMessage("", usage_metadata={"input_tokens": 10, "output_tokens": 1, "total_tokens": 11,
                                            "input_token_details": {"cache_read": 3}})
    record_cache_read(message, {"cached_tokens": 9})
    assert message.usage_metadata["input_token_details"]["cache_read"] == 3
    fresh = AIMessage("", usage_metadata={"input_tokens": 10, "output_tokens": 1, "total_tokens": 11})
    record_cache_read(fresh, {"cached_tokens": 9})
    assert fresh.usage_metadata["input_token_details"] == {"cache_read": 9}


def test_the_token_line_shows_cache_hits_only_when_there_are_some():
    turn = RunResult(seconds=1.25, usage=Usage(input=1000, output=50, cached=900, calls=1))
    assert usage_line(turn) == "📊 Token: 1000 输入 (缓存命中 900, 90%) / 50 输出 / 1050 合计 | ⏱ 1.2s"
    turn.usage = Usage(input=1000, output=50, calls=1)
    assert usage_line(turn) == "📊 Token: 1000 输入 / 50 输出 / 1050 合计 | ⏱ 1.2s"


def _usage(**overrides) -> ContextUsage:
    values = dict(model="m", provider="glm", window=100_000, system_tokens=10_000, memory_tokens=300,
                  schema_tokens=10_000, conversation_tokens=30_000, conversation_messages=9, summary_trigger=74_000,
                  summary_percent=74, clearing_trigger=None, clearing_keep=3, session_memory=False,
                  prompt_cache="glm")
    return ContextUsage(**{**values, **overrides})


def test_context_shows_the_stable_prefix_as_a_number_and_in_its_bar():
    lines = render_context(_usage(stable_share=0.8))
    assert lines[3] == "  [" + "█" * 12 + "▒" * 3 + "░" * 15 + "]  50%  (50.0k / 100.0k)"
    assert lines[4].startswith("  稳定前缀: 80%  (约 40.0k 与上一次请求相同")
    assert "  稳定前缀: 尚无上一次请求" in render_context(_usage())
