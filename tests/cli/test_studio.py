"""Smoke test of `langgraph dev` serving the `react` graph from langgraph.json, offline.

The server runs as a subprocess from the repository root (where langgraph.json is) with the
model pointed at a FakeOpenAIServer; the test drives it with langgraph_sdk like Studio does:
a run that stops on the approval interrupt, then a resume that approves the command.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import clean_environ, closed_port
from tests.support.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.process  # the Studio server

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
STARTUP_SECONDS = 60
STOP_SECONDS = 10


def wait_until_ok(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)  # bounded by the deadline: polling, not waiting for luck
    pytest.fail(f"langgraph dev not ready after {STARTUP_SECONDS}s:\n{log.read_text(errors='replace')[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_SECONDS)


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAIServer]:
    script = [
        Reply("", tool_calls=[{"name": "execute_command", "arguments": {"command": "echo studio > studio.txt"}}]),
        Reply("Created studio.txt."),
        Reply("It contains 'studio'."),
    ]
    with FakeOpenAIServer(script) as server:
        yield server


@pytest.fixture
def studio_url(fake_model: FakeOpenAIServer, paicli_home: Path, project: Path, tmp_path: Path) -> Iterator[str]:
    if not LANGGRAPH.exists():
        pytest.skip(f"langgraph CLI not installed next to {sys.executable}")
    port = closed_port()
    env = clean_environ()
    # The graph module reads settings when the server imports it, so they must be set here.
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false",
               PAICLI_API_KEY="test-key", PAICLI_BASE_URL=fake_model.base_url, PAICLI_MODEL="m",
               PAICLI_HOME=str(paicli_home),
               # as `paicli studio` does: a run's project is the server's, whatever its context says (issue 34)
               PAICLI_PROJECT_ROOT=str(project))
    log = tmp_path / "langgraph-dev.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--port", str(port)],
                                cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ok(url, proc, log)
        yield url
    finally:
        stop(proc)


def test_studio_run_stops_for_approval_and_runs_the_command_on_resume(studio_url, fake_model, project,
                                                                     paicli_home, run_paicli):
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_url)
    # Memory saved from the CLI is the server's store, and the graph injects it (langgraph.json).
    saved = run_paicli("-p", "/save --global studio 相关的文件都放在项目根目录", base_url=fake_model.base_url)
    assert saved.returncode == 0 and "💾 已保存到长期记忆(global)" in saved.stdout, saved.stderr
    [item] = client.store.search_items(["memories"], query="studio")["items"]
    assert item["namespace"] == ["memories", "global"] and item["value"]["content"] == "studio 相关的文件都放在项目根目录"
    thread = client.threads.create()
    context = {"project_root": str(project), "approval": "auto"}
    client.runs.wait(thread["thread_id"], "react", context=context,
                     input={"messages": [{"role": "user", "content": "create studio.txt"}]})
    # issue 13: the turn's memories follow its user message, outside the system prompt
    assert "studio 相关的文件都放在项目根目录" in fake_model.requests[0]["messages"][-1]["content"]

    assert client.threads.get(thread["thread_id"])["status"] == "interrupted"
    (pending,) = client.threads.get_state(thread["thread_id"])["interrupts"]
    assert pending["value"]["tool"] == "execute_command"
    assert not (project / "studio.txt").exists()

    client.runs.wait(thread["thread_id"], "react", context=context,
                     command={"resume": {pending["id"]: {"decision": "approve"}}})

    state = client.threads.get_state(thread["thread_id"])
    final = state["values"]["messages"][-1]
    assert final["type"] == "ai" and final["content"] == "Created studio.txt."
    assert (project / "studio.txt").read_text(encoding="utf-8") == "studio\n"
    assert "命令执行完成 (exit code: 0)" in fake_model.requests[1]["messages"][-1]["content"]

    # The server's checkpointer is the session ledger: the thread is a ledger file the CLI continues.
    ledger = paicli_home / "history" / "raw" / f"{thread['thread_id']}.jsonl"
    assert ledger.exists()
    done = run_paicli("-p", "what is in it?", "--session", thread["thread_id"], base_url=fake_model.base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It contains 'studio'."
    sent = [m["content"] for m in fake_model.requests[2]["messages"][1:]]
    assert sent[0] == "create studio.txt" and sent[-1] == "what is in it?" and "Created studio.txt." in sent
    fake_model.assert_consumed()

    # And the other way: an item put through the SDK's store API is a memory the CLI lists.
    client.store.put_item(["memories", "global"], "fact-sdk00001", {"content": "SDK 写入的记忆"})
    listed = run_paicli("-p", "/memory list", base_url=fake_model.base_url)
    assert "fact-sdk00001 [global]" in listed.stdout and "SDK 写入的记忆" in listed.stdout

    # issue 29: a Studio run takes its turn snapshot as a CLI turn does, under the same $PAICLI_HOME
    from paicli.tools.snapshots.store import TurnSnapshots, snapshot_home

    cli, studio = TurnSnapshots(snapshot_home(paicli_home)).project(project).entries()  # newest first
    assert (studio.mode, studio.input, studio.session) == ("react", "create studio.txt", thread["thread_id"])
    assert (cli.input, cli.session) == ("what is in it?", thread["thread_id"])
