"""The turn snapshot node (nodes/snapshot.py; issue 29) in the react graph: one snapshot per turn,
none more when the turn resumes after an approval; a failing snapshot is one line, not a failed turn."""

from __future__ import annotations

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.snapshots.store import TurnSnapshots


async def test_a_turn_takes_one_snapshot_even_when_it_stops_for_an_approval(project, tmp_path):
    snapshots = TurnSnapshots(tmp_path / "snapshots")
    (project / "a.txt").write_text("1\n")
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "echo 2 > a.txt"})), ai("改好了")])
    h = Harness(model, project, approval="auto", snapshots=snapshots)
    assert len(await h.turn("把 a.txt 改成 2\n细节略")) == 1
    [entry] = snapshots.project(project).entries()
    assert (entry.mode, entry.input, entry.session) == ("react", "把 a.txt 改成 2", "s1")
    assert await h.resume({"decision": "approve"}) == []
    model.assert_consumed()
    assert (project / "a.txt").read_text() == "2\n"
    assert len(snapshots.project(project).entries()) == 1
    assert h.notices == []


async def test_a_snapshot_that_cannot_be_taken_is_one_notice_and_the_turn_goes_on(project, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the snapshots folder should be\n")
    model = ScriptedChatModel([ai("好的")])
    h = Harness(model, project, snapshots=TurnSnapshots(blocked))
    assert await h.turn("你好") == []
    model.assert_consumed()
    [notice] = h.notices
    assert notice.startswith("⚠️ 本次运行前的快照没有保存：") and "不能用 /restore 撤销" in notice


async def test_revert_turn_interrupts_every_time_even_after_approve_all(project, tmp_path):
    from paicli.tools.registry import BUILTIN_TOOLS
    from paicli.tools.snapshots.revert import revert_turn_spec

    snapshots = TurnSnapshots(tmp_path / "snapshots")
    (project / "a.txt").write_text("1\n")
    model = ScriptedChatModel([
        ai("", tool_call("write_file", {"path": "a.txt", "content": "2\n"}, "w1")),
        ai("", tool_call("revert_turn", {"offset": 1}, "r1")),
        ai("", tool_call("revert_turn", {"offset": 1}, "r2")),
        ai("撤销了"),
    ])
    h = Harness(model, project, approval="auto", snapshots=snapshots,
                tools={**BUILTIN_TOOLS, "revert_turn": revert_turn_spec(snapshots)})
    [question] = await h.turn("改一下再撤销")
    assert (question.value["tool"], question.value["danger"]) == ("revert_turn", "🔴 高危")
    assert "PAICLI_ALLOW_REVERT=yes" in question.value["notice"]
    [again] = await h.resume({"decision": "approve_all"})  # "approve all" does not answer the next one
    assert again.value["tool"] == "revert_turn" and again.id != question.id
    assert (project / "a.txt").read_text() == "1\n"  # the first revert ran: back to before the turn
    assert await h.resume({"decision": "reject", "reason": "够了"}) == []
    model.assert_consumed()
    h.check_prompts()
    results = [m for m in await h.messages() if getattr(m, "tool_call_id", None) in ("r1", "r2")]
    assert "已新增 0 个、删除 0 个、修改 1 个文件" in results[0].content and "~ a.txt" in results[0].content
    assert "[HITL] 操作已被拒绝：够了" in results[1].content
