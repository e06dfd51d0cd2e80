"""The auto reviewer inside the agent loop (reference v.1, v.2): decided in the gate before any
question, saved before a question is asked (a resume never asks the reviewer again), three
denials in a turn go to the person, a new turn starts counting afresh."""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.policy import auto_review
from tests.support.named import decide
from paicli.tools.policy.auto_review import AutoReviewer
from paicli.prompts import PromptSources, load_resource


def reviewer(*replies: str) -> tuple[AutoReviewer, ScriptedChatModel]:
    model = ScriptedChatModel([AIMessage(r) for r in replies])
    sources = PromptSources()
    return AutoReviewer(model, load_resource("approvals/reviewer-system.md", sources),
                        load_resource("approvals/reviewer-user.md", sources)), model


def run(n: int) -> dict:
    return tool_call("execute_command", {"command": f"echo {n} > f{n}.txt"}, id=f"c{n}")


DENY = '{"decision":"ask","reason":"会写文件"}'
ALLOW = '{"decision":"allow","reason":"低风险"}'


def test_only_commands_at_the_default_level_go_to_the_reviewer():
    assert decide("execute_command", {"command": "ls"}, "auto").review
    assert not decide("execute_command", {"command": "ls"}, "ask").review
    assert not decide("mcp__s__t", {}, "auto").review  # an MCP server's behaviour is not in its arguments
    assert not decide("execute_command", {"command": "ls"}, "auto", protected="写入受保护路径").review


async def test_three_denials_escalate_once_and_a_resume_does_not_ask_the_reviewer_again(project):
    judge, judge_model = reviewer(DENY, DENY, DENY)
    model = ScriptedChatModel([ai("", run(1)), ai("", run(2)), ai("", run(3)), ai("done")])
    h = Harness(model, project, approval="auto", reviewer=judge)
    (question,) = await h.turn("write files")
    assert question.value["notice"] == auto_review.ESCALATION_NOTE.format(reason="会写文件")
    assert h.notices == [auto_review.DENIED_LINE.format(tool="execute_command", reason="会写文件")] * 2
    assert await h.resume({"decision": "approve"}) == []
    judge_model.assert_consumed()  # three reviews, none repeated by the resume
    model.assert_consumed()
    results = [m for m in await h.messages() if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["error", "error", "success"]
    assert "[AUTO] 自动审查未放行：会写文件。" in results[0].content
    assert (project / "f3.txt").exists() and not (project / "f1.txt").exists()
    h.check_prompts()


async def test_an_allow_resets_the_count_and_a_new_turn_starts_from_zero(project):
    judge, judge_model = reviewer(DENY, DENY, ALLOW, DENY, DENY, DENY, DENY)
    model = ScriptedChatModel([ai("", run(1)), ai("", run(2)), ai("", run(3)), ai("", run(4)), ai("", run(5)),
                               ai("first done"), ai("", run(6)), ai("", run(7)), ai("second done")])
    h = Harness(model, project, approval="auto", reviewer=judge)
    assert await h.turn("first") == []  # deny, deny, allow (reset), deny, deny: nobody asked
    assert await h.turn("second") == []  # two more denials: the count started again at 0
    judge_model.assert_consumed()
    model.assert_consumed()
    assert (project / "f3.txt").exists() and not (project / "f4.txt").exists()


async def test_without_a_reviewer_the_command_asks_the_person(project):
    model = ScriptedChatModel([ai("", run(1)), ai("ok")])
    h = Harness(model, project, approval="auto")
    (question,) = await h.turn("write")
    assert question.value["tool"] == "execute_command" and not question.value["notice"]
