"""The status bar's fit to the terminal (issue 41): fields dropped by priority, mode and
context last, and an ellipsis saying some were."""

from __future__ import annotations

from rich.cells import cell_len

from paicli.ui.status_bar import fit

FIELDS = {"model": "deepseek-chat", "context": "上下文 12.3k/128.0k", "turn": "本轮 输入 120000 输出 50000 缓存 0",
          "cost": "¥0.6400", "level": "HITL default", "seconds": "12.3s", "mode": "模式 auto", "mcp": "MCP 1/2",
          "skills": "Skill 3/4"}


def test_a_bar_that_fits_is_whole_and_in_order():
    whole = " · ".join(FIELDS.values())
    assert fit(FIELDS, None) == whole == fit(FIELDS, cell_len(whole))


def test_fields_leave_by_priority_and_the_bar_says_so():
    assert fit(FIELDS, 120) == ("deepseek-chat · 上下文 12.3k/128.0k · 本轮 输入 120000 输出 50000 缓存 0 · ¥0.6400 · "
                                "HITL default · 模式 auto · …")
    assert fit(FIELDS, 79) == "deepseek-chat · 上下文 12.3k/128.0k · ¥0.6400 · HITL default · 模式 auto · …"
    assert fit(FIELDS, 40) == "上下文 12.3k/128.0k · 模式 auto · …"
    assert fit(FIELDS, 20) == "模式 auto · …"
    for width in range(5, 140):
        assert cell_len(fit(FIELDS, width)) <= width
