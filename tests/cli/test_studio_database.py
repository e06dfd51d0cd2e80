"""``paicli studio`` with sessions and memory in PostgreSQL (issue 28's Studio gaps): the
database's sessions are registered as threads, and a Studio run keys project memory as the CLI
does (the origin remote), so what the CLI saved is retrieved there."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.cli.conftest import run_timeout
from tests.cli.test_studio_command import environment, interrupt_and_wait, start_studio, user
from tests.support.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.process  # the Studio server

SESSION = str(uuid.uuid4())


def test_studio_lists_the_database_sessions_and_its_runs_share_the_cli_project_memory(tmp_path, database_url):
    from langgraph_sdk import get_sync_client

    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "git@github.com:Org/App.git"], check=True)
    fake = FakeOpenAIServer([Reply("记住了。")]).start()
    env = environment(home, fake.base_url) | {"PAICLI_DATABASE_URL": database_url}

    def paicli(*args: str) -> None:
        done = subprocess.run([sys.executable, "-m", "paicli", *args], cwd=project, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=run_timeout())
        assert done.returncode == 0, done.stderr

    try:
        paicli("-p", "项目叫 alpha", "--session", SESSION)
        paicli("-p", "/save 项目使用 pnpm 管理依赖")
        proc, url = start_studio(project, env, tmp_path / "studio.log")
    except BaseException:
        fake.stop()
        raise
    try:
        started = (tmp_path / "studio.log").read_text(encoding="utf-8")
        assert "📚 已把 1 个 CLI 会话登记" in started
        assert "missing aprune" not in started  # issue 35: SessionSaver.aprune, LangGraph's contract
        client = get_sync_client(url=url, api_key=None)
        assert SESSION in [t["thread_id"] for t in client.threads.search(metadata={"graph_id": "react"}, limit=100)]
        state = client.threads.get_state(SESSION)
        assert [m["content"] for m in state["values"]["messages"]] == ["项目叫 alpha", "记住了。"]

        thread = client.threads.create()["thread_id"]
        fake.script.append(Reply("用 pnpm。"))
        start = len(fake.requests)
        client.runs.wait(thread, "react", input=user("依赖用什么管理？"))
        [request] = fake.requests[start:]
        assert any("项目使用 pnpm 管理依赖" in str(m["content"]) for m in request["messages"]), request["messages"]
    finally:
        interrupt_and_wait(proc)
        fake.stop()
