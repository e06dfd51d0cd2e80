"""What a turn costs the ledger per step (issue 30): the process holding a session's turn lock
keeps the file's append lock for the turn instead of taking it per write, so a write from another
process meanwhile is refused rather than left waiting; and a put looks only at the messages after
the conversation it last put or read, which must never change what the file says."""

from __future__ import annotations

import asyncio
import json
import signal

import pytest
from filelock import FileLock, Timeout
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage

from paicli.memory.ledger.saver import JsonlLedgerSaver, SessionBusy
from tests.unit.test_ledger import CONFIG, THREAD, chat, ledger, lines, tool_loop
from tests.unit.test_ledger_writers import hold_turn_lock, one_step
from tests.support.waiting import patience


def append_lock_is_free(tmp_path) -> bool:
    """Whether another open of ``<thread>.jsonl.lock`` gets it (flock: even in this process)."""
    probe = FileLock(f"{ledger(tmp_path)}.lock", thread_local=False)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return False
    probe.release()
    return True


def test_the_turn_lock_keeps_the_append_lock_until_the_turn_ends(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)
    lock = saver.turn_lock(THREAD)
    assert lock.try_acquire()
    try:
        assert not append_lock_is_free(tmp_path)
        chat(tool_loop(saver), "during the turn")  # the turn's own writes need no lock of their own
        assert not append_lock_is_free(tmp_path)
    finally:
        lock.release()
    assert append_lock_is_free(tmp_path)
    messages = JsonlLedgerSaver(tmp_path).get_tuple(CONFIG).checkpoint["channel_values"]["messages"]
    assert [m.content for m in messages][:2] == ["during the turn", "call 1"]


def test_without_a_turn_each_write_takes_the_append_lock_and_gives_it_back(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)  # langgraph dev and the tests write without a turn lock
    chat(tool_loop(saver), "no turn")
    assert append_lock_is_free(tmp_path)
    saver.append_event(THREAD, "history_clear", source="slash_clear")
    assert append_lock_is_free(tmp_path)


@pytest.mark.process
def test_writes_from_elsewhere_during_another_process_turn_are_refused_at_once(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)
    chat(one_step(saver), "before")
    size = ledger(tmp_path).stat().st_size
    holder = hold_turn_lock(tmp_path)
    try:
        for write in (lambda: saver.append_event(THREAD, "history_clear", source="slash_clear"),
                      lambda: saver.prune([THREAD]),
                      lambda: chat(one_step(saver), "while busy")):
            with pytest.raises(SessionBusy, match=f"pid {holder.pid}"):
                write()
        assert ledger(tmp_path).stat().st_size == size  # nothing written, nothing torn
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=patience(10))
    assert append_lock_is_free(tmp_path)  # kill -9 gave both locks back
    chat(one_step(saver), "after")
    assert [m.content for m in JsonlLedgerSaver(tmp_path).get_tuple(CONFIG).checkpoint["channel_values"]["messages"]][-2:] \
        == ["after", "answer to after"]


# -- a put looks at the new messages only -----------------------------------------------------------
def saved(tmp_path) -> list:
    return JsonlLedgerSaver(tmp_path).get_tuple(CONFIG).checkpoint["channel_values"]["messages"]


def message_events(tmp_path) -> list[dict]:
    return [e for e in map(json.loads, lines(ledger(tmp_path))) if e["message"] is not None]


def test_a_long_session_stores_each_message_once_and_reads_back_exactly(tmp_path):
    graph = tool_loop(JsonlLedgerSaver(tmp_path), calls=3)
    messages = chat(graph, *[f"turn {i}" for i in range(12)])
    assert saved(tmp_path) == messages
    assert len(message_events(tmp_path)) == len(messages) == 12 * 8
    views = [e["metadata"]["messages"] for e in map(json.loads, lines(ledger(tmp_path)))
             if e["event"] == "view_checkpoint" and "messages" in e["metadata"]]
    assert all(len(v.get("append", ())) <= 1 for v in views[1:])  # each step appends what it added


def test_a_session_reopened_from_disk_goes_on_appending(tmp_path):
    chat(tool_loop(JsonlLedgerSaver(tmp_path)), "one", "two")
    before = len(message_events(tmp_path))
    graph = tool_loop(JsonlLedgerSaver(tmp_path))  # the objects now come from the file
    messages = chat(graph, "three")
    assert saved(tmp_path) == messages
    assert len(message_events(tmp_path)) == before + 6  # the old messages were not stored again


def test_a_message_replaced_under_its_id_or_removed_midway_is_seen(tmp_path):
    graph = tool_loop(JsonlLedgerSaver(tmp_path))
    messages = chat(graph, "one", "two")
    old = messages[2]
    cleared = ToolMessage("[cleared]", tool_call_id=old.tool_call_id, id=old.id)
    graph.update_state(CONFIG, {"messages": [cleared, RemoveMessage(id=messages[3].id)]})
    messages = chat(graph, "three")
    assert saved(tmp_path) == messages
    assert messages[2].content == "[cleared]" and all(m.id != messages[3].id for m in messages[4:])
    assert [e["message"]["content"] for e in message_events(tmp_path)].count("[cleared]") == 1


def test_a_fork_from_an_earlier_checkpoint_gets_its_own_conversation(tmp_path):
    graph = tool_loop(JsonlLedgerSaver(tmp_path))
    chat(graph, "one", "two")
    early = next(s for s in graph.get_state_history(CONFIG) if len(s.values.get("messages", ())) == 7)
    forked = graph.update_state(early.config, {"messages": [HumanMessage("instead", id="instead")]})
    graph.invoke(None, forked)
    branch = graph.get_state(CONFIG).values["messages"]
    assert [m.content for m in branch][:8] == [m.content for m in early.values["messages"]] + ["instead"]
    assert saved(tmp_path) == branch
    chat(graph, "after the fork")
    assert saved(tmp_path)[:len(branch)] == branch


def test_the_same_message_id_given_new_content_in_another_namespace_does_not_leak_back(tmp_path):
    """A message id bound to another event elsewhere: the next put re-checks every message."""
    saver = JsonlLedgerSaver(tmp_path)
    graph = tool_loop(saver)
    messages = chat(graph, "one")
    other = {"configurable": {"thread_id": THREAD, "checkpoint_ns": "elsewhere"}}
    changed = AIMessage("changed elsewhere", id=messages[1].id, tool_calls=messages[1].tool_calls)
    asyncio.run(saver.aput(other, {**saver.get_tuple(CONFIG).checkpoint, "id": "1f1ecf99-0000-6000-8000-00000000000a",
                                   "channel_values": {"messages": [messages[0], changed]}},
                           {"source": "update", "step": 99}, {"messages": "x"}))
    messages = chat(graph, "two")
    assert saved(tmp_path) == messages and messages[1].content == "call 1"
