"""issue 24 inside the loop: /audit records how each command ran, and a network call is a
question of its own whose refusal runs nothing."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.policy.audit import AuditLog, format_recent
from paicli.tools.sandbox.command import CommandSandbox, SandboxOptions, Unavailable


async def test_audit_records_whether_a_command_ran_sandboxed_with_network_or_outside(project, tmp_path):
    log = AuditLog(tmp_path / "audit")
    model = ScriptedChatModel([
        ai("", tool_call("execute_command", {"command": "true"}),
           tool_call("execute_command", {"command": "true", "network": True, "reason": "r"})),
        ai("好")])
    await Harness(model, project, audit=log).turn("跑")
    off = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "true"})), ai("好")])
    await Harness(off, project, audit=log, sandbox=CommandSandbox(SandboxOptions(mode="off"))).turn("跑")
    hows = [e["metadata"]["sandbox"] for e in log.recent()]
    found = CommandSandbox().mechanism()
    assert hows == (["sandboxed", "network", "outside"] if not isinstance(found, Unavailable) else ["outside"] * 3)
    assert "沙箱: 沙箱外" in format_recent(log.recent())


async def test_a_refused_network_call_runs_nothing_and_the_model_reads_why(project):
    model = ScriptedChatModel([
        ai("", tool_call("execute_command", {"command": "touch ran.txt", "network": True, "reason": "下载依赖"})),
        ai("好")])
    harness = Harness(model, project, approval="auto")
    asked = await harness.turn("装依赖")
    assert len(asked) == 1 and "下载依赖" in asked[0].value["risk"]
    await harness.resume({"decision": "reject", "reason": "不要联网"})
    results = [m for m in await harness.messages() if isinstance(m, ToolMessage)]
    assert "不要联网" in results[0].text and not (project / "ran.txt").exists()


async def test_approve_all_of_a_network_call_covers_the_next_one(project):
    net = {"command": "true", "network": True, "reason": "r"}
    model = ScriptedChatModel([ai("", tool_call("execute_command", net)), ai("", tool_call("execute_command", net)),
                               ai("好")])
    harness = Harness(model, project, approval="auto")
    assert len(await harness.turn("跑两次")) == 1
    assert await harness.resume({"decision": "approve_all"}) == []


async def test_a_network_call_asks_nothing_more_when_every_command_already_has_network(project):
    net = {"command": "touch ran.txt", "network": True, "reason": "下载依赖"}
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "true"})),
                               ai("", tool_call("execute_command", net)), ai("好")])
    harness = Harness(model, project, approval="auto", sandbox=CommandSandbox(SandboxOptions(network=True)))
    [asked] = await harness.turn("跑")
    assert "下载依赖" not in asked.value["risk"]  # the plain command's question
    assert await harness.resume({"decision": "approve_all"}) == []  # approve-all of commands covers it
    assert (project / "ran.txt").exists()


async def test_a_granted_network_call_in_the_same_message_is_covered_by_approve_all_of_commands(project):
    net = {"command": "touch ran.txt", "network": True, "reason": "下载依赖"}
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "true"}),
                                  tool_call("execute_command", net)), ai("好")])
    harness = Harness(model, project, approval="auto", sandbox=CommandSandbox(SandboxOptions(network=True)))
    [asked] = await harness.turn("跑")
    assert "下载依赖" not in asked.value["risk"]  # the plain command's question
    assert await harness.resume({"decision": "approve_all"}) == []  # the network call is a plain one
    assert (project / "ran.txt").exists()


async def test_approve_all_of_plain_commands_in_a_message_still_asks_for_an_ungranted_network_call(project):
    net = {"command": "touch ran.txt", "network": True, "reason": "下载依赖"}
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "true"}),
                                  tool_call("execute_command", net)), ai("好")])
    harness = Harness(model, project, approval="auto")
    assert len(await harness.turn("跑")) == 1
    [asked] = await harness.resume({"decision": "approve_all"})
    assert "下载依赖" in asked.value["risk"]
