"""The folded previews under a call (issue 26): a command's last lines with its exit code, an
edit's compact diff, each bounded with a count of what was left out."""

from __future__ import annotations

from paicli.previews import DIFF_LINES, LAST_LINES, command_preview, edit_preview


def test_a_commands_preview_is_its_exit_code_and_last_lines():
    output = "\n".join(f"line {i}" for i in range(1, 21))
    lines = command_preview(f"命令执行完成 (exit code: 2)\n{output}\n")
    assert lines[0] == "    ⎿ exit code 2 · 输出 20 行，前 15 行未显示"
    assert lines[1:] == [f"    │ line {i}" for i in range(16, 21)] and len(lines) == LAST_LINES + 1


def test_a_long_line_is_cut_and_a_result_that_is_not_a_command_has_no_preview():
    (head, line) = command_preview("命令执行完成 (exit code: 0)\n" + "x" * 500)
    assert head == "    ⎿ exit code 0 · 输出 1 行" and line.endswith("…") and len(line) < 200
    assert command_preview("命令执行超时（5秒），已强制终止") == []


def test_an_edit_shows_the_lines_it_removed_and_added():
    assert edit_preview("edit_file", {"path": "a.py", "old_text": "a - b\nkeep", "new_text": "a + b\nkeep"}) == [
        "    │ -a - b", "    │ +a + b", "    │  keep"]


def test_a_write_shows_its_first_lines_and_counts_the_rest():
    content = "".join(f"row {i}\n" for i in range(30))
    lines = edit_preview("write_file", {"path": "t.txt", "content": content})
    assert lines[:2] == ["    │ +row 0", "    │ +row 1"] and len(lines) == DIFF_LINES + 1
    assert lines[-1] == f"    │ …（其余 {30 - DIFF_LINES} 行未显示）"
    assert edit_preview("read_file", {"path": "t.txt"}) == []
