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
