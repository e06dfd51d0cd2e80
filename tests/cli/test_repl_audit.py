"""The audit log is what happened (issue 26), on a real pseudo-terminal: an edited call is shown
before it runs and audited with the arguments that ran beside the model's; a call cancelled with
Ctrl-C, at the question or while it runs, is audited as cancelled."""

from __future__ import annotations

import json
import signal
import time

import pytest

from tests.support.openai_server import Reply
from tests.support.pty_terminal import ask

pytestmark = pytest.mark.process  # the REPL on a pty


def command(text: str, call_id: str) -> dict:
    return {"name": "execute_command", "arguments": {"command": text}, "id": call_id}


@pytest.fixture
def repl(start_repl):
    # PAICLI_HITL=on: every command is put to the person (the default level asks the reviewer)
    return start_repl(PAICLI_HITL="on")


def audit_lines(home) -> list[dict]:
    (path,) = (home / "audit").glob("audit-*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_an_edited_call_is_shown_and_audited_with_what_ran_beside_what_was_proposed(repl, server, project,
                                                                                   paicli_home):
    server.script = [Reply("", tool_calls=[command("echo proposed > p.txt", "call_m")]), Reply("done")]
    ask(repl, "write a file")
    repl.expect("[m] 修改参数")
    repl.expect(">")
    repl.type("m\r")
    repl.expect("请输入修改后的参数")
    repl.type('{"command": "echo edited > e.txt"}\r')
    repl.expect('已修改参数，将执行：{"command": "echo edited > e.txt"}')
    repl.expect("↳ echo edited > e.txt")  # the output preview names what ran
    repl.expect("done")
    assert (project / "e.txt").exists() and not (project / "p.txt").exists()
    (entry,) = audit_lines(paicli_home)
    assert json.loads(entry["args"]) == {"command": "echo edited > e.txt"}
    assert json.loads(entry["metadata"]["proposedArgs"]) == {"command": "echo proposed > p.txt"}
    assert entry["outcome"] == "allow" and entry["approver"] == "hitl"
    ask(repl, "/audit")
    repl.expect("command: echo edited > e.txt")
    repl.expect("模型原参数（已由用户修改 command）: command: echo proposed > p.txt")  # issue 41: which one


def test_ctrl_c_at_the_question_and_while_the_call_runs_are_audited_as_cancelled(repl, server, project,
                                                                                 paicli_home):
    server.script = [Reply("", tool_calls=[command("echo never > n.txt", "call_q")]),
                     Reply("", tool_calls=[command("sleep 30", "call_s")]), Reply("ok")]
    ask(repl, "first")
    repl.expect("[m] 修改参数")
    repl.expect(">")
    repl.type("\x03")  # Ctrl-C at the question
    repl.expect("已取消当前任务")
    ask(repl, "second")
    repl.expect("[m] 修改参数")
    repl.expect(">")
    repl.type("y\r")
    repl.expect("已批准")
    time.sleep(1.0)  # the command is running
    repl.proc.send_signal(signal.SIGINT)
    repl.expect("已取消当前任务")
    entries = audit_lines(paicli_home)
    assert [(json.loads(e["args"])["command"], e["outcome"]) for e in entries] == [
        ("echo never > n.txt", "cancelled"), ("sleep 30", "cancelled")]
    assert not (project / "n.txt").exists()
