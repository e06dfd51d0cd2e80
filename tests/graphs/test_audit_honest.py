"""Issue 41, item 7: the audit log names what an edit changed and who approved it: a call an
earlier "approve all" answered is ``approve_all``, not the level's ``none``; an ``m``-edited write
shows which argument the person changed and the change it made."""

from __future__ import annotations

import json

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.policy.audit import AuditLog, format_recent


async def test_approve_all_and_an_edited_write_are_audited_as_what_happened(project, tmp_path):
    (project / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    log = AuditLog(tmp_path / "audit")
    model = ScriptedChatModel([
        ai("", tool_call("write_file", {"path": "a.txt", "content": "one\nTWO\n"})),
        ai("", tool_call("write_file", {"path": "b.txt", "content": "bee\n"})),
        ai("好了"),
    ])
    h = Harness(model, project, approval="ask", audit=log)
    assert len(await h.turn("写文件")) == 1
    assert await h.resume("a") == []  # approve all: b.txt's write is answered by it
    entries = log.recent()
    assert [(json.loads(e["args"])["path"], e["approver"]) for e in entries] == [("a.txt", "hitl"), ("b.txt", "approve_all")]
    assert entries[0]["metadata"]["change"].startswith("+1 -1 行，8 → 8 字节，sha256 ")
    assert entries[1]["metadata"]["change"].startswith("新文件，+1 -0 行，4 字节，sha256 ")
    model2 = ScriptedChatModel([ai("", tool_call("write_file", {"path": "a.txt", "content": "model's\n"})), ai("好")])
    h2 = Harness(model2, project, approval="ask", audit=log)
    await h2.turn("再写")
    assert await h2.resume({"decision": "edit", "args": {"path": "a.txt", "content": "person's\n"}}) == []
    shown = format_recent(log.recent(), 1).splitlines()
    assert "模型原参数（已由用户修改 content）: path: a.txt" in shown[3]
    assert shown[4].startswith("        改动: +1 -2 行，8 → 9 字节，sha256 ")
