"""The ledger saver beyond the conformance suite: the sync API, reopening from disk and from other
processes, torn and garbled lines, two writers, interrupts, subgraphs, growth, readability, and
the react graph continuing a session."""

from __future__ import annotations

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
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from graphs.react import build_graph
from memory.ledger import JsonlLedgerSaver, LedgerWarning, make_checkpointer
from nodes.state import Deps, RunContext
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

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tool", tool)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", lambda s: "tool" if s["messages"][-1].tool_calls else END, ["tool", END])
    builder.add_edge("tool", "agent")
    return builder.compile(checkpointer=saver)


def ledger(tmp_path: Path) -> Path:
    return tmp_path / f"{THREAD}.jsonl"


def lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


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


def test_another_process_reads_the_latest_state(tmp_path):
    writer = """
        from tests.unit.test_ledger import tool_loop, chat
        from memory.ledger import JsonlLedgerSaver
        chat(tool_loop(JsonlLedgerSaver(sys.argv[1])), "from process one")
    """
    reader = """
        import json
        from memory.ledger import JsonlLedgerSaver
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

    with pytest.warns(LedgerWarning, match=rf"{path.name}: skipped 1 unreadable line"):
        graph = tool_loop(JsonlLedgerSaver(tmp_path))
        assert graph.get_state(CONFIG).values["messages"] == before
    after = chat(graph, "second")
    assert after[:len(before)] == before and after[-1].content.startswith("answer")

    unreadable = [line for line in lines(path) if not _parses(line)]
    assert len(unreadable) == 1 and len(unreadable[0]) == 40  # the torn line, closed off, nothing else
    with pytest.warns(LedgerWarning, match="skipped 1 unreadable"):
        assert tool_loop(JsonlLedgerSaver(tmp_path)).get_state(CONFIG).values["messages"] == after


def test_a_garbled_line_in_the_middle_costs_only_itself(tmp_path):
    graph = tool_loop(JsonlLedgerSaver(tmp_path))
    messages = chat(graph, "first", "second")
    history = [s.config for s in graph.get_state_history(CONFIG)]
    path = ledger(tmp_path)
    content = lines(path)
    content.insert(len(content) // 2, b'{"schemaVersion":1,"sequence":"oops", garbage \xff')
    path.write_bytes(b"\n".join(content) + b"\n")

    with pytest.warns(LedgerWarning, match="skipped 1 unreadable line"):
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

    with pytest.warns(LedgerWarning, match=r"skipped 1 unreadable line\(s\) \(torn or garbled\) and [1-3] checkpoint"):
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
def test_two_processes_appending_to_one_session_keep_every_line_whole_and_in_sequence(tmp_path):
    worker = """
        import time
        from pathlib import Path
        from langchain_core.messages import AIMessage
        from langgraph.checkpoint.base.id import uuid6
        from memory.ledger import JsonlLedgerSaver
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
    view = events[names.index("compaction") + 1]  # the compaction, then the view it produced
    summary = next(e["sequence"] for e in events if e["event"] == "assistant")
    assert view["event"] == "view_checkpoint" and summary in view["metadata"]["messages"]["append"]


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


async def test_make_checkpointer_writes_under_paicli_home(tmp_path, monkeypatch):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path))
    async with make_checkpointer() as saver:
        await tool_loop(saver).ainvoke({"messages": [HumanMessage("hi")]}, CONFIG)
    assert (tmp_path / "history" / "raw" / f"{THREAD}.jsonl").exists()


# -- crashes ------------------------------------------------------------------------------------------
def test_a_kill_while_a_tool_runs_keeps_every_completed_message(tmp_path):
    started = tmp_path / "tool-started"
    crasher = """
        import time
        from pathlib import Path
        from langchain_core.messages import HumanMessage
        from tests.unit.test_ledger import CONFIG, slow_tool_graph
        from memory.ledger import JsonlLedgerSaver
        graph = slow_tool_graph(JsonlLedgerSaver(sys.argv[1]), Path(sys.argv[2]))
        # durability="sync": a step's checkpoint is on disk before the next step starts (with
        # LangGraph's default "async" it is saved while the next step already runs)
        graph.invoke({"messages": [HumanMessage("run the slow tool")]}, CONFIG, durability="sync")
    """
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(crasher)
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "raw"), str(started)])
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
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

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tool", tool)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", lambda s: "tool" if s["messages"][-1].tool_calls else END, ["tool", END])
    builder.add_edge("tool", "agent")
    return builder.compile(checkpointer=saver)


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
