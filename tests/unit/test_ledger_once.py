"""Each message once in the ledger, whatever path it came by (issue 10, item 4): a message given
without an id (an SDK/Studio dict, a HumanMessage with id=None, sync or async) reaches the saver in
the input checkpoint and in the input task's write before add_messages names it; it is stored
once and read back exactly, named by the id the graph gave it."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import HumanMessage

from paicli.memory.ledger.saver import JsonlLedgerSaver
from tests.unit.test_ledger import CONFIG, THREAD
from tests.unit.test_ledger_writers import one_step

BIG = "".join(f"第{i}段 lorem ipsum dolor sit amet " for i in range(3_000))  # about 100 KB of text
MAX_GROWTH = 1.2  # issue 10: ledger bytes per byte of input


def given(kind: str, text: str):
    return {"role": "user", "content": text} if kind == "dict" else HumanMessage(text)


def run(saver, kind: str, how: str, text: str = BIG) -> None:
    graph = one_step(saver)
    graph_input = {"messages": [given(kind, text)]}
    if how == "ainvoke":
        asyncio.run(graph.ainvoke(graph_input, CONFIG))
    else:
        graph.invoke(graph_input, CONFIG)


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
@pytest.mark.parametrize("kind", ["dict", "human"])
def test_a_large_message_without_id_is_stored_once(tmp_path, kind, how):
    run(JsonlLedgerSaver(tmp_path), kind, how)
    data = (tmp_path / f"{THREAD}.jsonl").read_text(encoding="utf-8")
    assert data.count(BIG) == 1
    size, given_size = len(data.encode()), len(BIG.encode())
    assert size <= MAX_GROWTH * given_size, f"{size / given_size:.2f}x the input"


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
@pytest.mark.parametrize("kind", ["dict", "human"])
def test_every_checkpoint_of_such_a_run_reads_back_exactly_from_a_new_saver(tmp_path, kind, how):
    saver = JsonlLedgerSaver(tmp_path)
    run(saver, kind, how, "短消息")
    run(saver, kind, how, "短消息")  # the same words again: a second message, not the first one
    live = [(t.checkpoint["channel_values"], t.pending_writes) for t in saver.list(CONFIG)]
    fresh = JsonlLedgerSaver(tmp_path)
    assert [(t.checkpoint["channel_values"], t.pending_writes) for t in fresh.list(CONFIG)] == live

    messages = fresh.get_tuple(CONFIG).checkpoint["channel_values"]["messages"]
    assert [m.content for m in messages] == ["短消息", "answer to 短消息"] * 2
    assert all(m.id for m in messages) and len({m.id for m in messages}) == 4
    first_input = list(fresh.list(CONFIG))[-1].checkpoint["channel_values"]["__start__"]["messages"][0]
    if kind == "dict":
        assert first_input == {"role": "user", "content": "短消息"}  # as it was given: a dict stays a dict
    else:
        assert type(first_input) is HumanMessage and first_input.content == "短消息"


def data_count(tmp_path, text: str) -> int:
    return (tmp_path / f"{THREAD}.jsonl").read_text(encoding="utf-8").count(text)


def test_the_ledger_names_the_anonymous_message_once_it_has_an_id(tmp_path):
    run(JsonlLedgerSaver(tmp_path), "dict", "invoke", "你好")
    events = [json.loads(line) for line in (tmp_path / f"{THREAD}.jsonl").read_text().splitlines()]
    user = [e for e in events if e["event"] == "user"]
    named = [e for e in events if e["event"] == "message_id"]
    assert len(user) == 1 and user[0]["message"]["content"] == "你好"
    # The node's own reply may be named too: sync pending writes are serialised in a background
    # thread, racing add_messages, which gives the reply its id in place. Either way each message
    # event is named at most once, and the user's input is named.
    named_sequences = [e["metadata"]["messageSequence"] for e in named]
    assert user[0]["sequence"] in named_sequences and len(set(named_sequences)) == len(named_sequences)
    assert data_count(tmp_path, "answer to 你好") == 1
    assert events.index(user[0]) < events.index(next(e for e in events if e["event"] == "view_checkpoint"))
