"""The typed tool status inside the loop (paicli issue 12): the ToolMessage status and the
audit outcome come from the status the tool set, not from how its text begins."""

from __future__ import annotations

from dataclasses import replace

from langchain_core.messages import ToolMessage

from paicli.memory.context.outcome import is_decided
from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.policy.audit import AuditLog


async def test_a_failed_edit_is_audited_as_error(project, tmp_path):
    (project / "a.txt").write_text("one\n", encoding="utf-8")
    log = AuditLog(tmp_path / "audit")
    model = ScriptedChatModel([
        ai("", tool_call("edit_file", {"path": "a.txt", "old_text": "three", "new_text": "3"}),
           tool_call("edit_file", {"path": "sub", "old_text": "x", "new_text": "y"}),
           tool_call("edit_file", {"path": "a.txt", "old_text": "one", "new_text": "1"})),
        ai("好")])
    await Harness(model, project, audit=log).turn("改一下 a.txt")
    assert [e["outcome"] for e in log.recent()] == ["error", "error", "allow"]
    assert (project / "a.txt").read_text(encoding="utf-8") == "1\n"


async def test_failed_commands_are_error_messages_and_a_success_is_not(project):
    model = ScriptedChatModel([
        ai("", tool_call("execute_command", {"command": "echo '工具执行失败: just text'"}),
           tool_call("execute_command", {"command": "exit 4"}), tool_call("execute_command", {"command": "sleep 5"}),
           tool_call("execute_command", {"command": "rm -rf /"})),
        ai("好")])
    harness = Harness(model, project)
    harness.context = replace(harness.context, command_timeout=0.5)
    await harness.turn("跑四个命令")
    results = [m for m in await harness.messages() if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["success", "error", "error", "error"]
    # Only the guard's refusal is a decision the runaway guard leaves out (reference s.3).
    assert [is_decided(m) for m in results] == [False, False, False, True]
