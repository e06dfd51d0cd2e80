"""Sessions on the ledger, end to end: continuing across processes, surviving kill -9,
/resume and /clear, and a ledger a person can read."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import as_langchain, run_timeout
from tests.graphs.conftest import assert_paired
from tests.support.inprocess import run_in_process
from tests.support.openai_server import Hang, Reply
from tests.support.waiting import patience

SESSION = "session-test-1"
KILL_WAIT = 20  # seconds to reach the point where the child is killed


def ledger_lines(home: Path, session: str = SESSION) -> list[dict]:
    return [json.loads(line) for line in (home / "history" / "raw" / f"{session}.jsonl").read_text().splitlines()]


def start_paicli(project: Path, env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "paicli", *args], cwd=project, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + KILL_WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def kill9(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=patience(10))


@pytest.mark.process
def test_session_continues_in_a_new_process(run_paicli, server):
    server.script = [Reply("记住了，项目叫 alpha。"), Reply("项目叫 alpha。")]
    assert run_paicli("-p", "项目叫 alpha", "--session", SESSION).returncode == 0
    second = run_paicli("-p", "项目叫什么？", "--session", SESSION)
    assert second.returncode == 0 and second.stdout.strip() == "项目叫 alpha。"
    sent = [m["content"] for m in server.requests[1]["messages"][1:]]
    assert sent == ["项目叫 alpha", "记住了，项目叫 alpha。", "项目叫什么？"]


@pytest.mark.process
def test_kill_9_while_waiting_for_the_model_keeps_completed_steps(project, paicli_env, paicli_home, server):
    (project / "notes.txt").write_text("alpha beta")
    server.script = [Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}, "id": "c1"}]),
                     Hang(60)]
    proc = start_paicli(project, paicli_env(server.base_url), "-p", "读 notes.txt", "--session", SESSION)
    wait_for(lambda: len(server.requests) == 2, "the second model request")
    kill9(proc)

    server.script.append(Reply("继续：文件里是 alpha beta。"))
    done = run_in_process(["-p", "继续", "--session", SESSION], env=paicli_env(server.base_url), cwd=project,
                          timeout=run_timeout())  # only the killed run needs a process of its own
    assert done.returncode == 0, done.stderr
    resent = server.requests[2]["messages"]
    assert [m["role"] for m in resent[1:]] == ["user", "assistant", "tool", "user"]
    assert "alpha beta" in resent[3]["content"]
    assert_paired(as_langchain(resent)[1:])


@pytest.mark.process
def test_kill_9_while_a_tool_runs_leaves_a_conversation_the_provider_accepts(project, paicli_env, server):
    command = "touch started.txt; sleep 30; touch finished.txt"
    server.script = [Reply("", tool_calls=[{"name": "execute_command", "arguments": {"command": command}, "id": "c1"}])]
    proc = start_paicli(project, paicli_env(server.base_url), "-p", "跑一下", "--session", SESSION, "--yes")
    try:
        wait_for(lambda: (project / "started.txt").exists(), "the command to start")
        kill9(proc)
    finally:
        subprocess.run(["pkill", "-f", "sleep 30; touch finished.txt"], check=False)

    server.script.append(Reply("上次的命令被中断了。"))
    done = run_in_process(["-p", "刚才怎么样了？", "--session", SESSION], env=paicli_env(server.base_url), cwd=project,
                          timeout=run_timeout())  # only the killed run needs a process of its own
    assert done.returncode == 0, done.stderr
    resent = server.requests[1]["messages"]
    assert [m["role"] for m in resent[1:]] == ["user", "assistant", "tool", "user"]
    assert "用户取消了此次工具调用" in resent[3]["content"]
    assert_paired(as_langchain(resent)[1:])


def test_ledger_reads_as_the_conversation(run_paicli, server, paicli_home):
    server.script = [Reply("", tool_calls=[{"name": "list_dir", "arguments": {"path": "."}, "id": "c1"}]), Reply("空目录")]
    assert run_paicli("-p", "列一下目录", "--session", SESSION).returncode == 0
    lines = ledger_lines(paicli_home)
    assert all({"sequence", "event", "actor"} <= line.keys() for line in lines)
    assert [line["sequence"] for line in lines] == list(range(len(lines)))
    conversation = [line["event"] for line in lines if line["message"] is not None]
    assert conversation == ["user", "tool_call", "tool_result", "assistant"]
    assert list(lines[0]) == ["schemaVersion", "sessionId", "sequence", "timestamp", "event", "mode", "actor",
                              "source", "message", "metadata"]


def test_resume_lists_sessions_with_their_first_message(run_paicli, server):
    server.script = [Reply("好的")]
    assert run_paicli("-p", "给 parser 加单元测试", "--session", SESSION).returncode == 0
    listing = run_paicli("-p", "/resume")
    assert listing.returncode == 0
    assert SESSION in listing.stdout and "给 parser 加单元测试" in listing.stdout and "2 条消息" in listing.stdout
    missing = run_paicli("-p", "/resume nope")
    assert (missing.returncode, missing.stderr.strip()) == (1, "📭 未找到会话: nope")


def test_clear_in_a_new_session_writes_no_empty_session(run_paicli, server, paicli_home):
    # It wrote a ledger of one history_clear line: /resume listed "0 条消息 · （无标题）".
    cleared = run_paicli("-p", "/clear")
    assert cleared.returncode == 0, cleared.stderr
    assert "🗑️ 当前对话历史已清空，长期记忆保持不变" in cleared.stdout
    assert list((paicli_home / "history" / "raw").glob("*.jsonl")) == []
    assert "📭 还没有保存的会话。" in run_paicli("-p", "/resume").stdout


def test_clear_starts_an_empty_view_and_keeps_the_ledger(run_paicli, server, paicli_home):
    server.script = [Reply("第一轮回答"), Reply("第二轮回答")]
    assert run_paicli("-p", "第一轮", "--session", SESSION).returncode == 0
    before = ledger_lines(paicli_home)
    cleared = run_paicli("-p", "/clear", "--session", SESSION)
    assert "🗑️ 当前对话历史已清空，长期记忆保持不变" in cleared.stdout
    assert run_paicli("-p", "第二轮", "--session", SESSION).returncode == 0
    assert [m["content"] for m in server.requests[1]["messages"][1:]] == ["第二轮"]
    after = ledger_lines(paicli_home)
    assert after[: len(before)] == before
    clear_event = next(line for line in after if line["event"] == "history_clear")
    assert clear_event["metadata"] == {"discardedViewMessages": 2} and clear_event["source"] == "slash_clear"


def test_invalid_session_id_is_refused(run_paicli, server):
    done = run_paicli("-p", "hi", "--session", "../escape")
    assert done.returncode == 2 and "--session" in done.stderr
    assert server.requests == []


def test_a_torn_ledger_line_is_reported_in_one_line_and_the_session_goes_on(run_paicli, server, paicli_home):
    server.script = [Reply("第一轮"), Reply("第二轮")]
    assert run_paicli("-p", "一", "--session", SESSION).returncode == 0
    path = paicli_home / "history" / "raw" / f"{SESSION}.jsonl"
    with path.open("ab") as ledger:
        ledger.write(b'{"schemaVersion":1,"sessionId":"session-te')  # a crash mid-write
    done = run_paicli("-p", "二", "--session", SESSION)
    assert done.returncode == 0 and done.stdout.strip() == "第二轮"
    warning = [line for line in done.stderr.splitlines() if "无法读取的内容" in line]
    assert len(warning) == 1 and warning[0].startswith("⚠️ 会话 ledger ") and "Traceback" not in done.stderr
    assert [m["content"] for m in server.requests[1]["messages"][1:]] == ["一", "第一轮", "二"]
    unreadable = []
    for line in path.read_text().splitlines():
        try:
            json.loads(line)
        except ValueError:
            unreadable.append(line)
    assert unreadable == ['{"schemaVersion":1,"sessionId":"session-te']  # later appends start on a new line
