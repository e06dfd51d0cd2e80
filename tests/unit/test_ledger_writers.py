"""One writer per session at the checkpointer (issue 10, item 3): a second saver (another process,
or another instance as `langgraph dev` and the CLI each have) building on a parent that has since
got another writer's child is refused, nothing is lost, and the turn lock of a live process makes
a put wait for nobody but refuses it, while a killed holder blocks nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.graph import END, START, StateGraph

from paicli.memory.ledger.saver import JsonlLedgerSaver, LedgerConflict, SessionBusy
from tests.unit.test_ledger import CONFIG, ROOT, THREAD, State, chat
from tests.support.waiting import patience


def one_step(saver, node=None):
    """START → agent → END; ``node`` runs inside the agent step (another writer, in the tests)."""
    def agent(state: State) -> dict:
        if node is not None:
            node()
        return {"messages": [AIMessage(f"answer to {state['messages'][-1].content[:40]}")]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile(checkpointer=saver)


def contents(saver) -> list[str]:
    return [m.content for m in saver.get_tuple(CONFIG).checkpoint["channel_values"]["messages"]]


def test_a_second_saver_building_on_a_parent_another_writer_extended_is_refused(tmp_path):
    first, second = JsonlLedgerSaver(tmp_path), JsonlLedgerSaver(tmp_path)
    chat(one_step(first), "turn one")
    parent = second.get_tuple(CONFIG)  # both writers read the same latest checkpoint
    first.get_tuple(CONFIG)
    chat(one_step(first), "turn two")

    child = {**parent.checkpoint, "id": str(uuid6())}
    with pytest.raises(LedgerConflict, match=parent.checkpoint["id"]):
        second.put(parent.config, child, {"source": "loop", "step": 9}, {})
    assert contents(JsonlLedgerSaver(tmp_path)) == ["turn one", "answer to turn one", "turn two", "answer to turn two"]

    chat(one_step(second), "turn three")  # having read the new latest, the second writer goes on
    assert contents(JsonlLedgerSaver(tmp_path))[-2:] == ["turn three", "answer to turn three"]


def test_a_run_overtaken_by_another_writers_turn_fails_clearly_and_loses_nothing(tmp_path):
    other = one_step(JsonlLedgerSaver(tmp_path))
    graph = one_step(JsonlLedgerSaver(tmp_path), node=lambda: chat(other, "other turn"))
    with pytest.raises(LedgerConflict, match="另一个写入者"):  # steps on disk before the next: the other
        asyncio.run(graph.ainvoke({"messages": [{"role": "user", "content": "slow turn"}]}, CONFIG,
                                  durability="sync"))  # turn builds on this run's first step
    assert contents(JsonlLedgerSaver(tmp_path)) == ["slow turn", "other turn", "answer to other turn"]


def test_two_new_sessions_started_together_do_not_both_become_the_first_checkpoint(tmp_path):
    first, second = JsonlLedgerSaver(tmp_path), JsonlLedgerSaver(tmp_path)
    assert second.get_tuple(CONFIG) is None  # the second writer saw an empty thread
    chat(one_step(first), "first")
    with pytest.raises(LedgerConflict):  # its run's first checkpoint, as LangGraph would put it
        second.put({"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}, empty_checkpoint(),
                   {"source": "input", "step": -1}, {})
    assert contents(JsonlLedgerSaver(tmp_path)) == ["first", "answer to first"]


def test_a_fork_from_an_earlier_checkpoint_is_not_a_conflict(tmp_path):
    writer, forker = JsonlLedgerSaver(tmp_path), JsonlLedgerSaver(tmp_path)
    chat(one_step(writer), "one", "two")
    graph = one_step(forker)
    early = next(s for s in graph.get_state_history(CONFIG) if len(s.values.get("messages", ())) == 2)
    forked = graph.update_state(early.config, {"messages": [HumanMessage("instead")]})
    assert [m.content for m in graph.get_state(forked).values["messages"]] == ["one", "answer to one", "instead"]


HOLD_TURN = """
import sys, time
sys.path.insert(0, {root!r})
from paicli.memory.ledger.saver import JsonlLedgerSaver
lock = JsonlLedgerSaver(sys.argv[1]).turn_lock(sys.argv[2])
assert lock.try_acquire()
print("HOLDING", flush=True)
time.sleep(60)
"""


def hold_turn_lock(directory) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD_TURN.format(root=str(ROOT)), str(directory), THREAD],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "HOLDING"
    return proc


@pytest.mark.process
def test_a_put_while_another_process_holds_the_turn_is_refused_until_that_process_dies(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)
    chat(one_step(saver), "before")
    holder = hold_turn_lock(tmp_path)
    try:
        with pytest.raises(SessionBusy, match=f"pid {holder.pid}"):
            chat(one_step(saver), "while busy")
        lock, notices = saver.turn_lock(THREAD), []
        with pytest.raises(SessionBusy, match=f"pid {holder.pid}"):
            asyncio.run(lock.acquire(0.3, notices.append))
        assert len(notices) == 1 and f"pid {holder.pid}" in notices[0]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=patience(10))

    assert json.loads(lock.owner_path.read_text())["pid"] == holder.pid  # left behind by kill -9
    asyncio.run(lock.acquire(0, print))  # the OS freed the lock: no wait, no stale owner in the way
    try:
        assert json.loads(lock.owner_path.read_text())["pid"] == os.getpid()
        chat(one_step(saver), "after")  # this process's own turn lock does not refuse its puts
    finally:
        lock.release()
    assert contents(JsonlLedgerSaver(tmp_path))[-2:] == ["after", "answer to after"]


def test_a_save_whose_caller_is_cancelled_still_reaches_the_file(tmp_path):
    """The async calls wait a turn or two of the event loop to share a hop; a caller cancelled
    meanwhile (Ctrl-C) must not take its call with it, even when its loop closes right after."""
    saver = JsonlLedgerSaver(tmp_path)
    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(saver.aappend_event(THREAD, "history_clear", source="cancelled"))
        loop.run_until_complete(asyncio.sleep(0))  # the call is queued, not yet sent
        task.cancel()
        loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
    finally:
        loop.close()
    asyncio.run(saver.asessions())  # the worker runs calls in order: the first one is done by now
    lines = (tmp_path / f"{THREAD}.jsonl").read_text().splitlines()
    assert [json.loads(line)["source"] for line in lines] == ["cancelled"]
