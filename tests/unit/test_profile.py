"""ContextProfile (reference b): the threshold table, the ratio display, the clearing trigger."""

import pytest

from paicli.memory.context.profile import ContextProfile, clearing_trigger

# reference (b): window, summary trigger, /context %, clear trigger, session-memory start, memory budget
TABLE = [
    (8_000, 5_000, 62, 3_000, 3_000, 500),
    (32_000, 20_000, 62, 12_000, 12_000, 500),
    (128_000, 95_000, 74, 57_000, 57_000, 640),
    (200_000, 167_000, 83, 100_000, 100_200, 1_000),
    (256_000, 223_000, 87, 100_000, 133_800, 1_280),
    (1_000_000, 967_000, 96, 100_000, 580_200, 5_000),
]


@pytest.mark.parametrize("window, trigger, percent, clear, session, memory", TABLE)
def test_threshold_table(window, trigger, percent, clear, session, memory):
    profile = ContextProfile.from_window(window)
    assert profile.compression_trigger_tokens == trigger
    assert profile.compression_trigger_percent == percent
    assert profile.tool_result_clearing_trigger == clear
    assert profile.session_memory_precompute_tokens == session
    assert profile.memory_context_tokens == memory


def test_reserve_and_buffer_scale_down_for_small_windows():
    small, large = ContextProfile.from_window(32_000), ContextProfile.from_window(1_000_000)
    assert (small.summary_reserve_tokens, small.buffer_tokens) == (8_000, 4_000)
    assert (large.summary_reserve_tokens, large.buffer_tokens) == (20_000, 13_000)


def test_window_below_minimum_is_raised_and_missing_window_uses_default():
    assert ContextProfile.from_window(4_000).window == 8_000
    assert ContextProfile.from_window(None).compression_trigger_tokens == 95_000


def test_mcp_resource_index_needs_32k():
    assert not ContextProfile.from_window(31_999).mcp_resource_index_enabled
    assert ContextProfile.from_window(32_000).mcp_resource_index_enabled


def test_clearing_trigger_is_always_below_the_summary_trigger():
    for window in range(8_000, 2_000_000, 7_919):
        profile = ContextProfile.from_window(window)
        assert 0 < profile.tool_result_clearing_trigger < profile.compression_trigger_tokens


def test_clearing_override_is_capped_below_the_summary_trigger():
    assert clearing_trigger(95_000, override=20_000) == 20_000
    assert clearing_trigger(95_000, override=500_000) == 94_999
    assert clearing_trigger(0) == 0
    assert ContextProfile.from_window(128_000, clearing_override=30_000).tool_result_clearing_trigger == 30_000


def test_agent_token_budget_is_derived_but_unused():
    assert ContextProfile.from_window(128_000).agent_token_budget == 102_400


def test_summary_line():
    profile = ContextProfile.from_window(128_000, prompt_cache="automatic-prefix-cache")
    assert profile.summary() == "window: 128000 | 压缩阈值: 74% (95000 tokens) | MCP resource 索引: on | prompt cache: automatic-prefix-cache"
    assert "MCP resource 索引: off | prompt cache: none" in ContextProfile.from_window(8_000).summary()
