"""One decision per tool call per step (issue 12): call_model decides, the router and the gate
read the records, execution runs them. Counted with a profiler hook on the real ``decide``."""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

from langchain_core.messages import AIMessage, ToolMessage

from paicli.nodes.core import policy
from tests.graphs.conftest import Harness, assert_paired
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


@contextmanager
def counting(function):
    """Count calls of ``function`` in every thread, without replacing it."""
    calls: list[str] = []
    code = function.__code__

    def profile(frame, event, _arg):
        if event == "call" and frame.f_code is code:
            call = frame.f_locals["call"]  # a Call (paicli.tools.call), or a tool_call dict
            calls.append(call["id"] if isinstance(call, dict) else call.id)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


def three_kinds_then_two(project):
    (project / "a.txt").write_text("AAA")
    return ScriptedChatModel([
        ai("", tool_call("read_file", {"path": "a.txt"}, id="r1"),
           tool_call("execute_command", {"command": "echo hi"}, id="x1"),
           tool_call("web_fetch", {"url": "https://evil.example/x"}, id="w1")),
        ai("", tool_call("write_file", {"path": "b.txt", "content": "B"}, id="f1"),
           tool_call("execute_command", {"command": "echo again"}, id="x2")),
        ai("完成"),
    ])


async def test_each_call_is_decided_once_even_across_an_approval(project):
    model = three_kinds_then_two(project)
    h = Harness(model, project, approval="auto")
    with counting(policy.decide) as decided:
        asked = await h.turn("读 a.txt 并运行 echo")
        assert [i.value["call_id"] for i in asked] == ["x1"]
        asked = await h.resume({"decision": "approve"})
        assert [i.value["call_id"] for i in asked] == ["x2"]
        assert await h.resume({"decision": "reject", "reason": "够了"}) == []
    # Five calls over two steps, one decision each: not again in the router, the gate, its
    # replays on resume, or execution.
    assert sorted(decided) == sorted(["r1", "x1", "w1", "f1", "x2"])
    model.assert_consumed()
    messages = await h.messages()
    assert_paired(messages)
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert "AAA" in results["r1"].content and "hi" in results["x1"].content
    assert "UNGROUNDED_URL" in results["w1"].content and results["w1"].status == "error"
    assert (project / "b.txt").read_text() == "B"
    assert "够了" in results["x2"].content and results["x2"].status == "error"


async def test_approve_all_in_a_step_covers_the_later_call_of_the_same_tool(project):
    model = ScriptedChatModel([
        ai("", tool_call("execute_command", {"command": "echo 1"}, id="x1"),
           tool_call("execute_command", {"command": "echo 2"}, id="x2")),
        ai("好"),
    ])
    h = Harness(model, project, approval="auto")
    with counting(policy.decide) as decided:
        assert len(await h.turn("运行两个 echo")) == 1
        assert await h.resume({"decision": "approve_all"}) == []
    assert sorted(decided) == ["x1", "x2"]
    results = [m for m in await h.messages() if isinstance(m, ToolMessage)]
    assert [r.status for r in results] == ["success", "success"]


async def test_a_call_without_a_recorded_decision_is_decided_by_the_gate(project):
    """A state edited by hand (Studio) may hold a call call_model never decided: the gate
    decides it then, and a question is still asked, never skipped."""
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "nope"}, id="r1")), ai("好")])
    h = Harness(model, project, approval="auto")
    await h.turn("hi")
    # A new assistant message with a risky call, written into the state directly.
    edited = AIMessage("", tool_calls=[tool_call("execute_command", {"command": "echo z"}, id="x9")])
    await h.graph.aupdate_state(h.config, {"messages": [edited], "decisions": {}}, as_node="call_model")
    asked = await h.send(None)
    assert [i.value["call_id"] for i in asked] == ["x9"]
