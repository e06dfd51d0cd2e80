"""The approval prompt in the interactive REPL, driven on a real pseudo-terminal: Enter alone
does not run a 🔴 command, ``y`` does, and Ctrl-C cancels the turn as it does elsewhere."""

from __future__ import annotations


import pytest

from tests.support.openai_server import Reply
from tests.support.pty_terminal import ask
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # the REPL on a pty

COMMAND = {"name": "execute_command", "arguments": {"command": "echo hi > out.txt"}, "id": "call_run"}
MENU = "请选择操作：[y] 批准"


@pytest.fixture
def repl(start_repl):
    # PAICLI_HITL=on: every command asks the person (`default` sends it to the auto reviewer first)
    return start_repl(PAICLI_HITL="on")


def test_enter_does_not_approve_a_high_risk_command_and_ctrl_c_cancels_the_turn(repl, server, project):
    server.script = [Reply("", tool_calls=[COMMAND]), Reply("understood")]
    ask(repl, "run it")
    repl.expect(MENU)
    repl.expect(">")
    repl.type("\r")
    repl.expect("Enter 不会批准")
    assert not (project / "out.txt").exists()
    repl.expect(">")
    repl.type("\x03")  # Ctrl-C at the question
    repl.expect("已取消当前任务")
    ask(repl, "what happened?")
    repl.expect("understood")
    assert not (project / "out.txt").exists()
    tool = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool] == [("call_run", "用户取消了此次工具调用")]
    repl.expect("❯")
    repl.type("\x04")  # Ctrl-D at an empty prompt: exit
    repl.expect("会话已保存")
    assert repl.proc.wait(timeout=patience(30)) == 0


def test_y_approves_a_high_risk_command(repl, server, project):
    server.script = [Reply("", tool_calls=[COMMAND]), Reply("wrote it")]
    ask(repl, "run it")
    repl.expect(MENU)
    repl.expect(">")
    repl.type("y\r")
    repl.expect("wrote it")
    assert (project / "out.txt").read_text(encoding="utf-8") == "hi\n"
    server.assert_consumed()
