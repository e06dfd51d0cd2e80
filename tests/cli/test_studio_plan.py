"""``langgraph dev`` serves the ``plan`` graph: a run stops on the plan review (an interrupt
whose payload says what to resume with), the SDK resumes it, the tasks run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import clean_environ, closed_port
from tests.cli.test_studio import LANGGRAPH, ROOT, stop, wait_until_ok
from tests.support.openai_server import ByContent, FakeOpenAIServer, Reply

pytestmark = pytest.mark.process  # the Studio server

PLAN = {"summary": "两步", "tasks": [{"id": "a", "description": "数一数文件", "type": "ANALYSIS"},
                                   {"id": "b", "description": "写结论", "type": "ANALYSIS", "dependencies": ["a"]}]}


@pytest.fixture
def routes() -> ByContent:
    return ByContent({"当前任务：数一数文件": [Reply("3 个文件")], "当前任务：写结论": [Reply("结论：3 个")],
                      "请为以下任务制定执行计划": [Reply(json.dumps(PLAN, ensure_ascii=False))]})


@pytest.fixture
def plan_studio(routes: ByContent, paicli_home: Path, tmp_path: Path) -> Iterator[tuple[str, FakeOpenAIServer]]:
    if not LANGGRAPH.exists():
        pytest.skip(f"langgraph CLI not installed next to {sys.executable}")
    with FakeOpenAIServer(routes.script()) as model:
        port = closed_port()
        env = clean_environ()
        env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false",
                   PAICLI_API_KEY="test-key", PAICLI_BASE_URL=model.base_url, PAICLI_MODEL="m",
                   PAICLI_HOME=str(paicli_home))
        log = tmp_path / "langgraph-dev.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--port", str(port)],
                                    cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_ok(url, proc, log)
            yield url, model
        finally:
            stop(proc)


def test_studio_plan_run_stops_for_review_and_runs_the_plan_on_resume(plan_studio, routes, project):
    from langgraph_sdk import get_sync_client

    url, _model = plan_studio
    client = get_sync_client(url=url)
    thread = client.threads.create()
    context = {"project_root": str(project), "approval": "auto"}
    client.runs.wait(thread["thread_id"], "plan", context=context,
                     input={"messages": [{"role": "user", "content": "统计项目文件然后写结论"}]})
    (pending,) = client.threads.get_state(thread["thread_id"])["interrupts"]
    review = pending["value"]
    assert review["kind"] == "plan_review"
    assert [(t["id"], t["dependencies"], t["batch"]) for t in review["tasks"]] == [  # issue 26: data, not a drawing
        ("task_1", [], 1), ("task_2", ["task_1"], 2)]
    assert review["resume"]["execute"] == {"action": "execute"} and "re-plan" in review["meanings"]["supplement"]
    assert "用 'resume' 中的一个值恢复运行" in review["help"] and "Resume" in review["help"]

    client.runs.wait(thread["thread_id"], "plan", context=context, command={"resume": {pending["id"]: "run"}})
    values = client.threads.get_state(thread["thread_id"])["values"]
    assert values["outcome"] == "✅ 计划执行完成！\n[task_2] 结论：3 个"
    assert values["messages"][-1]["content"] == values["outcome"]
    assert routes.left() == {}
