"""The guards that decide before the approval question (paicli issue 23, item 6)."""

from __future__ import annotations

from tests.support.named import guard_refusal


def test_each_guarded_tool_is_judged_by_its_own_guard(tmp_path):
    root = tmp_path.resolve()
    assert guard_refusal("execute_command", {"command": "sudo ls"}, root) == "禁止 sudo 提权"
    assert guard_refusal("write_file", {"path": "../x", "content": "1"}, root).startswith("路径越界: ../x")
    assert guard_refusal("edit_file", {"path": "~/.bashrc", "old_text": "a", "new_text": "b"}, root).startswith("路径越界")
    assert guard_refusal("read_file", {"path": "/etc/passwd"}, root).startswith("路径越界")
    assert guard_refusal("grep_code", {"pattern": "x", "path": ".."}, root).startswith("路径越界")
    assert guard_refusal("list_dir", {}, root) == "路径不能为空"


def test_calls_the_guards_let_through_are_left_to_approval(tmp_path):
    root = tmp_path.resolve()
    assert guard_refusal("execute_command", {"command": "echo hi"}, root) is None
    assert guard_refusal("execute_command", {"command": "  "}, root) is None  # the tool's own failure text
    assert guard_refusal("write_file", {"path": "src/new.py", "content": "1"}, root) is None
    assert guard_refusal("glob_files", {"pattern": "*.py"}, root) is None  # the path defaults to the root
    assert guard_refusal("web_fetch", {"url": "https://example.com"}, root) is None
    assert guard_refusal("mcp__x__y", "not a dict", root) is None


def test_a_write_reaching_a_protected_file_through_a_link_is_refused_before_asking(tmp_path):
    root = tmp_path.resolve()
    (root / "PAI.md").write_text("x", encoding="utf-8")
    (root / "notes.md").symlink_to(root / "PAI.md")
    assert "实际指向受保护路径 PAI.md" in guard_refusal("write_file", {"path": "notes.md", "content": "y"}, root)
