"""The model's reasoning shown (issue 39): streamed ``reasoning_content`` under ``🧠 思考过程``, on the
REPL's terminal and on stderr of ``paicli -p --verbose``, never on stdout; PAICLI_SHOW_THINKING."""

import pytest

from tests.support.openai_server import Reply
from tests.support.pty_terminal import ask

THOUGHT = "先看看用户要什么。\n第二步：检查文件。\n第三步：想好答案。\n第四步：回答。"


def test_verbose_shows_the_reasoning_folded_on_stderr_and_only_the_answer_on_stdout(server, run_paicli):
    server.script = [Reply("答案是 42", reasoning_content=THOUGHT)]
    done = run_paicli("-p", "问题", "--verbose")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "答案是 42\n"
    err = done.stderr.splitlines()
    assert "🧠 思考过程（已折叠，{} 字）".format(len(THOUGHT)) in err
    assert "  │ 先看看用户要什么。" in err and "  │ 第三步：想好答案。" in err
    assert "  │ 第四步：回答。" not in err and any("另有 1 行" in line for line in err)


def test_without_verbose_the_reasoning_is_nowhere(server, run_paicli):
    server.script = [Reply("答案", reasoning_content=THOUGHT)]
    done = run_paicli("-p", "问题")
    assert done.stdout == "答案\n" and "🧠" not in done.stderr and "先看看" not in done.stderr


@pytest.mark.parametrize("mode", ["on", "off"])
def test_show_thinking_on_streams_all_of_it_and_off_none(server, run_paicli, mode):
    server.script = [Reply("答案", reasoning_content=THOUGHT)]
    done = run_paicli("-p", "问题", "--verbose", env={"PAICLI_SHOW_THINKING": mode})
    assert done.stdout == "答案\n"
    if mode == "on":
        assert "🧠 思考过程" in done.stderr and THOUGHT in done.stderr
    else:
        assert "🧠" not in done.stderr


def test_a_bad_show_thinking_value_is_one_line(run_paicli):
    done = run_paicli("-p", "问题", env={"PAICLI_SHOW_THINKING": "loud"})
    assert done.returncode == 2 and "PAICLI_SHOW_THINKING 只能是 off、on、folded 之一" in done.stderr


def test_reasoning_is_model_output_and_reaches_the_terminal_inert(server, run_paicli):
    server.script = [Reply("答案", reasoning_content="想\x1b]52;c;aGk=\x07一下\x1b[2J")]
    done = run_paicli("-p", "问题", "--verbose", env={"PAICLI_SHOW_THINKING": "on"})
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "想␛]52;c;aGk=␇一下␛[2J" in done.stderr


def test_reasoning_before_a_tool_call_is_shown_and_replayed(server, run_paicli, project):
    (project / "a.txt").write_text("内容", encoding="utf-8")
    server.script = [Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": "a.txt"}}],
                           reasoning_content="要先读文件"),
                     Reply("读完了", reasoning_content="文件读到了")]
    done = run_paicli("-p", "读一下", "--verbose", "--yes")
    assert done.stdout == "读完了\n"
    assert done.stderr.index("要先读文件") < done.stderr.index("📖 读取 1 个文件") < done.stderr.index("文件读到了")
    replayed = [m for m in server.requests[1]["messages"] if m["role"] == "assistant"][0]
    assert replayed["reasoning_content"] == "要先读文件"


@pytest.mark.process
def test_the_repl_shows_the_reasoning_dimmed_above_the_answer(server, start_repl):
    server.script = [Reply("REPL 的答案", reasoning_content=THOUGHT)]
    terminal = start_repl()
    ask(terminal, "问题")
    seen = terminal.expect("REPL 的答案")
    assert "🧠 思考过程（已折叠" in seen and "│ 先看看用户要什么。" in seen
    terminal.expect("📊 Token")
    assert "\x1b[2m" in terminal.raw.decode("utf-8", "replace")  # dim
