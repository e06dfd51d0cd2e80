"""create_project in the loop (reference t, v.1): it runs at the default level, asks under
``/hitl on`` like write_file, and is audited."""

from __future__ import annotations

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


async def test_create_project_runs_at_the_default_level(project):
    model = ScriptedChatModel([ai("", tool_call("create_project", {"name": "svc", "type": "java"})), ai("建好了")])
    h = Harness(model, project, approval="auto")
    assert await h.turn("建一个 java 项目") == []
    assert (project / "svc" / "pom.xml").is_file() and (project / "svc" / "src" / "main" / "java").is_dir()
    assert "项目已创建: svc (类型: java)" in model.seen[-1][-1].content
    model.assert_consumed()


async def test_create_project_asks_under_hitl_on_and_a_rejection_creates_nothing(project):
    model = ScriptedChatModel([ai("", tool_call("create_project", {"name": "web", "type": "node"})), ai("好的")])
    h = Harness(model, project, approval="ask")
    [question] = await h.turn("建一个 node 项目")
    assert question.value["tool"] == "create_project"
    assert await h.resume({"decision": "reject", "reason": "先别建"}) == []
    assert not (project / "web").exists()
