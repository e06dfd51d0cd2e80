from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.memory.context.pairing import CANCELLED_RESULT, repair_pairing, unanswered_calls


def call(cid, name="read_file"):
    return {"name": name, "args": {}, "id": cid, "type": "tool_call"}


def test_complete_history_needs_no_repair():
    history = [HumanMessage("a"), AIMessage("", tool_calls=[call("c1")]), ToolMessage("r", tool_call_id="c1"), AIMessage("done")]
    assert repair_pairing(history) is None


def test_unanswered_calls_get_a_cancelled_result_right_after_their_call():
    history = [
        HumanMessage("a"),
        AIMessage("", tool_calls=[call("c1"), call("c2")]),
        ToolMessage("r1", tool_call_id="c1"),
        HumanMessage("next"),
    ]
    assert unanswered_calls(history) == ["c2"]
    repaired = repair_pairing(history)
    assert [m.type for m in repaired] == ["human", "ai", "tool", "tool", "human"]
    assert repaired[2].tool_call_id == "c2" and repaired[2].content == CANCELLED_RESULT
    assert repair_pairing(repaired) is None


def test_orphan_results_are_dropped_and_invalid_calls_count():
    bad = {"name": "x", "args": "{", "id": "b1", "error": None, "type": "invalid_tool_call"}
    history = [HumanMessage("a"), ToolMessage("stray", tool_call_id="gone"), AIMessage("", invalid_tool_calls=[bad])]
    repaired = repair_pairing(history)
    assert [m.type for m in repaired] == ["human", "ai", "tool"]
    assert repaired[-1].tool_call_id == "b1"


def test_a_cancelled_call_is_a_typed_decision():
    from paicli.memory.context.outcome import is_decided
    repaired = repair_pairing([AIMessage("", tool_calls=[{"id": "c1", "name": "read_file", "args": {}}])])
    assert repaired[1].content == CANCELLED_RESULT and repaired[1].status == "error" and is_decided(repaired[1])
