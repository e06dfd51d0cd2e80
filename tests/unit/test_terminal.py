"""The terminal only shows text: control characters from outside become visible stand-ins,
and markup or emoji codes in them stay literal, in every place the CLI prints them."""

import io

from langchain_core.messages import AIMessage, ToolMessage

from paicli.run.result import COMPLETED, FAILED, RunResult
from paicli.ui.render import Renderer
from paicli.ui.terminal import SafeConsole, visible

ESCAPES = "\x1b]52;c;cm0=\x07\x1b[2J\x1b]0;title\x07\x9b\x7f\u202e\x00\r"


def test_controls_become_visible_and_newlines_and_tabs_stay():
    assert visible(ESCAPES) == "␛]52;c;cm0=␇␛[2J␛]0;title␇\\x9b␡\\u202e␀␍"
    assert visible("a\tb\r\nc\n") == "a\tb\nc\n"
    assert visible("中文 ‏RTL mark stays‏ é") == "中文 ‏RTL mark stays‏ é"


def test_safe_console_prints_markup_and_emoji_codes_literally_with_styles_applied():
    out = io.StringIO()
    SafeConsole(file=out, force_terminal=True, color_system="standard").print("[red]x[/red] :smile:", style="bold")
    shown = out.getvalue()
    assert "[red]x[/red] :smile:" in shown and "😄" not in shown
    assert shown.startswith("\x1b[1m")  # paicli's own style still reaches the terminal


def test_renderer_neutralises_model_text_tool_lines_failures_and_approvals():
    out, err = io.StringIO(), io.StringIO()
    ui = Renderer(stream_answer=True, out=out, err=err)
    ui.token("answer " + ESCAPES)
    ui.model_message(AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "f" + ESCAPES}, "id": "1"}]))
    ui.tool_results([ToolMessage("读取文件失败: " + ESCAPES, tool_call_id="1", status="error")])
    ui.notice("notice " + ESCAPES)
    ui.finish(RunResult(status=FAILED, detail="error " + ESCAPES))
    for shown in (out.getvalue(), err.getvalue()):
        assert not any(c in shown for c in "\x1b\x07\x9b\x7f\u202e\x00"), repr(shown)
    assert "answer ␛]52;c;cm0=␇" in out.getvalue() and "error ␛]52" in err.getvalue()


def test_an_empty_answer_gets_a_notice():
    err = io.StringIO()
    Renderer(stream_answer=False, out=io.StringIO(), err=err).finish(
        RunResult(answer="  \n", status=COMPLETED))
    assert err.getvalue().strip() == "⚠️ 模型返回了空回复"


def _rendered(renderable, width: int) -> list[str]:
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False, force_terminal=True)
    console.print(renderable)
    return console.file.getvalue().splitlines()


def test_a_hanging_line_wraps_under_its_body_within_the_width():
    from rich.cells import cell_len

    from paicli.ui.terminal import Hanging

    line = Hanging("   /memory clear [--global] - ", "清空当前项目的项目记忆；带 --global 时同时清空全局记忆，先按作用域列出条数并确认")
    shown = _rendered(line, 60)
    assert len(shown) > 1 and shown[0].startswith("   /memory clear [--global] - 清空")
    indent = cell_len("   /memory clear [--global] - ")
    assert all(row.startswith(" " * indent) and row[indent] != " " for row in shown[1:])
    assert all(cell_len(row) <= 60 for row in shown)
    assert "".join(row.strip() for row in shown).endswith("条数并确认") and str(line).endswith("条数并确认")


def test_a_label_line_hangs_after_its_label():
    from paicli.ui.terminal import Hanging

    banner = Hanging.of("   可写: /home/u/project, /home/u/.cache/pip, /home/u/.npm（受保护路径除外）")
    assert (banner.head, str(banner)) == ("   可写: ", "   可写: /home/u/project, /home/u/.cache/pip, /home/u/.npm（受保护路径除外）")
    assert all(row.startswith(" " * 9) for row in _rendered(banner, 40)[1:])
    assert Hanging.of("no label here at all").head == ""
    wide = Hanging("x" * 30 + " - ", "y " * 20)
    assert _rendered(wide, 40)[1].startswith("    y")  # a head over half the width: four columns in
    assert Hanging("\x1b[2J", "\x1b]52;c;aGk=\x07").head == "␛[2J"  # the gate applies to both parts
    piped = io.StringIO()
    SafeConsole(file=piped, width=20, soft_wrap=True).print(banner)  # as -p's renderer prints
    assert piped.getvalue() == str(banner) + "\n"  # not a terminal: one line, unwrapped


def test_chinese_wraps_between_characters_and_a_closing_mark_never_starts_a_line():
    from rich.cells import cell_len

    from paicli.ui.terminal import wrap_cells

    text = "网络: 关闭（单条命令可申请 network: true，需要批准；联网方式：独立网络命名空间（slirp4netns，无本机回环与本机地址））"
    for width in range(16, 70):  # the narrowest a hanging body gets is half of 32 columns
        lines = wrap_cells(text, width)
        assert all(cell_len(line) <= width for line in lines), width
        assert not any(line[:1] in "，。；：、）" for line in lines[1:]), (width, lines)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert wrap_cells("network: true，需要批准", 40) == ["network: true，需要批准"]
    long_path = "/very/long/" * 6 + " 后面"
    assert [cell_len(line) for line in wrap_cells(long_path, 20)][:3] == [20, 20, 20]
    assert wrap_cells("", 10) == [""]


def test_a_head_wider_than_half_the_line_goes_on_four_columns_in():
    from rich.cells import cell_len

    from paicli.ui.terminal import Hanging, wrap_cells

    head = "   /mcp prompts <name> <提示词> [参数=值 …] - "
    shown = _rendered(Hanging(head, "取回 MCP 提示词（prompts/get）放入输入框，编辑后发送"), 60)
    assert shown[0].startswith(head.rstrip()) and cell_len(shown[0]) <= 60
    assert all(row.startswith(" " * 7) and row[7] != " " for row in shown[1:])
    assert wrap_cells("一二三四五", 10, first=0) == ["", "一二三四五"]
    assert wrap_cells("一二三四五", 10, first=4) == ["一二", "三四五"]
