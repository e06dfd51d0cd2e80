"""Issue 35 item 6: the server deployment without Docker, as docs/deploy.md gives it.

``langgraph dev --config deploy/langgraph.json`` (the file paicli ships; LangGraph's
``AsyncPostgresSaver`` and ``AsyncPostgresStore`` through ``paicli/studio/postgres.py``), its
settings in ``.env.server`` in the server's directory, against a real PostgreSQL and the fake
OpenAI server; the client is langgraph-sdk. The three graphs run: a ReAct thread saves a memory,
the server restarts, a second thread finds it (and so does the CLI on the same database); a Plan
run stops at its review, the server restarts, the SDK resumes it and it completes; a Team run
completes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.cli.conftest import RUN_TIMEOUT, clean_environ, closed_port
from tests.cli.test_studio import LANGGRAPH, ROOT, stop, wait_until_ok
from tests.cli.test_team_e2e import role, submitted_text
from tests.support.openai_server import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.process, pytest.mark.xdist_group("server-postgres")]

CONFIG = ROOT / "deploy" / "langgraph.json"
TEAM = {"summary": "一步", "steps": [{"id": "a", "description": "读 A", "dependencies": []}]}


def answer(request: dict) -> Reply:
    """The model, by what it is asked (runs come in the order the test starts them)."""
    text, who, last = submitted_text(request), role(request), request["messages"][-1]
    if who == "Planner":
        return Reply(json.dumps(TEAM, ensure_ascii=False))
    if who == "Reviewer":
        return Reply('{"approved": true, "summary": "好"}')
    if who == "Worker":
        return Reply("A 的结果")
    if "当前任务：统计项目文件" in text:  # a short goal is its own one-task plan: no planning call
        return Reply("3 个文件")
    if "记住：项目用 pnpm" in text:
        if last["role"] == "tool":
            return Reply("记下了。")
        return Reply("", tool_calls=[{"name": "save_memory", "arguments": {"fact": "项目使用 pnpm 管理依赖"}}])
    if "依赖用什么管理" in text:
        return Reply("用 pnpm。")
    return Reply("?")


class Server:
    """``langgraph dev`` in a directory of its own (``.env.server``, the in-memory runtime's
    ``.langgraph_api``), started and restarted on one port."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.port, self.proc = directory, closed_port(), None
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = directory / "server.log"

    def start(self) -> None:
        env = clean_environ() | {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true",
                                 "LANGSMITH_TRACING": "false"}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen([str(LANGGRAPH), "dev", "--config", str(CONFIG), "--host", "127.0.0.1",
                                          "--port", str(self.port), "--no-browser", "--no-reload"],
                                         cwd=self.directory, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT)
        wait_until_ok(self.url, self.proc, self.log)

    def restart(self) -> None:
        stop(self.proc)
        self.start()


@pytest.fixture
def served(tmp_path, database_url):
    if not LANGGRAPH.exists():
        pytest.fail(f"langgraph CLI not installed next to {sys.executable}")
    project, home, directory = tmp_path / "project", tmp_path / "home", tmp_path / "server"
    for folder in (project, home, directory):
        folder.mkdir()
    fake = FakeOpenAIServer([answer] * 20).start()
    (directory / ".env.server").write_text("\n".join([
        "PAICLI_API_KEY=test-key", f"PAICLI_BASE_URL={fake.base_url}", "PAICLI_MODEL=m",
        f"PAICLI_DATABASE_URL={database_url}", f"PAICLI_PROJECT_ROOT={project}", f"PAICLI_HOME={home}",
        "PAICLI_MEMORY_AUTO_EXTRACT_ENABLED=false", "PAICLI_MEMORY_SEARCH_TERMS_ENABLED=false", ""]), encoding="utf-8")
    server = Server(directory)
    try:
        server.start()
        yield server, fake, project, home
    finally:
        if server.proc is not None:
            stop(server.proc)
        fake.stop()


def user(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def test_the_three_graphs_on_langgraphs_async_postgres_saver_and_store_across_restarts(served, database_url):
    from langgraph_sdk import get_sync_client

    server, fake, project, home = served
    yes = {"approval": "yes"}
    client = get_sync_client(url=server.url, api_key=None)
    first = client.threads.create()["thread_id"]
    client.runs.wait(first, "react", input=user("记住：项目用 pnpm"), context=yes)
    assert client.threads.get_state(first)["values"]["messages"][-1]["content"] == "记下了。"

    server.restart()
    client = get_sync_client(url=server.url, api_key=None)
    assert client.threads.get_state(first)["values"]["messages"][-1]["content"] == "记下了。"  # from PostgreSQL
    second = client.threads.create()["thread_id"]
    start = len(fake.requests)
    client.runs.wait(second, "react", input=user("依赖用什么管理？"), context=yes)
    [asked] = fake.requests[start:]
    assert any("项目使用 pnpm 管理依赖" in str(m["content"]) for m in asked["messages"])  # retrieved from the store
    assert client.threads.get_state(second)["values"]["messages"][-1]["content"] == "用 pnpm。"

    plan = client.threads.create()["thread_id"]
    review = {"mode": "plan", "review": True, **yes}
    client.runs.wait(plan, "plan", input=user("统计项目文件"), context=review)
    [pending] = client.threads.get_state(plan)["interrupts"]
    assert pending["value"]["kind"] == "plan_review"
    server.restart()  # the review waits in the database
    client = get_sync_client(url=server.url, api_key=None)
    client.runs.wait(plan, "plan", command={"resume": {pending["id"]: "run"}}, context=review)
    assert client.threads.get_state(plan)["values"]["outcome"] == "✅ 计划执行完成！\n[task_1] 3 个文件"

    team = client.threads.create()["thread_id"]
    client.runs.wait(team, "team", input=user("读 A"), context={"mode": "team", **yes})
    assert client.threads.get_state(team)["values"]["status"] == "completed"

    with psycopg.connect(database_url) as conn:
        memories = conn.execute("SELECT prefix, value->>'content' FROM store").fetchall()
        threads = {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert [m[1] for m in memories] == ["项目使用 pnpm 管理依赖"] and memories[0][0].startswith("memories.project.")
    assert {first, second, plan, team} <= threads
    cli = subprocess.run([sys.executable, "-m", "paicli", "-p", "/memory list"], cwd=project, capture_output=True,
                         text=True, timeout=RUN_TIMEOUT * 3,
                         env=clean_environ() | {"PAICLI_HOME": str(home), "PAICLI_API_KEY": "k", "HOME": str(home),
                                                "PAICLI_DATABASE_URL": database_url})
    assert "项目使用 pnpm 管理依赖" in cli.stdout, cli.stdout + cli.stderr  # the CLI on the same database sees it
    log = server.log.read_text(encoding="utf-8", errors="replace")
    assert "Using custom checkpointer: AsyncPostgresSaver" in log and "missing aprune" not in log
