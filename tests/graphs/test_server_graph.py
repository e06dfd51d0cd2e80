"""The react graph as the LangGraph server runs it (``paicli studio``): failures fail the run,
a turn needs a user message, a thread is a session, and an approval answer that is not
understood asks again."""

from __future__ import annotations

import httpx
import openai
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from paicli.graphs.react import build_react
from paicli.nodes.core.run_errors import ModelCallFailed, NoUserMessage
from paicli.nodes.core.state import Deps, RunContext
from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

CONFIG = {"configurable": {"thread_id": "thread-7"}}


def server_graph(model: ScriptedChatModel):
    return build_react(Deps(model=model), raise_on_error=True)[0].compile(checkpointer=InMemorySaver())


async def test_a_provider_failure_fails_a_server_run_and_keeps_the_history(project):
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    boom = openai.APIStatusError("no", response=httpx.Response(401, request=request), body={"message": "bad key"})
    graph = server_graph(ScriptedChatModel([boom]))
    with pytest.raises(ModelCallFailed, match="❌ 调用 LLM 失败: HTTP 401: bad key"):
        await graph.ainvoke({"messages": [HumanMessage("hi")]}, CONFIG, context=RunContext(project_root=str(project)))
    assert [m.type for m in (await graph.aget_state(CONFIG)).values["messages"]] == ["human"]


@pytest.mark.parametrize("graph_input", [{"messages": []}, {"messages": [HumanMessage("   ")]}])
async def test_a_turn_without_a_user_message_never_reaches_the_model(project, graph_input):
    model = ScriptedChatModel([ai("never")])
    with pytest.raises(NoUserMessage, match="no user message"):
        await server_graph(model).ainvoke(graph_input, CONFIG, context=RunContext(project_root=str(project)))
    assert model.calls == 0


def test_the_input_schema_is_the_messages_only():
    graph = server_graph(ScriptedChatModel([]))
    assert list(graph.get_input_jsonschema()["properties"]) == ["messages"]


async def test_an_unnamed_session_is_the_thread(project):
    (project / "big.txt").write_text("x" * 40_000)
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "big.txt"})), ai("done")])
    await server_graph(model).ainvoke({"messages": [HumanMessage("read")]}, CONFIG,
                                      context={"project_root": str(project), "approval": "yes"})
    folders = [p.name for p in (project / ".paicli" / "tool-outputs").iterdir() if p.is_dir()]
    assert folders == ["thread-7"]


async def test_an_answer_that_is_not_understood_asks_again(project):
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "echo ok > ok.txt"})), ai("done")])
    h = Harness(model, project, approval="auto")
    [first] = await h.turn("make it")
    assert set(first.value["resume"]) == {"approve", "approve_all", "reject", "skip", "edit"}
    [again] = await h.resume("m")  # an edit without arguments: asked again, nothing ran
    assert '"args"' in again.value["problem"] and again.value["args"] == first.value["args"]
    assert not (project / "ok.txt").exists()
    assert await h.resume({"decision": "m", "args": {"command": "echo edited > ok.txt"}}) == []
    assert (project / "ok.txt").read_text() == "edited\n"
