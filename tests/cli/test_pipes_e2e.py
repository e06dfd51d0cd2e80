"""Issue 41, item 6: ``echo task | paicli`` runs the input as ``-p`` would (its output, its exit
codes, approvals refused without a terminal), and no REPL is ever drawn into a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from tests.cli.conftest import RUN_TIMEOUT, run_timeout
from tests.cli.test_oneshot import call, problem_lines
from tests.support.openai_server import ErrorReply, Reply

pytestmark = pytest.mark.process  # real pipes


def piped(project, env, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paicli"], cwd=project, env=env, input=text,
                          capture_output=True, text=True, encoding="utf-8", timeout=run_timeout(RUN_TIMEOUT * 2))


def test_echo_task_into_paicli_answers_and_exits_as_p_does(server, paicli_env, project, run_paicli):
    env = paicli_env(server.base_url)
    server.script = [Reply("你好，我在。"), Reply("你好，我在。")]
    done = piped(project, env, "你好\n")
    p = run_paicli("-p", "你好")
    assert (done.returncode, done.stdout) == (p.returncode, p.stdout) == (0, "你好，我在。\n")
    assert "❯" not in done.stdout + done.stderr and "\x1b[" not in done.stdout + done.stderr  # no REPL drawn
    assert server.requests[0]["messages"][-1]["content"] == server.requests[1]["messages"][-1]["content"] == "你好"
    server.script += [ErrorReply(401, {"error": {"message": "bad key"}})]
    failed = piped(project, env, "你好")
    assert failed.returncode == 1 and failed.stdout == ""
    assert problem_lines(failed.stderr)[-1].startswith("❌ 调用 LLM 失败: HTTP 401: bad key")


def test_a_piped_task_that_needs_an_approval_is_refused_as_p_refuses_it(server, paicli_env, project):
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "a.txt", "content": "x"})]), Reply("没写成")]
    done = piped(project, paicli_env(server.base_url, PAICLI_HITL="on"), "写 a.txt")
    assert done.returncode == 1 and done.stdout == "没写成\n"
    assert "无法询问审批，已拒绝: write_file a.txt" in done.stderr and not (project / "a.txt").exists()


def test_nothing_on_stdin_is_one_line_and_exit_2(server, paicli_env, project, paicli_home):
    done = piped(project, paicli_env(server.base_url), "  \n")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("paicli: 标准输入没有内容；") and len(done.stderr.splitlines()) == 1
    assert not server.requests and not (paicli_home / "history").exists()


def test_the_repl_is_not_drawn_into_a_piped_stdout(server, paicli_env, project):
    master, slave = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "paicli"], cwd=project, env=paicli_env(server.base_url),
                              stdin=slave, capture_output=True, text=True, encoding="utf-8", timeout=run_timeout(RUN_TIMEOUT * 2))
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "paicli: 标准输出不是终端，REPL 无法在这里显示；运行一轮请用 paicli -p \"任务\"\n"
