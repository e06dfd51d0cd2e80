"""Tier 2, the clearer (reference e): which results go, the placeholder, pairing untouched."""

from langchain_core.messages import ToolMessage

from paicli.memory.context.clearing import PLACEHOLDER_PREFIX, ToolResultClearer, parse_exclude_tools, placeholder
from tests.graphs.conftest import assert_paired
from paicli.tools.boundary import wrap
from tests.unit.compaction_helpers import ai, call, result, tool_round, user


def history(sizes, name="read_file"):
    return [m for i, size in enumerate(sizes) for m in tool_round(f"问题 {i}", [size], name)]


def test_clearing_keeps_last_three_tool_results():
    messages = history([1_000] * 5)
    cleared = ToolResultClearer().clear(messages)
    tools = [m for m in cleared.messages if isinstance(m, ToolMessage)]
    assert [m.content.startswith(PLACEHOLDER_PREFIX) for m in tools] == [True, True, False, False, False]
    assert cleared.cleared_count == 2


def test_placeholder_text_names_the_tool_and_original_size():
    messages = history([1_000] * 4)
    original = messages[2].content
    cleared = ToolResultClearer().clear(messages).messages[2]
    assert cleared.content == (
        f"[已清理的旧工具结果] 工具 read_file 的这次输出（约 {len(original)} 字符）已从上下文清理以节省空间。"
        "需要时重新调用该工具获取最新结果。"
    )


def test_placeholder_keeps_the_offload_file_path():
    text = "[工具输出过大，完整内容已卸载到会话文件]\ntool: grep_code\n文件: .paicli/tool-outputs/s/003-grep_code.txt\n" + "x" * 500
    assert placeholder("grep_code", text).endswith(
        "需要时重新调用该工具获取最新结果；完整输出仍保存在 .paicli/tool-outputs/s/003-grep_code.txt，"
        "可用 read_file 按 offset/limit 读回。"
    )


def test_clearing_keeps_ids_count_and_pairing():
    messages = history([1_000] * 6)
    cleared = ToolResultClearer().clear(messages)
    assert [m.id for m in cleared.messages] == [m.id for m in messages]
    assert all(a.tool_call_id == b.tool_call_id for a, b in zip(cleared.messages, messages) if isinstance(a, ToolMessage))
    assert [m.id for m in cleared.replaced] == [messages[2].id, messages[6].id, messages[10].id]
    assert_paired(cleared.messages)


def test_short_results_and_cleared_results_are_skipped_and_clearing_is_idempotent():
    wrapper = len(wrap("read_file", ""))
    messages = history([399 - wrapper, 1_000, 10, 10, 10])  # 399 chars with the boundary wrapper
    assert len(messages[2].content) == 399
    once = ToolResultClearer().clear(messages)
    assert once.cleared_count == 1 and once.messages[6].content.startswith(PLACEHOLDER_PREFIX)
    assert not once.messages[2].content.startswith(PLACEHOLDER_PREFIX)
    assert ToolResultClearer().clear(once.messages).cleared_count == 0


def test_excluded_tools_are_never_cleared():
    messages = history([1_000] * 4, name="load_skill")
    assert ToolResultClearer(exclude_tools=parse_exclude_tools(" Load_Skill , ,web_fetch")).clear(messages).cleared_count == 0
    assert parse_exclude_tools("a, B ,,c") == frozenset({"a", "b", "c"})


def test_tool_name_falls_back_to_the_wrapper_then_unknown():
    orphan_wrapped = ToolMessage('<tool_result tool="grep_code" trust="untrusted-data">\n' + "x" * 500, tool_call_id="gone")
    orphan_plain = ToolMessage("x" * 500, tool_call_id="gone2")
    messages = [orphan_wrapped, orphan_plain] + history([10] * 3)
    cleared = ToolResultClearer().clear(messages).messages
    assert "工具 grep_code 的" in cleared[0].content and "工具 unknown 的" in cleared[1].content


def test_clear_if_needed_respects_trigger_and_switch():
    messages = history([1_000] * 5)
    assert ToolResultClearer().clear_if_needed(messages, tokens=999, trigger=1_000) is None
    assert ToolResultClearer(enabled=False).clear_if_needed(messages, tokens=5_000, trigger=1_000) is None
    assert ToolResultClearer().clear_if_needed(messages, tokens=1_000, trigger=1_000).cleared_count == 2
    assert ToolResultClearer(keep_recent=0).clear(messages).cleared_count == 5


def test_parallel_call_results_are_counted_one_by_one():
    c1, c2, c3, c4 = (call() for _ in range(4))
    messages = [user(), ai("", c1, c2, c3, c4), *(result(c, "x" * 1_000) for c in (c1, c2, c3, c4))]
    cleared = ToolResultClearer().clear(messages)
    assert cleared.cleared_count == 1 and cleared.messages[2].content.startswith(PLACEHOLDER_PREFIX)
    assert_paired(cleared.messages)
