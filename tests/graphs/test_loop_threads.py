"""The loop's thread hops (issue 30 item 2): a model call whose tool calls need no file system
to be decided, and the routers between the steps, stay on the event loop; a call the path or
command guards look at is decided in a worker thread, as ``langgraph dev`` requires; the
ledger takes a step's writes and checkpoint to its worker thread in one hop."""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.thread import _WorkItem
from contextlib import contextmanager
from typing import Any

from langchain_core.messages import HumanMessage

from paicli.graphs.react import build_graph
from paicli.memory.ledger.saver import JsonlLedgerSaver
from paicli.nodes.core import policy
from paicli.nodes.core.state import Deps, RunContext
from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.base import ToolSpec
from paicli.tools.registry import BUILTIN_TOOLS


async def nothing(args: dict[str, Any], ctx: Any) -> str:
    return "ok"


# No facts: no guard, no approval, nothing to resolve on the file system.
NOOP = ToolSpec("noop", "Does nothing.", {"type": "object", "properties": {}, "required": []}, nothing,
                is_async=True, parallel_safe=True)


@contextmanager
def deciding_threads():
    """The thread each call of ``policy.decide`` ran in, by call id, without replacing it."""
    threads: dict[str, str] = {}
    code = policy.decide.__code__

    def profile(frame, event, _arg):
        if event == "call" and frame.f_code is code:
            threads[frame.f_locals["call"].id] = threading.current_thread().name  # a Call (paicli.tools.call)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield threads
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


class CountingExecutor(ThreadPoolExecutor):
    """The event loop's default executor (``asyncio.to_thread``, plain-function routers), counted."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, *args: Any, **kwargs: Any):
        self.submitted += 1
        return super().submit(*args, **kwargs)


async def hops_for(project, calls: int) -> int:
    script = [ai("", tool_call("noop", {"i": i}, id=f"n{i}")) for i in range(calls)]
    h = Harness(ScriptedChatModel([*script, ai("完成")]), project, tools={"noop": NOOP})
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    try:
        await h.turn("调用 noop")
    finally:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
        executor.shutdown(wait=True)
    h.model.assert_consumed()
    return executor.submitted


async def test_thread_hops_do_not_grow_with_the_model_calls_of_a_turn(project):
    # What hops is once per turn (PAI.md and the memory lookup in load_context), not per call.
    assert await hops_for(project, 6) == await hops_for(project, 1)


async def test_a_call_no_guard_reads_is_decided_on_the_event_loop_one_that_a_guard_reads_in_a_thread(project):
    (project / "a.txt").write_text("AAA")
    model = ScriptedChatModel([ai("", tool_call("noop", {}, id="n1")),
                               ai("", tool_call("noop", {}, id="n2"), tool_call("read_file", {"path": "a.txt"}, id="r1")),
                               ai("完成")])
    h = Harness(model, project, tools={"noop": NOOP, "read_file": BUILTIN_TOOLS["read_file"]})
    with deciding_threads() as threads:
        assert await h.turn("读 a.txt") == []
    loop_thread = threading.current_thread().name
    assert threads["n1"] == loop_thread
    # One call that reads the file system sends the whole answer's decisions to a worker thread.
    assert threads["n2"] == threads["r1"] != loop_thread
    model.assert_consumed()



@contextmanager
def counting_calls(*functions):
    """How often each function ran, in any thread, without replacing it; ``hops``: the jobs
    the ledger's worker thread ran (``_WorkItem.run`` of the standard library's pool)."""
    codes = {f.__code__: f.__name__ for f in functions}
    counts = {**dict.fromkeys(codes.values(), 0), "hops": 0}
    work_item = _WorkItem.run.__code__

    def profile(frame, event, _arg):
        if event != "call":
            return
        if frame.f_code in codes:
            counts[codes[frame.f_code]] += 1
        elif frame.f_code is work_item and threading.current_thread().name.startswith("ledger"):
            counts["hops"] += 1

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


async def test_the_ledger_saves_a_steps_writes_and_checkpoint_in_one_hop(project, tmp_path):
    saver = JsonlLedgerSaver(tmp_path / "ledger")
    model = ScriptedChatModel([*(ai("", tool_call("noop", {"i": i}, id=f"n{i}")) for i in range(4)), ai("完成")])
    graph = build_graph(Deps(model=model, tools={"noop": NOOP}), checkpointer=saver)
    context = RunContext(project_root=str(project), approval="yes")
    with counting_calls(JsonlLedgerSaver.put, JsonlLedgerSaver.put_writes) as counts:
        async for _ in graph.astream({"messages": [HumanMessage("调用 noop")]}, {"configurable": {"thread_id": "t"}},
                                     context=context, durability="sync"):
            pass
    model.assert_consumed()
    assert counts["put_writes"] > 10 and counts["put"] > 10
    # One hop per step (its writes and its checkpoint together), plus the first read of the thread.
    assert counts["hops"] <= counts["put"] + 1
    state = await graph.aget_state({"configurable": {"thread_id": "t"}})
    assert state.values["messages"][-1].content == "完成"
