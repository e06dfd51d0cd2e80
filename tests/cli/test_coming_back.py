"""Coming back to work (issue 26): ``paicli --continue`` alone finishes the project's newest
session's run after ``kill -9``; an unknown session exits 2; ``/resume`` marks the unfinished run
and names the mode; starting the REPL in the project says so in one line, and ``--continue`` on a
terminal stays in the REPL."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.cli.conftest import run_timeout
from tests.cli.test_plan_mode import DAG, GOAL, PLANNING, plan_pending_writes, plan_reply
from tests.support.inprocess import run_in_process
from tests.support.openai_server import ByContent, Hang, Reply
from tests.support.pty_terminal import PtyTerminal
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # kill -9 and the REPL on a pty


def paicli(project, env, *args) -> subprocess.CompletedProcess:
    """In process: only the run killed with -9 and the REPL need a process of their own."""
    return run_in_process(list(args), cwd=project, env=env, timeout=run_timeout())


def killed_mid_plan(project, env, server, home, session: str) -> ByContent:
    """A plan run killed with task_1 done and task_2 waiting for the model."""
    routes = ByContent({PLANNING: [plan_reply(DAG)], "当前任务：统计 alpha": [Reply("ALPHA=11")],
                        "当前任务：统计 beta": [Hang(60, Reply("too late"))]})
    server.script = server.script[:len(server.requests)] + routes.script()  # the server counts requests
    child = subprocess.Popen([sys.executable, "-m", "paicli", "--mode", "plan", "-p", GOAL, "--session", session],
                             cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + patience(30)
        while plan_pending_writes(home, session) != {"task_1"}:
            assert time.monotonic() < deadline and child.poll() is None, "task_1 never finished"
            time.sleep(0.1)
    finally:
        child.kill()
        child.wait()
    routes.routes.update({"当前任务：统计 beta": [Reply("BETA=22")], "当前任务：汇总两者": [Reply("合计 33")]})
    server.script = server.script[:len(server.requests)] + [routes.reply] * 2
    return routes


def test_continue_alone_finishes_the_projects_newest_session_after_kill_9(project, paicli_env, server, paicli_home):
    env = paicli_env(server.base_url)
    server.script = [Reply("早些时候的回答")]
    assert paicli(project, env, "-p", "你好", "--session", "s-older").returncode == 0
    killed_mid_plan(project, env, server, paicli_home, "s-newest")

    listed = paicli(project, env, "-p", "/resume")
    line = next(x for x in listed.stdout.splitlines() if "s-newest" in x)
    assert "· 0 条消息 · plan · ⏸️ plan 运行未完成 · " in line, line  # the conversation has no message yet
    assert "⏸️" not in next(x for x in listed.stdout.splitlines() if "s-older" in x)

    done = paicli(project, env, "--continue")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "✅ 计划执行完成！\n[task_3] 合计 33"
    listed = paicli(project, env, "-p", "/resume")
    line = next(x for x in listed.stdout.splitlines() if "s-newest" in x)
    assert "· 2 条消息 · plan · " in line and "⏸️" not in line
    picked = paicli(project, env, "-p", "/resume s-newest")
    assert picked.stdout.splitlines()[0] == "✅ 已恢复会话 s-newest（2 条消息）"


def test_continue_with_an_unknown_session_or_none_exits_2_with_one_line(project, paicli_env, server):
    env = paicli_env(server.base_url)
    unknown = paicli(project, env, "--session", "nonexist", "--continue")
    assert unknown.returncode == 2
    assert unknown.stderr.splitlines() == ["paicli: 未找到会话 nonexist：/resume 或 paicli -p /resume 列出已有的会话"]
    none = paicli(project, env, "--continue")
    assert none.returncode == 2 and len(none.stderr.splitlines()) == 1
    assert "这个项目还没有会话可以继续" in none.stderr
    assert server.requests == []


def test_the_repl_says_the_newest_session_is_unfinished_and_continue_stays_in_the_repl(
        project, paicli_env, server, paicli_home):
    env = paicli_env(server.base_url)
    killed_mid_plan(project, env, server, paicli_home, "s-away")
    tty_env = paicli_env(server.base_url, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    started = PtyTerminal([sys.executable, "-m", "paicli"], cwd=str(project), env=tty_env)
    try:
        started.expect("⏸️ 这个项目最近的会话 s-away 有未完成的 plan 运行，paicli --continue 继续执行。")
        started.type("/exit\r")
        started.proc.wait(timeout=run_timeout())
    finally:
        started.close()
    named = PtyTerminal([sys.executable, "-m", "paicli", "--session", "s-away"], cwd=str(project), env=tty_env)
    try:  # naming the session says it too (it used to say nothing until /continue was typed)
        named.expect("⏸️ 会话 s-away 有未完成的 plan 运行，输入 /continue 继续执行。")
        named.type("/exit\r")
        named.proc.wait(timeout=run_timeout())
    finally:
        named.close()
    back = PtyTerminal([sys.executable, "-m", "paicli", "--continue"], cwd=str(project), env=tty_env)
    try:
        back.expect("会话 s-away")
        back.expect("✅ 计划执行完成！", timeout=60)
        back.expect("[task_3] 合计 33")
        back.expect("❯")  # still in the REPL
        back.type("/exit\r")
        assert back.proc.wait(timeout=run_timeout()) == 0
    finally:
        back.close()


def test_ctrl_c_on_a_plan_run_under_p_names_the_session_and_how_to_continue_once(project, paicli_env, server):
    routes = ByContent({PLANNING: [plan_reply(DAG)], "当前任务：统计 alpha": [Hang(60, Reply("too late"))],
                        "当前任务：统计 beta": [Hang(60, Reply("too late"))]})
    server.script = routes.script()
    child = subprocess.Popen([sys.executable, "-m", "paicli", "--mode", "plan", "-p", GOAL, "--session", "s-int"],
                             cwd=project, env=paicli_env(server.base_url), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + patience(30)
        while "当前任务：统计 alpha" not in dict(routes.arrivals):  # the run works: its first task waits
            assert time.monotonic() < deadline and child.poll() is None, "the run never started its tasks"
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)  # Ctrl-C, as the terminal sends it
        out, err = child.communicate(timeout=run_timeout())
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert out == ""
    assert err.splitlines()[-2:] == ["⏹️ 已取消当前计划执行。",
                                     "⏸️ 运行未完成（会话 s-int）。继续：paicli --session s-int --continue"]
    assert "已取消当前任务" not in err  # the ReAct turn's words: no run was cancelled twice
