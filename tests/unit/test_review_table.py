"""The REPL's drawing of a plan review (issue 26): a table from the payload's data, the hint
listing only what each key does, and the run's live status line."""

from __future__ import annotations

from rich.cells import cell_len

from paicli.ui.plan_review import HINT, table
from paicli.ui.render import RunLine

REQUEST = {"kind": "plan_review", "goal": "g", "summary": "读取并统计",
           "tasks": [{"id": "task_1", "description": "读取 alpha", "type": "FILE_READ", "dependencies": [], "batch": 1},
                     {"id": "task_2", "description": "统" * 100, "type": "COMMAND",
                      "dependencies": ["task_1"], "batch": 2}]}


def test_the_table_has_a_row_per_task_and_columns_that_line_up():
    lines = table(REQUEST)
    assert lines[0] == "📝 计划已生成：读取并统计（2 个任务，2 个批次）"
    header, first, second = lines[1:]
    assert first.split() == ["1", "task_1", "FILE_READ", "无", "读取", "alpha"]
    assert second.split()[:4] == ["2", "task_2", "COMMAND", "task_1"]
    column = cell_len(header[:header.index("描述")])
    assert cell_len(first[:first.index("读取")]) == column == cell_len(second[:second.index("统")])
    assert second.endswith("…") and "统" * 100 not in second
    assert "统" * 100 in table(REQUEST, None)[-1]  # Ctrl+O: whole


def test_the_hint_names_each_key_once_and_no_key_that_does_not_exist():
    assert HINT.split(" · ") == ["   Enter 执行", "Ctrl+O 展开完整描述", "ESC 取消", "输入补充要求后按 Enter 重新规划"]


def test_the_status_line_counts_seconds_running_units_and_calls():
    now = [100.0]
    line = RunLine(clock=lambda: now[0])
    line.running, line.calls, now[0] = ["task_1", "task_2"], 3, 112.4
    assert line.text() == "运行中: task_1, task_2 · 12s · 工具调用 3 次"


def test_descriptions_are_cut_by_cells_so_no_chinese_row_wraps():
    """Issue 41: 60 cells, not 60 characters (a Chinese character is two cells); within the
    terminal's width when it is known."""
    second = table(REQUEST)[-1]
    assert 59 <= cell_len(second[second.index("统"):]) <= 60
    for width in (120, 80):
        lines = table(REQUEST, width=width)
        assert all(cell_len(line) < width for line in lines), width
        assert lines[-1].endswith("…")
    long_title = {**REQUEST, "summary": "很长的计划摘要" * 20}
    assert cell_len(table(long_title, width=80)[0]) < 80
