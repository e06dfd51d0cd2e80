"""The in-process runner (tests/support/inprocess.py) answers as the subprocess does, and one run
leaves nothing behind for the next."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest

from tests.support.inprocess import run_in_process
from tests.support.openai_server import ByContent, Hang, Reply
from tests.support.waiting import patience

CASES = [
    pytest.param(["-p", "你好"], {}, id="an answer"),
    pytest.param(["--mode", "nope", "-p", "x"], {}, id="a bad flag value (argparse exits 2)"),
    pytest.param(["-p", "你好"], {"PAICLI_API_KEY": None}, id="no key (exit 2, one line)"),
    pytest.param(["--continue", "-p", "x"], {}, id="--continue with -p"),
    pytest.param(["-p", "/definitely-not-a-command"], {}, id="an unknown slash command"),
]


@pytest.mark.process
@pytest.mark.parametrize("argv, env", CASES)
def test_in_process_and_subprocess_give_the_same_status_and_output(run_paicli, paicli_env, server, project, argv,
                                                                    env):
    server.script = [Reply("你好！"), Reply("你好！")]
    child = run_paicli(*argv, env=env)  # marked process: a real `python -m paicli`
    inside = run_in_process(argv, env=paicli_env(server.base_url, **env), cwd=project)
    assert (inside.returncode, inside.stdout) == (child.returncode, child.stdout)
    assert _untimed(inside.stderr) == _untimed(child.stderr)


def _untimed(text: str) -> list[str]:
    """stderr without the token line, whose elapsed time differs from run to run."""
    return [line for line in text.splitlines() if not line.startswith("📊 Token:")]


def test_a_run_leaves_the_process_as_it_found_it(run_paicli, server, project):
    root = logging.getLogger()
    before = (dict(os.environ), os.getcwd(), sys.argv, sys.stdin, sys.stdout, sys.stderr, list(root.handlers),
              root.level, warnings.showwarning, signal.getsignal(signal.SIGINT), set(threading.enumerate()))
    def reply(request: dict) -> Reply:  # the answer and the search-terms call may come in either order
        return Reply('["bundler"]') if "检索词" in request["messages"][0]["content"] else Reply("记住了。")

    server.script = [Reply("", tool_calls=[{"name": "save_memory", "arguments": {"fact": "前端构建用 Vite 5"}}]),
                     reply, reply]
    done = run_paicli("-p", "记住：前端构建用 Vite 5", "--debug", "--yes",
                      env={"PAICLI_MEMORY_SEARCH_TERMS_ENABLED": "true"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "记住了。\n"
    after = (dict(os.environ), os.getcwd(), sys.argv, sys.stdin, sys.stdout, sys.stderr, list(root.handlers),
             root.level, warnings.showwarning, signal.getsignal(signal.SIGINT), set(threading.enumerate()))
    assert after == before


def test_paicli_works_in_the_project_it_was_started_in_and_stdin_is_no_terminal(run_paicli, server, project):
    server.script = [Reply("", tool_calls=[{"name": "execute_command", "arguments": {
        "command": "pwd; test -t 0 || echo no-terminal"}}]), Reply("好")]
    done = run_paicli("-p", "看看环境", "--yes")
    assert done.returncode == 0, done.stderr
    result = server.requests[1]["messages"][-1]["content"]
    assert str(project.resolve()) in result and "no-terminal" in result


def test_a_run_past_its_timeout_is_interrupted_and_fails_as_subprocess_run_would(run_paicli, server):
    # by what each run asks: on a busy machine the first run may be stopped before it asks at all
    server.script = ByContent({"慢慢想": [Hang(60)], "你好": [Reply("好")]}).script()
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        run_paicli("-p", "慢慢想", timeout=2)  # stretched by the load, as every run's timeout
    assert time.monotonic() - started < patience(20)  # interrupted, not waited out (60 s)
    assert "已取消" in caught.value.stderr  # paicli saw a Ctrl-C, not a kill
    done = run_paicli("-p", "你好")  # and the next run in this process works
    assert (done.returncode, done.stdout) == (0, "好\n"), done.stderr
