"""Issue 41, item 8: an MCP server that hangs at start-up ends with paicli, however paicli ends:
at a normal exit (the servers are closed, a starting one cancelled) and after ``kill -9`` (the
leash, ``tools/leash.py``: the kernel's PR_SET_PDEATHSIG)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.cli.conftest import RUN_TIMEOUT, run_timeout
from tests.support.openai_server import Reply
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # kill -9 of a real paicli

HANGS = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"


def hung_server(paicli_home, pid_file) -> None:
    entry = {"command": sys.executable, "args": ["-c", HANGS, str(pid_file)]}
    (paicli_home / "mcp.json").write_text(json.dumps({"mcpServers": {"hung": entry}}), encoding="utf-8")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def wait_for_pid(pid_file, proc=None) -> int:
    deadline = time.monotonic() + run_timeout() * 2
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the MCP server never started"
        assert proc is None or proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    return int(pid_file.read_text())


def gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_server_hanging_at_start_up_ends_when_paicli_exits(server, paicli_home, tmp_path, run_paicli):
    pid_file = tmp_path / "hung.pid"
    hung_server(paicli_home, pid_file)
    server.script = [Reply("好")]
    done = run_paicli("-p", "你好", env={"PAICLI_MCP_STARTUP_WAIT_SECONDS": "1"}, timeout=run_timeout(RUN_TIMEOUT * 2))
    assert done.returncode == 0, done.stderr
    pid = int(pid_file.read_text())
    assert gone(pid), "the hung MCP server outlived paicli"


def test_a_server_hanging_at_start_up_ends_when_paicli_is_killed_with_sigkill(server, paicli_env, project,
                                                                             paicli_home, tmp_path):
    pid_file = tmp_path / "hung.pid"
    hung_server(paicli_home, pid_file)
    server.script = [Reply("好")]
    env = paicli_env(server.base_url, PAICLI_MCP_STARTUP_WAIT_SECONDS="60")  # paicli waits for it
    proc = subprocess.Popen([sys.executable, "-m", "paicli", "-p", "你好"], cwd=project, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        pid = wait_for_pid(pid_file, proc)
        assert alive(pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=patience(10))
        assert gone(pid), "the hung MCP server outlived a paicli killed with SIGKILL"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
