"""The path and command guards decide before the approval question (paicli issue 23, item 6):
a call they refuse is never put to the user, reads `🛡️ 策略拒绝: …` and is audited as the
policy's denial, not as an approved call that failed."""

from __future__ import annotations

import json

from langchain_core.messages import ToolMessage

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.policy.audit import AuditLog


def results(messages) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}


def audit_lines(directory) -> list[dict]:
    [day] = directory.glob("audit-*.jsonl")
    return [json.loads(line) for line in day.read_text(encoding="utf-8").splitlines()]


async def test_a_refused_command_is_never_asked_and_is_audited_as_a_policy_denial(project, tmp_path):
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "rm -rf ~"}, id="x1"),
                                  tool_call("execute_command", {"command": "echo hi"}, id="x2")),
                               ai("好的")])
    h = Harness(model, project, approval="auto", audit=AuditLog(tmp_path / "audit"))
    [question] = await h.turn("清理一下")
    assert question.value["call_id"] == "x2"  # only the command the guard lets through is asked
    assert await h.resume({"decision": "approve"}) == []
    shown = results(await h.messages())
    assert "🛡️ 策略拒绝: 禁止 rm -rf 删除全盘或用户目录" in shown["x1"]
    assert "命令执行完成 (exit code: 0)" in shown["x2"]
    refused, ran = audit_lines(tmp_path / "audit")
    assert (refused["outcome"], refused["approver"], refused["reason"]) == ("deny", "policy", "禁止 rm -rf 删除全盘或用户目录")
    assert (ran["outcome"], ran["approver"]) == ("allow", "hitl")
    model.assert_consumed()


async def test_a_write_outside_the_project_is_refused_without_a_question_at_the_ask_level(project, tmp_path):
    model = ScriptedChatModel([ai("", tool_call("write_file", {"path": "../outside.txt", "content": "x"}, id="w1")),
                               ai("写不了")])
    h = Harness(model, project, approval="ask", audit=AuditLog(tmp_path / "audit"))
    assert await h.turn("写个文件") == []
    assert results(await h.messages())["w1"].count("🛡️ 策略拒绝: 路径越界: ../outside.txt") == 1
    assert not (project.parent / "outside.txt").exists()
    [entry] = audit_lines(tmp_path / "audit")
    assert (entry["outcome"], entry["approver"]) == ("deny", "policy")


async def test_a_read_through_a_link_out_of_the_project_is_refused_before_it_runs(project, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    (project / "notes.txt").symlink_to(secret)
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "notes.txt"}, id="r1")), ai("读不了")])
    h = Harness(model, project, approval="ask")
    assert await h.turn("读 notes.txt") == []
    shown = results(await h.messages())["r1"]
    assert "🛡️ 策略拒绝: 路径越界: notes.txt" in shown and "TOP SECRET" not in shown


async def test_arguments_edited_at_the_question_are_still_guarded_when_the_call_runs(project, tmp_path):
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "echo hi"}, id="x1")), ai("好")])
    h = Harness(model, project, approval="auto", audit=AuditLog(tmp_path / "audit"))
    assert len(await h.turn("跑一下")) == 1
    assert await h.resume({"decision": "edit", "args": {"command": "sudo true"}}) == []
    assert "🛡️ 策略拒绝: 禁止 sudo 提权" in results(await h.messages())["x1"]
    model.assert_consumed()
