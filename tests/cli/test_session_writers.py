"""One writer per session, end to end (issue 10, item 3): two `paicli -p --session S` at once take
turns instead of hiding each other's answer; a killed holder does not block; a process that waits
too long gives up naming the holder; a saver outside the CLI (as `langgraph dev` runs it) is
refused while a CLI turn runs."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from paicli.memory.ledger.saver import JsonlLedgerSaver, SessionBusy
from tests.cli.test_sessions import SESSION, kill9, start_paicli, wait_for
from tests.support.openai_server import Hang, Reply

pytestmark = pytest.mark.process  # several paicli processes on one session

TURN = 2.5  # seconds each model reply takes, so the two processes' turns overlap


def answer_after(seconds: float):
    """A script item answering the request's last user message after a delay."""
    def answer(request: dict) -> Hang:
        return Hang(seconds, Reply(f"回答：{request['messages'][-1]['content']}"))
    return answer


def saved_messages(home) -> list:
    saver = JsonlLedgerSaver(home / "history" / "raw")
    return saver.get_tuple({"configurable": {"thread_id": SESSION}}).checkpoint["channel_values"]["messages"]


def test_two_processes_on_one_session_take_turns_and_keep_both_answers(project, paicli_env, paicli_home, server):
    server.script = [answer_after(TURN), answer_after(TURN)]
    env = paicli_env(server.base_url)
    procs = {prompt: start_paicli(project, env, "-p", prompt, "--session", SESSION) for prompt in ("问题甲", "问题乙")}
    outs = {prompt: proc.communicate(timeout=60) for prompt, proc in procs.items()}
    for prompt, (stdout, stderr) in outs.items():
        assert procs[prompt].returncode == 0, stderr.decode()
        assert stdout.decode().strip() == f"回答：{prompt}"

    first = server.requests[0]["messages"][-1]["content"]
    second = "问题乙" if first == "问题甲" else "问题甲"
    messages = saved_messages(paicli_home)
    assert [m.content for m in messages] == [first, f"回答：{first}", second, f"回答：{second}"]
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    assert [m["content"] for m in server.requests[1]["messages"][1:]] == [first, f"回答：{first}", second]
    waited = outs[second][1].decode()
    assert f"pid {procs[first].pid}" in waited and "等待" in waited  # the one-line notice naming the holder


def test_a_busy_session_is_refused_after_the_wait_naming_the_holder_then_kill_9_frees_it(
        project, paicli_env, paicli_home, server, run_paicli):
    server.script = [Hang(60, Reply("不会到达")), Reply("第二个进程的回答")]
    holder = start_paicli(project, paicli_env(server.base_url), "-p", "第一个问题", "--session", SESSION)
    try:
        wait_for(lambda: len(server.requests) == 1, "the first process's model request")
        refused = run_paicli("-p", "第二个问题", "--session", SESSION, env={"PAICLI_SESSION_WAIT": "1"})
        assert refused.returncode == 1 and f"pid {holder.pid}" in refused.stderr
        assert "Traceback" not in refused.stderr and len(server.requests) == 1
    finally:
        kill9(holder)

    done = run_paicli("-p", "第二个问题", "--session", SESSION, env={"PAICLI_SESSION_WAIT": "5"})
    assert done.returncode == 0 and done.stdout.strip() == "第二个进程的回答", done.stderr
    assert "等待" not in done.stderr  # a dead holder is not waited for
    sent = [m["content"] for m in server.requests[1]["messages"][1:]]
    assert sent == ["第一个问题", "第二个问题"]  # the killed turn's input was kept, nothing interleaved


def test_a_saver_outside_the_cli_is_refused_while_a_cli_turn_runs(project, paicli_env, paicli_home, server):
    server.script = [Hang(60, Reply("不会到达"))]
    holder = start_paicli(project, paicli_env(server.base_url), "-p", "第一个问题", "--session", SESSION)
    try:
        wait_for(lambda: len(server.requests) == 1, "the CLI's model request")
        studio = JsonlLedgerSaver(paicli_home / "history" / "raw")  # what make_checkpointer builds
        config = {"configurable": {"thread_id": SESSION}}
        latest = studio.get_tuple(config)
        with pytest.raises(SessionBusy, match=f"pid {holder.pid}"):
            checkpoint = {**latest.checkpoint, "id": "1f1ecf99-0000-6000-8000-000000000000"}
            studio.put(latest.config, checkpoint, {"source": "update", "step": 99}, {})
    finally:
        kill9(holder)
