"""Background work after a turn: notices, the listener, and the bounded wait at exit."""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.nodes.core.background import MAX_NOTICES, Background
from paicli.nodes.core.turn_files import project_relative, turn_files
from paicli.tools.registry import BUILTIN_TOOLS


async def test_drain_waits_for_jobs_and_cancels_what_runs_too_long():
    background, finished = Background(), []

    async def job(seconds: float, name: str) -> None:
        await asyncio.sleep(seconds)
        finished.append(name)

    background.submit(job(0.01, "quick"))
    slow = background.submit(job(30, "slow"))
    assert background.pending == 2
    assert await background.drain(0.2) is False
    assert finished == ["quick"] and slow.cancelled() and background.pending == 0
    assert await background.drain(0.2) is True


async def test_a_failing_job_never_raises_into_the_caller():
    background = Background()

    async def broken() -> None:
        raise RuntimeError("provider down")

    background.submit(broken())
    assert await background.drain(1) is True


def test_notices_wait_for_the_front_end_or_go_to_its_listener():
    background, shown = Background(), []
    for i in range(MAX_NOTICES + 5):
        background.notice(f"n{i}")
    notices = background.pop_notices()
    assert len(notices) == MAX_NOTICES and notices[-1] == f"n{MAX_NOTICES + 4}"
    assert background.pop_notices() == []
    background.listener = shown.append
    background.notice("💾 live")
    assert shown == ["💾 live"] and background.pop_notices() == []


def test_turn_files_are_the_successful_reads_and_writes_of_this_turn_only():
    call = lambda name, path, cid: {"name": name, "args": {"path": path}, "id": cid}  # noqa: E731
    messages = [
        HumanMessage("earlier"), AIMessage("", tool_calls=[call("read_file", "old.py", "c0")]),
        ToolMessage("ok", tool_call_id="c0"), AIMessage("done"),
        HumanMessage("now"),
        AIMessage("", tool_calls=[call("read_file", "./src/a.py", "c1"), call("write_file", "../x", "c2"),
                                  call("edit_file", "missing.py", "c3"), call("list_dir", "src", "c4")]),
        ToolMessage("ok", tool_call_id="c1"), ToolMessage("denied", tool_call_id="c2", status="error"),
        ToolMessage("读取文件失败", tool_call_id="c3", status="error"), ToolMessage("ok", tool_call_id="c4"),
    ]
    assert turn_files(messages, BUILTIN_TOOLS) == ("src/a.py",)
    assert [project_relative(p) for p in ("/etc/passwd", "a/../../b", "a,b", "docs/x.md")] == [None, None, None, "docs/x.md"]
