"""Ledger lines (reference h.2) and the message record (reference 0.1): shapes and exact round trips."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage, AIMessageChunk, ChatMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from paicli.memory.ledger.deltas import (
    Fields, apply_record, apply_seen, apply_versions, diff_record, diff_seen, diff_versions, pack_version,
    unpack_version,
)
from paicli.memory.ledger.format import (
    decode_line, decode_value, encode_line, encode_value, is_plain, make_event, message_event,
    message_to_record, record_to_message,
)
from paicli.memory.ledger.sessions import SessionFold
from tests.support.properties import examples

SERDE = JsonPlusSerializer()
H2_FIELDS = ["schemaVersion", "sessionId", "sequence", "timestamp", "event", "mode", "actor", "source",
             "message", "metadata"]
RECORD_FIELDS = ["role", "content", "reasoningContent", "toolCalls", "toolCallId", "contentParts"]


def through_a_line(message):
    """message → record + lc → ledger line bytes → event → message, as the saver does."""
    record, lc = message_to_record(message, SERDE)
    event = make_event("s", 0, message_event(record)[0], mode="react", actor="agent", source="x",
                       message=record, metadata={"lc": lc})
    back = decode_line(encode_line(event).rstrip(b"\n"))
    return record_to_message(back["message"], back["metadata"]["lc"], SERDE)


# -- generated messages ------------------------------------------------------------------------
# Integers stay in int64: LangGraph's msgpack serializer (every saver's) refuses larger ones.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
# Not plain JSON, but within what LangGraph's serializer handles (64-bit ints for msgpack).
odd_values = (st.tuples(st.integers(-2**63, 2**63 - 1)) | st.datetimes(timezones=st.just(timezone.utc))
              | st.sets(st.integers(0, 9), max_size=2))
metadata = st.dictionaries(st.sampled_from(["model", "finish_reason", "x", "$k"]), json_values, max_size=3)
ids = st.none() | st.uuids().map(str) | st.text(min_size=1, max_size=12)
content = st.text(max_size=40) | st.lists(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=10))
    | st.builds(lambda d: {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{d}"}},
                st.text("abcXYZ019+/", min_size=1, max_size=12))
    | st.text(max_size=5), max_size=3)
tool_calls = st.lists(st.fixed_dictionaries({
    "name": st.text(min_size=1, max_size=8), "args": st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    "id": st.none() | st.text(min_size=1, max_size=8)}), max_size=3)
invalid_calls = st.lists(st.fixed_dictionaries({
    "name": st.none() | st.text(max_size=8), "args": st.none() | st.text(max_size=12),
    "id": st.none() | st.text(min_size=1, max_size=8), "error": st.none() | st.text(max_size=8),
    "type": st.just("invalid_tool_call")}), max_size=2)
usage = st.none() | st.builds(lambda i, o: {"input_tokens": i, "output_tokens": o, "total_tokens": i + o},
                              st.integers(0, 10**6), st.integers(0, 10**6))
kwargs = st.dictionaries(st.sampled_from(["reasoning_content", "refusal", "extra"]), st.text(max_size=10) | json_values, max_size=2)

humans = st.builds(HumanMessage, content=content, id=ids, name=st.none() | st.text(max_size=6),
                   additional_kwargs=kwargs, response_metadata=metadata)
systems = st.builds(SystemMessage, content=content, id=ids)
ais = st.builds(AIMessage, content=content, id=ids, tool_calls=tool_calls, invalid_tool_calls=invalid_calls,
                usage_metadata=usage, additional_kwargs=kwargs, response_metadata=metadata,
                name=st.none() | st.text(max_size=6))
tools = st.builds(ToolMessage, content=content, tool_call_id=st.text(max_size=10), id=ids,
                  status=st.sampled_from(["success", "error"]), name=st.none() | st.text(max_size=6),
                  artifact=st.none() | json_values)


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(humans, systems, ais, tools))
def test_every_message_comes_back_exactly_from_its_ledger_line(message):
    back = through_a_line(message)
    assert type(back) is type(message)
    assert back == message


@settings(max_examples=examples(100), deadline=None)
@given(st.one_of(
    st.builds(HumanMessage, content=content, id=ids, response_metadata=st.dictionaries(st.just("k"), odd_values, min_size=1)),
    st.builds(ToolMessage, content=content, tool_call_id=st.text(max_size=10), artifact=odd_values)))
def test_fields_that_are_not_json_come_back_as_the_checkpoint_serializer_gives_them(message):
    """Such a message is stored whole through the serializer: as exact as LangGraph's own savers."""
    assert through_a_line(message) == SERDE.loads_typed(SERDE.dumps_typed(message))


@settings(max_examples=examples(100), deadline=None)
@given(st.one_of(humans, ais, tools))
def test_the_record_is_plain_json_with_paicli_keys_in_order(message):
    record, lc = message_to_record(message, SERDE)
    assert list(record) == RECORD_FIELDS
    assert is_plain(record)
    assert isinstance(record["content"], str)
    for call in record["toolCalls"] or []:
        assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)


# -- shapes --------------------------------------------------------------------------------------
def test_an_assistant_tool_call_reads_like_a_paicli_record():
    message = AIMessage("看看文件", id="run-1", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "call_1"}],
                        additional_kwargs={"reasoning_content": "先读文件"}, usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5})
    record, lc = message_to_record(message, SERDE)
    assert record == {
        "role": "assistant", "content": "看看文件", "reasoningContent": "先读文件",
        "toolCalls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}],
        "toolCallId": None, "contentParts": None}
    assert lc == {"id": "run-1", "usage_metadata": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}
    assert message_event(record) == ("tool_call", "llm_response")


@pytest.mark.parametrize(("message", "expected"), [
    (HumanMessage("hi"), ("user", "user_input")),
    (AIMessage("answer"), ("assistant", "llm_response")),
    (ToolMessage("out", tool_call_id="c1"), ("tool_result", "tool_execution")),
    (SystemMessage("rules"), ("system", "system_prompt")),
    (ChatMessage("x", role="critic"), ("message", "graph_state")),
])
def test_messages_are_classified_as_reference_h2_says(message, expected):
    assert message_event(message_to_record(message, SERDE)[0]) == expected


def test_a_tool_result_keeps_status_and_name_beside_the_record():
    message = ToolMessage("失败了", tool_call_id="call_9", name="execute_command", status="error", id="t1")
    record, lc = message_to_record(message, SERDE)
    assert record["role"] == "tool" and record["toolCallId"] == "call_9" and record["toolCalls"] is None
    assert lc == {"id": "t1", "name": "execute_command", "status": "error"}
    assert through_a_line(message) == message


def test_images_become_content_parts_and_a_derived_text():
    message = HumanMessage([{"type": "text", "text": "看这张图"},
                            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}}])
    record, lc = message_to_record(message, SERDE)
    assert record["content"] == "看这张图\n\n[已附加 1 张图片]"
    assert record["contentParts"][1] == {"type": "image_base64", "text": None, "imageBase64": "QUJD",
                                         "imageUrl": None, "mimeType": "image/jpeg"}
    assert "content" not in lc  # the parts say it all: the image is stored once
    assert through_a_line(message) == message


def test_a_message_that_is_not_plain_json_is_stored_whole_and_still_exact():
    message = AIMessage("x", id="a1", response_metadata={"created": datetime(2026, 1, 2, tzinfo=timezone.utc)})
    record, lc = message_to_record(message, SERDE)
    assert set(lc) == {"id", "$typed"} and record["content"] == "x"
    assert through_a_line(message) == message


def test_chunks_keep_their_class():
    chunk = AIMessageChunk("par", id="c1", tool_call_chunks=[{"name": "f", "args": '{"a"', "id": "x", "index": 0}])
    assert type(through_a_line(chunk)) is AIMessageChunk and through_a_line(chunk) == chunk


def test_remove_message_is_never_stored():
    with pytest.raises(ValueError, match="never stored"):
        message_to_record(RemoveMessage(id="x"), SERDE)


# -- events --------------------------------------------------------------------------------------
def test_event_fields_are_in_h2_order_and_blank_labels_become_unknown():
    event = make_event("session-1-x", 7, "  ", mode=" plan ", actor="", source=None, metadata={"k": 1})
    assert list(event) == H2_FIELDS
    assert (event["event"], event["mode"], event["actor"], event["source"]) == ("event", "plan", "unknown", "unknown")
    assert isinstance(event["timestamp"], int) and event["timestamp"] > 1_700_000_000_000  # epoch ms


def test_a_line_with_a_lone_surrogate_is_still_valid_utf8():
    message = HumanMessage("bad \ud800 text", id="h1")
    line = encode_line(make_event("s", 1, "user", mode="react", actor="agent", source="x",
                                  message=message_to_record(message, SERDE)[0], metadata={"lc": {"id": "h1"}}))
    line.decode("utf-8")
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert through_a_line(message) == message


@pytest.mark.parametrize("line", [b'{"schemaVersion":1,"sequ', b"not json", b"[1,2]", b'{"sequence":"1","event":"x"}', b"\xff\xfe"])
def test_torn_or_garbled_lines_decode_to_none(line):
    assert decode_line(line) is None


# -- values and versions ---------------------------------------------------------------------------
def test_plain_values_stay_plain_and_the_rest_is_tagged():
    value = {"a": [1, 2.5, None, "x"], "t": (1, 2), "n": float("nan"), "$k": {"$only": 1}, "ints": {3: "int key"}}
    encoded = encode_value(value, SERDE, lambda m: {"$msg": 0})
    assert encoded["a"] == [1, 2.5, None, "x"] and encoded["$k"] == {"$dict": {"$only": 1}}
    assert all("$typed" in encoded[k] for k in ("t", "n", "ints"))
    json.dumps(encoded, allow_nan=False)
    back = decode_value(json.loads(json.dumps(encoded)), SERDE, lambda s: None)
    assert back["t"] == SERDE.loads_typed(SERDE.dumps_typed((1, 2)))  # what LangGraph's own savers give
    assert back["$k"] == {"$only": 1} and back["ints"] == {3: "int key"}
    assert back["n"] != back["n"]  # nan


def test_messages_inside_values_are_references():
    message = HumanMessage("hi", id="h1")
    encoded = encode_value({"messages": [message]}, SERDE, lambda m: {"$msg": 42})
    assert encoded == {"messages": [{"$msg": 42}]}
    assert decode_value(encoded, SERDE, {42: message}.get) == {"messages": [message]}


def test_versions_lose_their_zero_padding_and_nothing_else():
    version = "00000000000000000000000000000042.0.8417632148211923"
    assert pack_version(version) == [42, "0.8417632148211923"]
    for v in (version, "7", 3, 1.5, "00042.0.1"):
        assert unpack_version(json.loads(json.dumps(pack_version(v)))) == v


def test_version_changes_group_channels_a_step_updated_together():
    v1, v2 = "0" * 31 + "1.0.5", "0" * 31 + "2.0.7"
    old, new = {"a": v1, "b": v1, "gone": v1}, {"a": v2, "b": v2, "c": v2}
    delta = diff_versions(old, new)
    assert delta == {"set": [[[2, "0.7"], "a", "b", "c"]], "unset": ["gone"]}
    assert apply_versions(old, json.loads(json.dumps(delta))) == new
    seen_old, seen_new = {"n1": {"a": v1}, "n2": {"a": v1}}, {"n1": {"a": v2}, "n2": {"a": v1}}
    assert apply_seen(seen_old, json.loads(json.dumps(diff_seen(seen_old, seen_new)))) == seen_new


def test_the_session_title_is_the_first_user_message_trimmed():
    fold = SessionFold()
    fold.add(make_event("s", 0, "system", mode="react", actor="agent", source="x", message={"role": "system", "content": "rules"}))
    fold.add(make_event("s", 1, "user", mode="plan", actor="agent", source="x", message={"role": "user", "content": "  修复\n" + "x" * 100}))
    fold.add(make_event("s", 2, "user", mode="plan", actor="agent", source="x", message={"role": "user", "content": "second"}))
    summary = fold.summary("s")
    assert summary["title"].startswith("修复 xxx") and len(summary["title"]) == 60 and summary["title"].endswith("…")
    # issue 26: the count is the conversation's (what /resume then shows), not a Plan run's messages
    assert summary["mode"] == "plan" and summary["messages"] == 1


# -- view_checkpoint records as changes on the parent's ----------------------------------------------
channels = st.sampled_from(["messages", "__start__", "branch:to:a", "branch:to:b", "x"])
versions = (st.integers(1, 50).map(lambda n: f"{n:032}.0.{n * 7919 % 1000}") | st.integers(1, 50)
            | st.sampled_from(["7", "00042.0.1"]))
version_maps = st.dictionaries(channels, versions, max_size=5)
headers = st.fixed_dictionaries({"v": st.sampled_from([1, 4]), "ts": st.text(max_size=6)},
                                optional={"updated_channels": st.none() | st.lists(channels, max_size=3, unique=True)})
nodes = st.sampled_from(["__input__", "__start__", "a", "b"])


@st.composite
def parent_and_child(draw):
    """A parent's fields and a child's: as LangGraph steps them (the nodes that ran saw the parent's
    versions of their triggers), or any change at all."""
    parent = Fields(draw(headers), draw(version_maps), draw(st.dictionaries(nodes, version_maps, max_size=3)),
                    draw(st.dictionaries(st.sampled_from(["step", "source", "run_id"]), json_values, max_size=3)))
    seen = dict(draw(st.dictionaries(nodes, version_maps, max_size=3)) if draw(st.booleans()) else parent.seen)
    for node in draw(st.lists(nodes, max_size=2)):
        triggers = draw(st.lists(st.sampled_from(sorted(parent.versions) or ["x"]), max_size=2))
        seen[node] = {**seen.get(node, {}), **{ch: parent.versions[ch] for ch in triggers if ch in parent.versions}}
    child = Fields(draw(headers), draw(version_maps), seen,
                   draw(st.dictionaries(st.sampled_from(["step", "source", "parents"]), json_values, max_size=3)))
    return parent, child, draw(st.lists(channels, max_size=3, unique=True))


@settings(max_examples=examples(300), deadline=None)
@given(parent_and_child())
def test_a_delta_record_gives_back_exactly_the_fields_it_was_taken_from(case):
    parent, child, stored = case
    record = json.loads(json.dumps(diff_record(parent, child, stored)))
    assert apply_record(parent, record, stored) == child


def test_a_loop_step_is_stored_as_a_few_names_and_one_version():
    v1, v2 = "0" * 31 + "1.0.5", "0" * 31 + "2.0.7"
    parent = Fields({"v": 4, "ts": "t1", "updated_channels": ["branch:to:a"]}, {"messages": v1, "branch:to:a": v1},
                    {"__start__": {"__start__": v1}}, {"source": "loop", "step": 0})
    child = Fields({"v": 4, "ts": "t2", "updated_channels": ["branch:to:b", "messages"]},
                   {"messages": v2, "branch:to:a": v2, "branch:to:b": v2},
                   {"__start__": {"__start__": v1}, "a": {"branch:to:a": v1}}, {"source": "loop", "step": 1})
    record = diff_record(parent, child, ["messages", "branch:to:b"])
    assert record == {"header": {"ts": "t2"}, "versions": [[[2, "0.7"], "messages", "branch:to:a", "branch:to:b"]],
                      "seen": {"a": ["branch:to:a"]}, "meta": {"step": 1}}
