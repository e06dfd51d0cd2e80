"""Tier 1, the offloader (reference d): files, the summary text, previews, bypass rules, d.5."""

import pytest

from tests.support import named
from paicli.memory.context.offload import (MAX_COMMAND_OUTPUT_CHARS, ToolResultOffloader, head_preview, line_count,
                            offload_summary, parse_threshold, safe_tool_name, tail_preview)


@pytest.fixture
def offloader(tmp_path):
    return ToolResultOffloader(tmp_path, "session-1")


def lines(count, width=50):
    return "".join(f"{i:05d} " + "y" * (width - 7) + "\n" for i in range(count))


def test_output_at_the_threshold_stays_in_context(offloader):
    assert offloader.offload_if_oversized("grep_code", {}, "x" * 32_000) == "x" * 32_000
    assert offloader.offload_if_oversized("grep_code", {}, None) is None


def test_oversized_output_goes_to_a_numbered_session_file(offloader, tmp_path):
    content = lines(1_000)
    text = offloader.offload_if_oversized("read_file", {"path": "big.log"}, content, ranged_read=True)
    path = tmp_path / ".paicli/tool-outputs/session-1/001-read_file.txt"
    assert path.read_text(encoding="utf-8") == content
    assert (tmp_path / ".paicli/tool-outputs/.gitignore").read_text() == "*\n"
    assert text.startswith(
        "[工具输出过大，完整内容已卸载到会话文件]\n"
        "tool: read_file\n"
        "原始大小: 50000 字符 / 1000 行\n"
        "文件: .paicli/tool-outputs/session-1/001-read_file.txt\n"
        '读回: read_file {"path":".paicli/tool-outputs/session-1/001-read_file.txt","offset":1,"limit":200}，按需调整 offset 分段读取\n'
        "--- 开头预览 ---\n"
    )
    head, tail = text.split("--- 开头预览 ---\n")[1].split("\n--- 结尾预览 ---\n")
    assert head == content[:1_999]  # 40 whole lines, cut at the last newline inside 2000
    assert tail == content[-800:][content[-800:].index("\n") + 1:]
    assert offloader.offload_if_oversized("grep_code", {}, content).count("002-grep_code.txt") == 2


def test_existing_gitignore_is_left_alone(tmp_path):
    (tmp_path / ".paicli/tool-outputs").mkdir(parents=True)
    (tmp_path / ".paicli/tool-outputs/.gitignore").write_text("custom\n")
    ToolResultOffloader(tmp_path, "s", threshold=2_000).offload("x", "z" * 3_000)
    assert (tmp_path / ".paicli/tool-outputs/.gitignore").read_text() == "custom\n"


def test_head_preview_cuts_at_a_newline_only_past_half():
    assert head_preview("a" * 1_500 + "\n" + "b" * 1_000, 2_000) == "a" * 1_500
    assert head_preview("a" * 900 + "\n" + "b" * 1_500, 2_000) == ("a" * 900 + "\n" + "b" * 1_500)[:2_000]
    assert head_preview("short", 2_000) == "short"


def test_tail_preview_starts_after_a_newline_only_in_the_first_half():
    assert tail_preview("x" * 1_000 + "a" * 300 + "\n" + "b" * 499) == "b" * 499
    late = "x" * 1_000 + "a" * 500 + "\n" + "b" * 299
    assert tail_preview(late) == late[-800:]


def test_no_tail_preview_unless_longer_than_head_plus_800():
    content = "x" * 2_800
    assert "--- 结尾预览 ---" not in offload_summary("t", content, "f.txt")
    assert "--- 结尾预览 ---" in offload_summary("t", content + "y", "f.txt")


def test_line_count_matches_java_lines():
    assert [line_count(s) for s in ("", "a", "a\n", "a\nb", "\n", "a\r\nb\rc\n")] == [0, 1, 1, 2, 1, 3]


@pytest.mark.parametrize("args", [
    {"path": "big.log", "offset": 1},
    {"path": "big.log", "limit": 200},
    '{"path": "big.log", "offset": 400, "limit": 200}',
    {"path": ".paicli/tool-outputs/s/001-x.txt"},
    {"path": "./.paicli/tool-outputs/s/001-x.txt"},
    {"path": ".\\.paicli\\tool-outputs\\s\\001-x.txt"},
])
def test_ranged_reads_and_reads_of_offloaded_files_are_never_offloaded(offloader, args):
    content = "x" * 50_000
    assert offloader.offload_if_oversized("read_file", args, content, ranged_read=True) == content


def test_absolute_path_into_the_output_directory_is_exempt_too(offloader, tmp_path):
    path = str(tmp_path / ".paicli/tool-outputs/session-1/001-x.txt")
    assert offloader.is_exempt({"path": path}, ranged_read=True)


@pytest.mark.parametrize("name, args", [
    ("read_file", {"path": "big.log"}),
    ("read_file", "not json"),
    ("read_file", {"path": "big.log", "offset": None}),
    ("grep_code", {"path": "x", "offset": 1}),
    ("execute_command", {"command": "cat .paicli/tool-outputs/s/001-x.txt"}),
])
def test_other_calls_are_eligible(offloader, name, args):
    assert not offloader.is_exempt(args, ranged_read=named.facts(name).ranged_read)


def test_tool_names_are_made_safe_for_file_names():
    assert safe_tool_name("mcp__srv/tool name") == "mcp__srv_tool_name"
    assert safe_tool_name("") == "tool"
    assert len(safe_tool_name("x" * 100)) == 60


def test_numbering_continues_across_processes_of_the_same_session(tmp_path):
    ToolResultOffloader(tmp_path, "s").offload("a", "x" * 40_000)
    text = ToolResultOffloader(tmp_path, "s").offload("b", "x" * 40_000)
    assert "文件: .paicli/tool-outputs/s/002-b.txt" in text


def test_disabled_offloader_and_threshold_settings(tmp_path):
    assert ToolResultOffloader(tmp_path, "s", enabled=False).offload_if_oversized("x", {}, "y" * 99_999) == "y" * 99_999
    assert ToolResultOffloader(tmp_path, "s", threshold=10).threshold == 2_000
    assert [parse_threshold(v) for v in ("5000", "10", "abc", None)] == [5_000, 2_000, 32_000, 32_000]


def test_write_failure_truncates_instead(tmp_path):
    root = tmp_path / "file-not-dir"
    root.write_text("")
    text = ToolResultOffloader(root, "s").offload("x", "y" * 40_000)
    assert text == "y" * 32_000 + "\n...(输出过大且写入会话文件失败，已截断，原始 40000 字符)"


def test_command_output_keeps_8000_head_and_800_tail(offloader, tmp_path):
    output = lines(2_400)  # 120,000 chars
    text = offloader.command_output(output)
    assert (tmp_path / ".paicli/tool-outputs/session-1/001-execute_command.txt").read_text() == output
    head, tail = text.split("--- 开头预览 ---\n")[1].split("\n--- 结尾预览 ---\n")
    assert len(head) <= MAX_COMMAND_OUTPUT_CHARS and output.startswith(head) and head.endswith("y")
    assert output.endswith(tail) and len(tail) < 800
    assert "原始大小: 120000 字符 / 2400 行" in text


def test_short_command_output_is_untouched_and_disabled_offload_truncates(tmp_path):
    assert ToolResultOffloader(tmp_path, "s").command_output("ok\n") == "ok\n"
    off = ToolResultOffloader(tmp_path, "s", enabled=False)
    assert off.command_output("z" * 9_000) == "z" * 8_000 + "\n...(输出已截断)"
    assert (off.capture_limit, ToolResultOffloader(tmp_path, "s").capture_limit) == (8_000, 2_000_000)
