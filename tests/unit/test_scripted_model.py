"""The scripted chat model behaves like a provider: in order, streamed, recorded, strict."""

import asyncio
import json
from typing import Annotated, TypedDict

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel

from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


@tool
def read_file(path: str) -> str:
    """Read a file from the workspace."""
    return f"contents of {path}"


class State(TypedDict):
    messages: Annotated[list, add_messages]


def react_graph(model: ScriptedChatModel):
    """The smallest ReAct loop: model node, ToolNode, back to the model."""
    bound = model.bind_tools([read_file])
    builder = StateGraph(State)
    builder.add_node("agent", lambda s: {"messages": [bound.invoke(s["messages"])]})
    builder.add_node("tools", ToolNode([read_file]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def merged(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def test_invoke_returns_steps_in_order_and_counts_calls():
    model = ScriptedChatModel([ai("one"), ai("two")])
    assert [model.invoke("a").content, model.invoke("b").content] == ["one", "two"]
    assert model.calls == 2
    model.assert_consumed()


def test_seen_holds_deep_copies_of_each_prompt():
    model = ScriptedChatModel([ai("ok")])
    prompt = [HumanMessage("read a.txt")]
    model.invoke(prompt)
    prompt[0].content = "changed later"
    assert model.seen == [[HumanMessage("read a.txt")]]


def test_bind_tools_records_schemas_and_shares_the_script():
    model = ScriptedChatModel([ai("first"), ai("second")])
    bound = model.bind_tools([read_file], tool_choice="auto")
    assert bound.invoke("x").content == "first"
    assert model.invoke("y").content == "second"
    assert [t["function"]["name"] for t in model.bound_tools] == ["read_file"]
    assert model.bindings[0]["kwargs"] == {"tool_choice": "auto"}
    assert [len(tools) for tools in model.seen_tools] == [1, 0]
    assert model.calls == bound.calls == 2


def test_with_structured_output_parses_a_scripted_tool_call():
    class Plan(BaseModel):
        steps: list[str]

    model = ScriptedChatModel([ai("", tool_call("Plan", {"steps": ["read", "edit"]}))])
    assert model.with_structured_output(Plan).invoke("plan") == Plan(steps=["read", "edit"])
    assert model.bound_tools[0]["function"]["name"] == "Plan"


def test_missing_tool_call_ids_get_stable_ids():
    model = ScriptedChatModel([ai("", tool_call("a"), tool_call("b", id="mine"))])
    assert [c["id"] for c in model.invoke("x").tool_calls] == ["call_0_0", "mine"]


def test_exception_step_is_raised_when_reached():
    model = ScriptedChatModel([ai("fine"), TimeoutError("provider timed out")])
    model.invoke("x")
    with pytest.raises(TimeoutError, match="provider timed out"):
        model.invoke("y")


def test_exhausted_script_raises_with_the_last_messages():
    model = ScriptedChatModel([ai("only")])
    model.invoke("first")
    with pytest.raises(AssertionError, match=r"script exhausted after 1 step.*human: 'again'"):
        model.invoke("again")


def test_assert_consumed_names_the_unused_steps():
    model = ScriptedChatModel([ai("used"), ai("", tool_call("read_file", {"path": "x"}))])
    model.invoke("x")
    with pytest.raises(AssertionError, match=r"1 step\(s\) never used.*read_file"):
        model.assert_consumed()


def test_stream_emits_word_tokens_then_tool_call_chunks_then_a_last_chunk():
    step = ai("Let me look.", tool_call("read_file", {"path": "a.txt"}), usage=(10, 5), id="m1")
    chunks = list(ScriptedChatModel([step]).stream("x"))
    assert [c.content for c in chunks[:3]] == ["Let", " me", " look."]
    assert chunks[3].tool_call_chunks[0]["args"] == '{"path": "a.txt"}'
    assert chunks[-1].chunk_position == "last"
    assert chunks[-1].usage_metadata["total_tokens"] == 15
    assert {c.id for c in chunks} == {"m1"}


def test_streamed_chunks_merge_back_into_the_scripted_message():
    step = ai("thinking done", tool_call("read_file", {"path": "a.txt"}), usage=(3, 4),
              additional_kwargs={"reasoning_content": "I should read it"})
    total = merged(list(ScriptedChatModel([step]).stream("x")))
    assert total.content == "thinking done"
    assert total.tool_calls == [{"name": "read_file", "args": {"path": "a.txt"},
                                 "id": "call_0_0", "type": "tool_call"}]
    assert total.additional_kwargs["reasoning_content"] == "I should read it"
    assert total.usage_metadata["output_tokens"] == 4


def test_tool_call_only_step_streams_without_error():
    chunks = list(ScriptedChatModel([ai("", tool_call("read_file", {"path": "a"}))]).stream("x"))
    assert merged(chunks).tool_calls[0]["name"] == "read_file"


def test_unparsable_tool_args_arrive_as_invalid_tool_calls_when_streamed():
    bad = {"name": "read_file", "args": '{"path": a.txt}', "id": "bad1", "error": "bad json"}
    total = merged(list(ScriptedChatModel([AIMessage("", invalid_tool_calls=[bad])]).stream("x")))
    assert total.tool_calls == []
    # langchain-core re-parses merged chunks and drops the scripted error text.
    assert total.invalid_tool_calls == [{**bad, "error": None, "type": "invalid_tool_call"}]


def test_truncated_tool_args_are_salvaged_into_a_valid_call_when_streamed():
    # Quirk worth knowing: parse_partial_json completes '{"path": "a' to {"path": "a"}.
    cut = {"name": "read_file", "args": '{"path": "a', "id": "cut1", "error": None}
    total = merged(list(ScriptedChatModel([AIMessage("", invalid_tool_calls=[cut])]).stream("x")))
    assert total.tool_calls[0]["args"] == {"path": "a"}
    assert total.invalid_tool_calls == []


def test_invoke_keeps_invalid_tool_calls_with_their_error():
    bad = {"name": "read_file", "args": "not json", "id": "b", "error": "Expecting value"}
    out = ScriptedChatModel([AIMessage("", invalid_tool_calls=[bad])]).invoke("x")
    assert out.invalid_tool_calls[0]["error"] == "Expecting value"


def test_react_graph_streams_tokens_and_tool_calls_in_messages_mode():
    model = ScriptedChatModel([
        ai("Let me read it.", tool_call("read_file", {"path": "a.txt"}), id="m1"),
        ai("It says hi.", id="m2"),
    ])
    events = list(react_graph(model).stream({"messages": [HumanMessage("read a.txt")]},
                                            stream_mode="messages"))
    tokens = [c.content for c, meta in events if meta["langgraph_node"] == "agent" and c.content]
    assert tokens == ["Let", " me", " read", " it.", "It", " says", " hi."]
    calls = [tc for c, _ in events for tc in getattr(c, "tool_call_chunks", [])]
    assert json.loads(calls[0]["args"]) == {"path": "a.txt"}
    assert any(isinstance(c, ToolMessage) for c, _ in events)
    assert [type(m).__name__ for m in model.seen[1]] == ["HumanMessage", "AIMessage", "ToolMessage"]
    model.assert_consumed()


def test_react_graph_state_keeps_ids_usage_and_tool_results():
    model = ScriptedChatModel([
        ai("", tool_call("read_file", {"path": "a.txt"}, id="c1"), usage=(7, 2), id="m1"),
        ai("done", id="m2"),
    ])
    out = react_graph(model).invoke({"messages": [HumanMessage("go")]})
    assert [m.id for m in out["messages"][1::2]] == ["m1", "m2"]
    assert out["messages"][1].usage_metadata["input_tokens"] == 7
    assert out["messages"][2].content == "contents of a.txt"
    assert out["messages"][2].tool_call_id == "c1"


async def test_react_graph_astreams_in_messages_mode():
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "b"})), ai("all good")])
    graph = react_graph(model)
    events = [e async for e in graph.astream({"messages": [HumanMessage("b?")]},
                                             stream_mode="messages")]
    assert "".join(c.content for c, m in events if m["langgraph_node"] == "agent") == "all good"
    model.assert_consumed()


async def test_delay_lets_a_pending_async_call_be_cancelled():
    model = ScriptedChatModel([ai("too late")], delay=5)
    task = asyncio.create_task(model.ainvoke("x"))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert model.calls == 1
