"""The ledger saver beyond the conformance suite: the sync API, reopening from disk and from other
processes, torn and garbled lines, two writers, interrupts, subgraphs, growth, readability, and
the react graph continuing a session."""

from __future__ import annotations

import copy
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Annotated

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage, messages_to_dict
from langgraph.checkpoint.base import get_checkpoint_metadata
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from paicli.graphs.react import build_graph
from paicli.memory.ledger.saver import JsonlLedgerSaver, LedgerWarning
from paicli.nodes.core.state import Deps, RunContext
from tests.graphs.conftest import assert_paired
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

ROOT = Path(__file__).resolve().parents[2]
THREAD = "session-1764400000000-6f1c2a8e-3b7d-4e59-9a0c-d2f4b6e8a1c3"
CONFIG = {"configurable": {"thread_id": THREAD}}


class State(TypedDict):
    messages: Annotated[list, add_messages]


def tool_loop(saver, calls: int = 2):
    """agent ⇄ tool: the agent calls the tool ``calls`` times per user message, then answers."""

    def agent(state: State) -> dict:
        since_user = len(state["messages"]) - max(i for i, m in enumerate(state["messages"]) if isinstance(m, HumanMessage))
        n = len(state["messages"])
        if since_user // 2 >= calls:
            return {"messages": [AIMessage(f"answer {n}")]}
        return {"messages": [AIMessage(f"call {n}", tool_calls=[{"name": "t", "args": {"n": n}, "id": f"c{n}"}])]}

    def tool(state: State) -> dict:
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(f"result of {call['id']}", tool_call_id=call["id"])]}

    return wire_tool_loop(agent, tool, saver)


def ledger(tmp_path: Path) -> Path:
    return tmp_path / f"{THREAD}.jsonl"


def lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def wire_tool_loop(agent, tool, saver):
    """agent → (tool calls?) → tool → agent, the shape every test graph here has."""
    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tool", tool)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", lambda s: "tool" if s["messages"][-1].tool_calls else END, ["tool", END])
    builder.add_edge("tool", "agent")
    return builder.compile(checkpointer=saver)


def chat(graph, *texts: str) -> list:
    for text in texts:
        graph.invoke({"messages": [HumanMessage(text)]}, CONFIG)
    return graph.get_state(CONFIG).values["messages"]


def run_python(code: str, *args: str, **kwargs) -> subprocess.CompletedProcess:
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=True, **kwargs)


# -- the sync API and reopening ---------------------------------------------------------------
def test_sync_runs_are_saved_and_a_new_saver_reads_them_back(tmp_path):
    graph = tool_loop(JsonlLedgerSaver(tmp_path))
    messages = chat(graph, "first", "second")
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai", "tool", "ai"] * 2
    history = list(graph.get_state_history(CONFIG))

    again = tool_loop(JsonlLedgerSaver(tmp_path))
    assert again.get_state(CONFIG).values["messages"] == messages
    assert [s.config for s in again.get_state_history(CONFIG)] == [s.config for s in history]
    assert again.get_state(history[5].config).values == history[5].values


@pytest.mark.process
def test_another_process_reads_the_latest_state(tmp_path):
    writer = """
        from tests.unit.test_ledger import tool_loop, chat
        from paicli.memory.ledger.saver import JsonlLedgerSaver
        chat(tool_loop(JsonlLedgerSaver(sys.argv[1])), "from process one")
    """
    reader = """
        import json
        from paicli.memory.ledger.saver import JsonlLedgerSaver
        from tests.unit.test_ledger import CONFIG
        state = JsonlLedgerSaver(sys.argv[1]).get_tuple(CONFIG)
        print(json.dumps([[m.type, m.content] for m in state.checkpoint["channel_values"]["messages"]]))
    """
    run_python(writer, str(tmp_path))
    seen = json.loads(run_python(reader, str(tmp_path)).stdout)
    assert seen[0] == ["human", "from process one"] and seen[-1][0] == "ai" and len(seen) == 6


# -- damaged files --------------------------------------------------------------------------------
def test_a_torn_last_line_is_skipped_with_a_warning_and_the_next_append_starts_clean(tmp_path):
    before = chat(tool_loop(JsonlLedgerSaver(tmp_path)), "first")
    path = ledger(tmp_path)
    with open(path, "ab") as f:  # a crash in the middle of a write
        f.write(lines(path)[-1][:40])

    with pytest.warns(LedgerWarning, match=rf"{path.name}：跳过了 1 行无法读取的内容"):
        graph = tool_loop(JsonlLedgerSaver(tmp_path))
        assert graph.get_state(CONFIG).values["messages"] == before
    after = chat(graph, "second")
    assert after[:len(before)] == before and after[-1].content.startswith("answer")

    unreadable = [line for line in lines(path) if not _parses(line)]
    assert len(unreadable) == 1 and len(unreadable[0]) == 40  # the torn line, closed off, nothing else
    with pytest.warns(LedgerWarning, match="跳过了 1 行无法读取的内容"):
        assert tool_loop(JsonlLedgerSaver(tmp_path)).get_state(CONFIG).values["messages"] == after


def test_a_garbled_line_in_the_middle_costs_only_itself(tmp_path):
    graph = tool_loop(JsonlLedgerSaver(tmp_path))
    messages = chat(graph, "first", "second")
    history = [s.config for s in graph.get_state_history(CONFIG)]
    path = ledger(tmp_path)
    content = lines(path)
    content.insert(len(content) // 2, b'{"schemaVersion":1,"sequence":"oops", garbage \xff')
    path.write_bytes(b"\n".join(content) + b"\n")

    with pytest.warns(LedgerWarning, match="跳过了 1 行无法读取的内容"):
        reopened = tool_loop(JsonlLedgerSaver(tmp_path))
        assert reopened.get_state(CONFIG).values["messages"] == messages
    assert [s.config for s in reopened.get_state_history(CONFIG)] == history


def test_a_garbled_checkpoint_line_hides_only_the_checkpoints_built_on_it(tmp_path):
    graph = tool_loop(JsonlLedgerSaver(tmp_path, full_every=4), calls=5)
    messages = chat(graph, "first")
    total = len(list(graph.get_state_history(CONFIG)))
    path = ledger(tmp_path)
    content = lines(path)
    views = [i for i, line in enumerate(content) if b'"event":"view_checkpoint"' in line]
    content[views[2]] = b"x" * len(content[views[2]])
    path.write_bytes(b"\n".join(content) + b"\n")

    with pytest.warns(LedgerWarning, match=r"跳过了 1 行无法读取的内容（写了一半或已损坏），以及 [1-3] 个建立在丢失行上的检查点"):
        reopened = tool_loop(JsonlLedgerSaver(tmp_path, full_every=4), calls=5)
        assert reopened.get_state(CONFIG).values["messages"] == messages  # the chain restarts in full
    assert total - 4 <= len(list(reopened.get_state_history(CONFIG))) < total


def test_rewrites_store_the_new_list_by_reference_and_only_changed_messages_again(tmp_path):
    def rewrite(state: State) -> dict:
        first, *_rest, last = state["messages"]
        if last.content == "edit":  # replace one message by id: a new event for it, the rest referenced
            return {"messages": [first.model_copy(update={"content": "first, edited"})]}
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), first, AIMessage("inserted", id="ins"), last]}

    builder = StateGraph(State)
    builder.add_node("rewrite", rewrite)
    builder.add_edge(START, "rewrite")
    builder.add_edge("rewrite", END)
    graph = builder.compile(checkpointer=JsonlLedgerSaver(tmp_path))
    graph.invoke({"messages": [HumanMessage("first", id="a"), AIMessage("middle", id="b"), HumanMessage("last", id="c")]}, CONFIG)
    graph.invoke({"messages": [HumanMessage("edit", id="d")]}, CONFIG)

    expected = ["first, edited", "inserted", "last", "edit"]
    assert [m.content for m in graph.get_state(CONFIG).values["messages"]] == expected
    reopened = JsonlLedgerSaver(tmp_path)
    assert [m.content for m in reopened.get_tuple(CONFIG).checkpoint["channel_values"]["messages"]] == expected
    events = [json.loads(line) for line in lines(ledger(tmp_path))]
    said = [e["message"]["content"] for e in events if e["message"]]
    assert sorted(said) == sorted(["first", "middle", "last", "inserted", "edit", "first, edited"])  # each once
    views = [e["metadata"]["messages"] for e in events if e["event"] == "view_checkpoint" and "messages" in e["metadata"]]
    assert any("refs" in v and len(v["refs"]) == 3 for v in views[1:])  # the rewritten list, in full


# -- several writers ---------------------------------------------------------------------------
@pytest.mark.process
def test_two_processes_appending_to_one_session_keep_every_line_whole_and_in_sequence(tmp_path):
    worker = """
        import time
        from pathlib import Path
        from langchain_core.messages import AIMessage
        from langgraph.checkpoint.base.id import uuid6
        from paicli.memory.ledger.saver import JsonlLedgerSaver
        directory, name, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
        saver = JsonlLedgerSaver(directory, fsync="never")
        while not go.exists():
            time.sleep(0.001)
        messages, version, parent = [], None, None
        for i in range(150):
            saver.append_event("shared", "note", source=name, metadata={"i": i})
            messages = messages + [AIMessage(f"{name} {i}", id=f"{name}-{i}")]
            version = saver.get_next_version(version, None)
            checkpoint = {"v": 4, "id": str(uuid6(clock_seq=i)), "ts": "", "channel_values": {"messages": messages},
                          "channel_versions": {"messages": version}, "versions_seen": {}, "updated_channels": None}
            configurable = {"thread_id": "shared", "checkpoint_ns": f"{name}:1", "checkpoint_id": parent}
            stored = saver.put({"configurable": configurable}, checkpoint, {"source": "loop", "step": i}, {"messages": version})
            parent = stored["configurable"]["checkpoint_id"]
    """
    go = tmp_path / "go"
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(worker)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), name, str(go)]) for name in ("a", "b")]
    time.sleep(0.5)
    go.touch()
    assert [p.wait(timeout=60) for p in procs] == [0, 0]

    events = [json.loads(line) for line in lines(tmp_path / "shared.jsonl")]
    sequences = [e["sequence"] for e in events]
    assert sequences == list(range(len(events)))  # unique, increasing, no gaps
    assert len(events) == 2 * 150 * 3  # note + message + view per step and process
    saver = JsonlLedgerSaver(tmp_path)
    for name in ("a", "b"):
        state = saver.get_tuple({"configurable": {"thread_id": "shared", "checkpoint_ns": f"{name}:1"}})
        assert [m.content for m in state.checkpoint["channel_values"]["messages"]] == [f"{name} {i}" for i in range(150)]


# -- interrupts and subgraphs --------------------------------------------------------------------
def approval_graph(saver):
    def ask(state: State) -> dict:
        answer = interrupt({"question": "run rm?"})
        return {"messages": [AIMessage(f"approved: {answer}")]}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


def test_an_interrupt_is_answered_through_a_new_saver(tmp_path):
    first = approval_graph(JsonlLedgerSaver(tmp_path)).invoke({"messages": [HumanMessage("clean up")]}, CONFIG)
    assert first["__interrupt__"][0].value == {"question": "run rm?"}

    graph = approval_graph(JsonlLedgerSaver(tmp_path))
    state = graph.get_state(CONFIG)
    assert state.next == ("ask",) and state.interrupts[0].value == {"question": "run rm?"}
    done = graph.invoke(Command(resume="yes"), CONFIG)
    assert [m.content for m in done["messages"]] == ["clean up", "approved: yes"]


def test_subgraph_checkpoints_live_under_their_namespace_and_resume_from_disk(tmp_path):
    def child_step(state: State) -> dict:
        answer = interrupt("child asks")
        return {"messages": [AIMessage(f"child got {answer}")]}

    child = StateGraph(State)
    child.add_node("child_step", child_step)
    child.add_edge(START, "child_step")
    child.add_edge("child_step", END)

    def parent(saver):
        builder = StateGraph(State)
        builder.add_node("delegate", child.compile())
        builder.add_edge(START, "delegate")
        builder.add_edge("delegate", END)
        return builder.compile(checkpointer=saver)

    parent(JsonlLedgerSaver(tmp_path)).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    saver = JsonlLedgerSaver(tmp_path)
    namespaces = {t.config["configurable"]["checkpoint_ns"] for t in saver.list(CONFIG)}
    assert "" in namespaces and any(ns.startswith("delegate:") for ns in namespaces)

    graph = parent(saver)
    sub = graph.get_state(CONFIG, subgraphs=True).tasks[0].state
    assert sub.config["configurable"]["checkpoint_ns"].startswith("delegate:")
    assert [m.content for m in sub.values["messages"]] == ["go"]
    done = graph.invoke(Command(resume="ok"), CONFIG)
    assert [m.content for m in done["messages"]] == ["go", "child got ok"]


# -- what is on disk --------------------------------------------------------------------------------
def growth_graph(saver, steps: int):
    """One node adding one ~2 KB message per step, ``steps`` times."""

    def add(state: State) -> dict:
        n = len(state["messages"])
        return {"messages": [AIMessage(" ".join(f"word{n}-{i}" for i in range(220))[:2000], id=f"m{n}")]}

    builder = StateGraph(State)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    builder.add_conditional_edges("add", lambda s: "add" if len(s["messages"]) < steps else END, ["add", END])
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("steps", [50, 100])
def test_the_file_grows_linearly_with_the_conversation(tmp_path, steps):
    graph = growth_graph(JsonlLedgerSaver(tmp_path), steps)
    graph.invoke({"messages": []}, {**CONFIG, "recursion_limit": 1000})
    messages = graph.get_state(CONFIG).values["messages"]
    raw = len(json.dumps(messages_to_dict(messages)))
    checkpoints = len(list(graph.get_state_history(CONFIG)))
    size = ledger(tmp_path).stat().st_size
    assert len(messages) == steps and checkpoints == steps + 2
    # Each message once (about its own size), plus a bounded record per checkpoint and write.
    assert size <= 1.5 * raw + 600 * checkpoints, (size, raw, checkpoints)
    assert size <= 1.25 * raw + 1200 * checkpoints  # a whole-list copy per step would be 25 × raw here


def test_a_person_reads_the_conversation_in_order(tmp_path):
    messages = chat(tool_loop(JsonlLedgerSaver(tmp_path)), "first", "second")
    events = [json.loads(line) for line in lines(ledger(tmp_path))]
    assert all({"sequence", "event", "actor", "mode", "source"} <= set(e) for e in events)
    assert [list(e) for e in events] == [["schemaVersion", "sessionId", "sequence", "timestamp", "event", "mode",
                                          "actor", "source", "message", "metadata"]] * len(events)
    assert [e["sequence"] for e in events] == sorted({e["sequence"] for e in events})
    said = [(e["message"]["role"], e["message"]["content"]) for e in events if e["message"]]
    assert said == [({"human": "user", "ai": "assistant", "tool": "tool"}[m.type], m.content) for m in messages]
    assert [e["event"] for e in events if e["message"]][:4] == ["user", "tool_call", "tool_result", "tool_call"]


def test_files_are_private(tmp_path):
    home = tmp_path / "history" / "raw"
    chat(tool_loop(JsonlLedgerSaver(home)), "secret")
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(ledger(home).stat().st_mode) == 0o600


def test_thread_ids_must_be_plain_file_names(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)
    for bad in ("../escape", "a/b", "", "x y"):
        with pytest.raises(ValueError, match="must match"):
            saver.get_tuple({"configurable": {"thread_id": bad}})


# -- the CLI's extras ----------------------------------------------------------------------------
def test_cli_events_and_the_session_list(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)
    chat(tool_loop(saver), "  修复登录页面的 bug\n然后跑测试")
    time.sleep(0.002)
    other = {"configurable": {"thread_id": "session-2"}}
    tool_loop(saver).invoke({"messages": [HumanMessage("later")]}, other)
    time.sleep(0.002)  # last_activity is in milliseconds: make the clear strictly later
    sequence = saver.append_event(THREAD, "history_clear", source="slash_clear", metadata={"discardedViewMessages": 6})

    newest, older = saver.sessions()
    assert newest["id"] == THREAD and older["id"] == "session-2"  # the clear made THREAD the latest
    assert newest["title"] == "修复登录页面的 bug 然后跑测试" and newest["messages"] == 6 and newest["mode"] == "react"
    assert newest["started"] <= newest["last_activity"]
    event = json.loads(lines(ledger(tmp_path))[-1])
    assert event["sequence"] == sequence and event["event"] == "history_clear" and event["message"] is None
    assert event["metadata"] == {"discardedViewMessages": 6} and event["source"] == "slash_clear"
    with pytest.raises(ValueError, match="checkpointer itself"):
        saver.append_event(THREAD, "view_checkpoint")
    assert tool_loop(JsonlLedgerSaver(tmp_path)).get_state(CONFIG).values["messages"][0].content.startswith("  修复")


def test_a_compaction_left_in_state_becomes_a_compaction_event_before_its_view(tmp_path):
    class Compacting(State):
        compaction: dict

    def compact(state: Compacting) -> dict:
        record = {"source": "automatic:full_summary", "mode": "react",
                  "metadata": {"beforeMessages": 3, "afterMessages": 2, "beforeTokens": 900, "afterTokens": 300}}
        return {"messages": [AIMessage("summary", id="sum")], "compaction": record}

    builder = StateGraph(Compacting)
    builder.add_node("compact", compact)
    builder.add_edge(START, "compact")
    builder.add_edge("compact", END)
    builder.compile(checkpointer=JsonlLedgerSaver(tmp_path)).invoke({"messages": [HumanMessage("long")]}, CONFIG)

    events = [json.loads(line) for line in lines(ledger(tmp_path))]
    names = [e["event"] for e in events]
    assert names.count("compaction") == 1
    compaction = events[names.index("compaction")]
    assert compaction["source"] == "automatic:full_summary" and compaction["message"] is None
    assert compaction["metadata"] == {"beforeMessages": 3, "afterMessages": 2, "beforeTokens": 900, "afterTokens": 300}
    # the compaction, then the view it produced (the summary's own event may come between: LangGraph
    # hands the step's writes and its checkpoint to the saver from two threads, in either order)
    after = names.index("compaction")
    view = events[after + names[after:].index("view_checkpoint")]
    summary = next(e["sequence"] for e in events if e["event"] == "assistant")
    assert summary in view["metadata"]["messages"]["append"]


def test_delete_thread_removes_the_file_and_its_lock(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)
    chat(tool_loop(saver), "bye")
    saver.delete_thread(THREAD)
    assert list(tmp_path.iterdir()) == []
    assert saver.get_tuple(CONFIG) is None


def test_prune_and_copy_append_rather_than_rewrite(tmp_path):
    saver = JsonlLedgerSaver(tmp_path)
    messages = chat(tool_loop(saver), "one")
    saver.copy_thread(THREAD, "copy-1")
    size = ledger(tmp_path).stat().st_size
    saver.prune([THREAD])
    assert ledger(tmp_path).stat().st_size > size  # a checkpoint_prune event, earlier lines untouched
    reopened = JsonlLedgerSaver(tmp_path)
    assert len(list(reopened.list(CONFIG))) == 1
    assert reopened.get_tuple(CONFIG).checkpoint["channel_values"]["messages"] == messages
    copied = [json.loads(line) for line in lines(tmp_path / "copy-1.jsonl")]
    assert {e["sessionId"] for e in copied} == {"copy-1"}
    assert len(list(reopened.list({"configurable": {"thread_id": "copy-1"}}))) > 1


async def test_prune_keeps_langgraphs_contract_for_its_arguments(tmp_path):
    # issue 35: what PostgresSaver.prune refuses, the ledger refuses, sync and async (the server prunes with aprune)
    saver = JsonlLedgerSaver(tmp_path)
    chat(tool_loop(saver), "one")
    size = ledger(tmp_path).stat().st_size
    with pytest.raises(TypeError):
        saver.prune(THREAD)  # one thread per character, were it read as a sequence
    with pytest.raises(TypeError):
        await saver.aprune(THREAD)
    with pytest.raises(ValueError):
        await saver.aprune([THREAD], strategy="delete_all")
    assert ledger(tmp_path).stat().st_size == size
    await saver.aprune([THREAD], strategy="delete")
    assert saver.get_tuple(CONFIG) is None


# -- crashes ------------------------------------------------------------------------------------------
@pytest.mark.process
def test_a_kill_while_a_tool_runs_keeps_every_completed_message(tmp_path):
    started = tmp_path / "tool-started"
    crasher = """
        import time
        from pathlib import Path
        from langchain_core.messages import HumanMessage
        from tests.unit.test_ledger import CONFIG, slow_tool_graph
        from paicli.memory.ledger.saver import JsonlLedgerSaver
        graph = slow_tool_graph(JsonlLedgerSaver(sys.argv[1]), Path(sys.argv[2]))
        # durability="sync": a step's checkpoint is on disk before the next step starts (with
        # LangGraph's default "async" it is saved while the next step already runs)
        graph.invoke({"messages": [HumanMessage("run the slow tool")]}, CONFIG, durability="sync")
    """
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(crasher)
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "raw"), str(started)])
    deadline = time.monotonic() + 120  # bounds a hung child; on a loaded machine its imports alone take 30 s
    while not started.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the slow tool never started"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    graph = slow_tool_graph(JsonlLedgerSaver(tmp_path / "raw"), started)
    state = graph.get_state(CONFIG)
    assert [m.content for m in state.values["messages"]] == ["run the slow tool", "calling slow"]
    assert state.next == ("tool",)
    done = graph.invoke(None, CONFIG)  # runs the interrupted tool again (it is quick the second time)
    assert [m.type for m in done["messages"]] == ["human", "ai", "tool", "ai"]
    assert_paired(done["messages"])


def slow_tool_graph(saver, started: Path):
    """agent calls ``slow`` once; the tool hangs the first time (its marker file does not exist yet)."""

    def agent(state: State) -> dict:
        if isinstance(state["messages"][-1], ToolMessage):
            return {"messages": [AIMessage("done")]}
        return {"messages": [AIMessage("calling slow", tool_calls=[{"name": "slow", "args": {}, "id": "s1"}])]}

    def tool(state: State) -> dict:
        if not started.exists():
            started.touch()
            time.sleep(60)
        return {"messages": [ToolMessage("slow result", tool_call_id="s1")]}

    return wire_tool_loop(agent, tool, saver)


# -- the react graph ------------------------------------------------------------------------------
async def run_react(model: ScriptedChatModel, saver: JsonlLedgerSaver, project: Path, text: str) -> None:
    graph = build_graph(Deps(model=model), checkpointer=saver)
    context = RunContext(project_root=str(project), approval="yes", session_id=THREAD)
    async for _ in graph.astream({"messages": [HumanMessage(text)]}, CONFIG, context=context, stream_mode="updates"):
        pass


async def test_the_react_graph_continues_a_session_from_a_new_saver(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("the password is swordfish")
    first = ScriptedChatModel([ai("读一下", tool_call("read_file", {"path": "notes.txt"})), ai("读完了")])
    await run_react(first, JsonlLedgerSaver(tmp_path / "raw"), project, "看看 notes.txt")
    first.assert_consumed()

    second = ScriptedChatModel([ai("是 swordfish")])
    await run_react(second, JsonlLedgerSaver(tmp_path / "raw"), project, "密码是什么?")
    second.assert_consumed()
    seen = second.seen[0][1:]  # after the system prompt
    assert [m.type for m in seen] == ["human", "ai", "tool", "ai", "human"]
    assert seen[0].content == "看看 notes.txt" and "swordfish" in seen[2].content and seen[-1].content == "密码是什么?"
    assert_paired(seen)


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


# -- compact records (issue 3: bytes ≤ 1.5× the messages) ---------------------------------------
class Recording(JsonlLedgerSaver):
    """Keeps a copy of every checkpoint LangGraph puts, to compare with what is read back."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.puts: dict[str, tuple[dict, dict]] = {}

    def put(self, config, checkpoint, metadata, new_versions):
        self.puts[checkpoint["id"]] = copy.deepcopy((checkpoint, get_checkpoint_metadata(config, metadata)))
        return super().put(config, checkpoint, metadata, new_versions)


@pytest.mark.parametrize("full_every", [3, 64])
def test_a_fresh_saver_reads_back_every_checkpoint_exactly_as_it_was_put(tmp_path, full_every):
    saver = Recording(tmp_path, full_every=full_every)
    graph = tool_loop(saver, calls=3)
    for text in ("first", "second"):  # with ids: add_messages would give them ids while put runs
        graph.invoke({"messages": [HumanMessage(text, id=text)]}, CONFIG)
    other = {"configurable": {"thread_id": "other"}}
    approval_graph(saver).invoke({"messages": [HumanMessage("clean up", id="h")]}, other)
    approval_graph(saver).invoke(Command(resume="yes"), other)

    fresh = JsonlLedgerSaver(tmp_path)
    read = list(fresh.list(None))
    assert sorted(t.checkpoint["id"] for t in read) == sorted(saver.puts)
    for item in read:
        checkpoint, metadata = saver.puts[item.checkpoint["id"]]
        assert item.checkpoint == checkpoint  # header (v, ts, updated_channels), versions, versions_seen, values
        assert item.metadata == metadata
    assert [t.pending_writes for t in read] == [t.pending_writes for t in saver.list(None)]


async def test_a_step_is_a_compact_view_and_its_write_refers_to_the_message_event(tmp_path):
    # The async API with durability="sync", as the CLI runs. (The sync API stores a message that
    # has no id yet inline in its write, since ids are given on the event loop: see ledger.py.)
    graph = tool_loop(JsonlLedgerSaver(tmp_path), calls=1)
    await graph.ainvoke({"messages": [HumanMessage("first")]}, CONFIG, durability="sync")
    events = [json.loads(line) for line in lines(ledger(tmp_path))]
    (result,) = [e for e in events if e["event"] == "tool_result"]  # the message is written once
    # LangGraph hands writes to the saver in the background, so the tool node's write is either
    # carried by the message event it brought or, when the message reached the file first, a
    # pending_write line of its own; either way it is on disk and points at that event.
    writes = [e["metadata"] for e in events if e["event"] == "pending_write"]
    writes += [e["metadata"]["pendingWrite"] for e in events if "pendingWrite" in (e["metadata"] or {})]
    tool_writes = [w for w in writes if w["writes"][0] == [0, "messages", [{"$msg": result["sequence"]}]]]
    assert len(tool_writes) == 1 and "checkpointNs" not in tool_writes[0]
    view = next(e for e in events[result["sequence"]:] if e["event"] == "view_checkpoint")["metadata"]
    assert list(view) == ["checkpointId", "parentId", "header", "versions", "seen", "meta", "messages", "channels"]
    assert list(view["header"]) == ["ts"] and view["meta"] == {"step": 2}
    assert view["seen"] == {"tool": ["branch:to:tool"]} and view["messages"] == {"append": [result["sequence"]]}


@pytest.mark.process
def test_a_write_on_disk_before_a_kill_is_not_run_again(tmp_path):
    crasher = """
        from pathlib import Path
        from langchain_core.messages import HumanMessage
        from tests.unit.test_ledger import CONFIG, fan_out_graph
        from paicli.memory.ledger.saver import JsonlLedgerSaver
        graph = fan_out_graph(JsonlLedgerSaver(sys.argv[1]), Path(sys.argv[2]))
        graph.invoke({"messages": [HumanMessage("go")]}, CONFIG)
    """
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(crasher)
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "raw"), str(tmp_path)])
    deadline = time.monotonic() + 120  # bounds a hung child; on a loaded machine its imports alone take 30 s
    while not ((tmp_path / "slow-started").exists() and b'"content":"fast"' in _read_or_empty(ledger(tmp_path / "raw"))):
        assert time.monotonic() < deadline and proc.poll() is None, "slow never started or fast's write never landed"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    graph = fan_out_graph(JsonlLedgerSaver(tmp_path / "raw"), tmp_path)
    assert graph.get_state(CONFIG).next == ("slow",)  # fast's write is there: only slow is left
    done = graph.invoke(None, CONFIG)
    assert sorted(m.content for m in done["messages"]) == ["fast", "go", "slow"]
    assert (tmp_path / "fast-runs").read_text() == "x"  # fast ran once


def fan_out_graph(saver, where: Path):
    """START → fast and slow in one step; slow hangs the first time."""

    def fast(state: State) -> dict:
        with open(where / "fast-runs", "a") as f:
            f.write("x")
        return {"messages": [AIMessage("fast", id="fast")]}

    def slow(state: State) -> dict:
        if not (where / "slow-started").exists():
            (where / "slow-started").touch()
            time.sleep(60)
        return {"messages": [AIMessage("slow", id="slow")]}

    builder = StateGraph(State)
    builder.add_node("fast", fast)
    builder.add_node("slow", slow)
    builder.add_edge(START, "fast")
    builder.add_edge(START, "slow")
    return builder.compile(checkpointer=saver)


def test_the_session_list_counts_the_latest_view_not_every_message(tmp_path):
    def reply(state: State) -> dict:
        if state["messages"][-1].content == "compact":
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), AIMessage("summary", id="sum")]}
        return {"messages": [AIMessage("ok", id=f"ok{len(state['messages'])}")]}

    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    saver = JsonlLedgerSaver(tmp_path)
    assert len(chat(builder.compile(checkpointer=saver), "a", "b", "compact")) == 1
    assert saver.sessions()[0]["messages"] == 1  # 6 message events, a view of one


def test_a_growing_conversation_costs_at_most_half_its_size_again(tmp_path):
    graph = growth_graph(JsonlLedgerSaver(tmp_path), 100)
    graph.invoke({"messages": []}, {**CONFIG, "recursion_limit": 1000})
    raw = len(json.dumps(messages_to_dict(graph.get_state(CONFIG).values["messages"])))
    assert ledger(tmp_path).stat().st_size <= 1.5 * raw


# A ledger written before the compact records (commit bce2ae4): ``checkpointNs`` always there,
# ``channelVersionsDelta`` / ``versionsSeenDelta`` / ``checkpointMetadataDelta``, a full header on
# every view, the base named in every append, each write a ``pending_write`` line.
FIRST_FORMAT = """\
{"schemaVersion":1,"sessionId":"old","sequence":0,"timestamp":1795982537236,"event":"user","mode":"react","actor":"agent","source":"user_input","message":{"role":"user","content":"hi","reasoningContent":null,"toolCalls":null,"toolCallId":null,"contentParts":null},"metadata":{"lc":{"id":"h1"}}}
{"schemaVersion":1,"sessionId":"old","sequence":1,"timestamp":1795982537236,"event":"view_checkpoint","mode":"react","actor":"agent","source":"input","message":null,"metadata":{"checkpointNs":"","checkpointId":"1f1ec2fc-70d2-6967-bfff-a44c78b43afd","parentId":null,"checkpoint":{"v":4,"ts":"2026-11-29T20:02:17.234256+00:00","updated_channels":["__start__"]},"channelVersions":{"__start__":[1,"0.3125921009934861"]},"versionsSeen":{"__input__":{}},"checkpointMetadata":{"source":"input","step":-1,"parents":{}},"channels":{"__start__":{"messages":[{"$msg":0}]}}}}
{"schemaVersion":1,"sessionId":"old","sequence":2,"timestamp":1795982537237,"event":"pending_write","mode":"react","actor":"agent","source":"task_writes","message":null,"metadata":{"checkpointNs":"","checkpointId":"1f1ec2fc-70d2-6967-bfff-a44c78b43afd","taskId":"c3808479-0df5-41f2-da95-b06df6f1cc10","taskPath":"~__pregel_pull, __start__","writes":[[0,"messages",[{"$msg":0}]],[1,"branch:to:reply",null]]}}
{"schemaVersion":1,"sessionId":"old","sequence":3,"timestamp":1795982537238,"event":"view_checkpoint","mode":"react","actor":"agent","source":"loop","message":null,"metadata":{"checkpointNs":"","checkpointId":"1f1ec2fc-70d3-6dba-8000-633be4c50717","parentId":"1f1ec2fc-70d2-6967-bfff-a44c78b43afd","checkpoint":{"v":4,"ts":"2026-11-29T20:02:17.234774+00:00","updated_channels":["branch:to:reply","messages"]},"channelVersionsDelta":{"set":[[[2,"0.910937994698436"],"__start__","messages","branch:to:reply"]]},"versionsSeenDelta":{"set":{"__start__":{"__start__":[1,"0.3125921009934861"]}}},"checkpointMetadataDelta":{"set":{"source":"loop","step":0}},"messages":{"refs":[0]},"channels":{"branch:to:reply":null}}}
{"schemaVersion":1,"sessionId":"old","sequence":4,"timestamp":1795982537238,"event":"assistant","mode":"react","actor":"agent","source":"llm_response","message":{"role":"assistant","content":"hello","reasoningContent":null,"toolCalls":null,"toolCallId":null,"contentParts":null},"metadata":{"lc":{"id":"a1"}}}
{"schemaVersion":1,"sessionId":"old","sequence":5,"timestamp":1795982537238,"event":"pending_write","mode":"react","actor":"agent","source":"task_writes","message":null,"metadata":{"checkpointNs":"","checkpointId":"1f1ec2fc-70d3-6dba-8000-633be4c50717","taskId":"1a537c58-35c5-3917-ca85-2dcdcfe67fe1","taskPath":"~__pregel_pull, reply","writes":[[0,"messages",[{"$msg":4}]]]}}
{"schemaVersion":1,"sessionId":"old","sequence":6,"timestamp":1795982537238,"event":"view_checkpoint","mode":"react","actor":"agent","source":"loop","message":null,"metadata":{"checkpointNs":"","checkpointId":"1f1ec2fc-70d6-654b-8001-5705f5d6c43b","parentId":"1f1ec2fc-70d3-6dba-8000-633be4c50717","checkpoint":{"v":4,"ts":"2026-11-29T20:02:17.235789+00:00","updated_channels":["messages"]},"channelVersionsDelta":{"set":[[[3,"0.39350915521548635"],"messages","branch:to:reply"]]},"versionsSeenDelta":{"set":{"reply":{"branch:to:reply":[2,"0.910937994698436"]}}},"checkpointMetadataDelta":{"set":{"step":1}},"messages":{"base":"1f1ec2fc-70d3-6dba-8000-633be4c50717","append":[4]}}}
"""


def test_a_ledger_in_the_first_format_still_loads_and_continues(tmp_path):
    (tmp_path / "old.jsonl").write_text(FIRST_FORMAT)
    config = {"configurable": {"thread_id": "old"}}
    saver = JsonlLedgerSaver(tmp_path)
    latest = saver.get_tuple(config)
    assert [m.content for m in latest.checkpoint["channel_values"]["messages"]] == ["hi", "hello"]
    assert latest.checkpoint["updated_channels"] == ["messages"] and latest.metadata["step"] == 1
    assert latest.checkpoint["versions_seen"]["reply"] == {"branch:to:reply": f"{2:032}.0.910937994698436"}
    assert latest.checkpoint["channel_versions"]["messages"] == f"{3:032}.0.39350915521548635"
    assert len(list(saver.list(config))) == 3

    def reply(state: State) -> dict:
        return {"messages": [AIMessage(f"reply {len(state['messages'])}")]}

    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    builder.compile(checkpointer=saver).invoke({"messages": [HumanMessage("again")]}, config)
    again = JsonlLedgerSaver(tmp_path).get_tuple(config)
    assert [m.content for m in again.checkpoint["channel_values"]["messages"]] == ["hi", "hello", "again", "reply 3"]


def _read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def test_a_put_that_fails_before_reaching_the_file_leaves_nothing_the_next_put_builds_on(tmp_path):
    """The failed put indexed its new message before a channel value refused to encode: the
    next put must write that message itself, not refer to an event the file never got."""
    import threading

    from langgraph.checkpoint.base import empty_checkpoint

    saver, config = JsonlLedgerSaver(tmp_path), {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
    question = HumanMessage("第一个问题", id="m1")
    broken = empty_checkpoint()
    broken["channel_values"] = {"messages": [question], "unencodable": threading.Lock()}
    broken["channel_versions"] = {"messages": 1, "unencodable": 1}
    with pytest.raises(TypeError):
        saver.put(config, broken, {}, {"messages": 1, "unencodable": 1})
    good = empty_checkpoint()
    good["channel_values"] = {"messages": [question, AIMessage("回答", id="m2")]}
    good["channel_versions"] = {"messages": 2}
    saver.put(config, good, {}, {"messages": 2})
    for reader in (saver, JsonlLedgerSaver(tmp_path)):
        messages = reader.get_tuple(config).checkpoint["channel_values"]["messages"]
        assert [(m.id, m.content) for m in messages] == [("m1", "第一个问题"), ("m2", "回答")]
