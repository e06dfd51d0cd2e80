"""The folded previews under a call (issue 26): a command's last lines with its exit code, an
edit's compact diff, each bounded with a count of what was left out."""

from __future__ import annotations

from paicli.ui.previews import DIFF_LINES, LAST_LINES, command_preview, edit_preview


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
    assert edit_preview("edit", {"path": "a.py", "old_text": "a - b\nkeep", "new_text": "a + b\nkeep"}) == [
        "    │ -a - b", "    │ +a + b", "    │  keep"]


def test_a_write_shows_its_first_lines_and_counts_the_rest():
    content = "".join(f"row {i}\n" for i in range(30))
    lines = edit_preview("write", {"path": "t.txt", "content": content})
    assert lines[:2] == ["    │ +row 0", "    │ +row 1"] and len(lines) == DIFF_LINES + 1
    assert lines[-1] == f"    │ …（其余 {30 - DIFF_LINES} 行未显示）"
    assert edit_preview(None, {"path": "t.txt"}) == []


def test_an_overwrite_shows_its_diff_against_what_was_there_and_counts_what_is_left_out(tmp_path):
    """Issue 41, item 2: the tool's own change record, not the new content as + lines."""
    from paicli.tools.base import ToolContext
    from paicli.tools.builtin.files import write_file

    (tmp_path / "t.txt").write_text("".join(f"row {i}\n" for i in range(30)), encoding="utf-8")
    result = write_file({"path": "t.txt", "content": "".join(f"row {i}\n" for i in range(30) if i != 3)
                         .replace("row 20", "ROW 20")}, ToolContext(root=tmp_path))
    lines = edit_preview("write", {"path": "t.txt"}, result.artifact)
    assert lines[0].startswith("    ⎿ +1 -2 行，") and "字节，sha256 " in lines[0]
    assert lines[1:5] == ["    │ @@ -3,3 +3,2 @@", "    │  row 2", "    │ -row 3", "    │  row 4"]
    assert lines[-1] == "    │ …（其余 1 行未显示）" and len(lines) == DIFF_LINES + 2


def test_the_question_for_a_write_over_a_file_shows_what_will_be_lost(tmp_path):
    from paicli.ui.approve import describe
    from paicli.tools.builtin.writing import change_preview

    (tmp_path / "PAI.md").write_text("# 项目说明\n用 pytest 测试\n", encoding="utf-8")
    args = {"path": "PAI.md", "content": "# 项目说明\n用 unittest 测试\n" + "x" * 300}
    change = change_preview("write", args, tmp_path)
    assert (tmp_path / "PAI.md").read_text(encoding="utf-8") == "# 项目说明\n用 pytest 测试\n"  # nothing written
    lines = describe({"tool": "write_file", "args": args, "danger": "🔴 高危", "risk": "r", "change": change})
    at = lines.index("将改动（与现有文件比较）:")
    assert lines[at + 1].startswith("  ⎿ +2 -1 行，") and "  │ -用 pytest 测试" in lines[at:]
    assert "  │ +用 unittest 测试" in lines[at:]
    assert any("…（共 321 字符，改动见下）" in line for line in lines[:at])  # the content is not shown twice
    assert change_preview("write", {"path": "new.md", "content": "a\n"}, tmp_path)["new_file"]
    assert change_preview(None, {"path": "PAI.md"}, tmp_path) is None
    assert change_preview("edit", {"path": "PAI.md", "old_text": "nope", "new_text": "x"}, tmp_path) is None
