"""The turn snapshot node (nodes/snapshot.py; issue 29) in the react graph: one snapshot per turn,
none more when the turn resumes after an approval; a failing snapshot is one line, not a failed turn."""

from __future__ import annotations

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tools.snapshots.store import TurnSnapshots


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
