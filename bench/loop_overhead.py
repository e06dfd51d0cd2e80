"""How much our agent loop and CLI cost on top of LangGraph itself.

Prints, in one run (``python bench/loop_overhead.py``; ``--profile`` adds a cProfile of one
run of each loop, and of the ledger's worker thread in the ledger run):

1. Per-model-call overhead of the react graph against a minimal hand-built LangGraph tool loop,
   on the same scripted session: ``STEPS`` model responses each calling a zero-cost tool, then a
   final answer. The fake model does no waiting, so wall time / model calls is what the
   framework and our nodes cost per step. Rows, run in turn (A B C D A B C D ...): the react
   graph with ``InMemorySaver``; the react graph on the session ledger (``JsonlLedgerSaver``,
   ``durability="sync"`` as ``paicli.run.driver`` runs it: what a user's session pays); the minimal
   loop with ``InMemorySaver``; and deepagents' ``create_deep_agent`` when it is installed
   (``pip install deepagents`` into the bench's venv only; it is never a dependency). All are
   streamed the way ``paicli.run.driver`` streams (``["messages", "updates"]``, ``subgraphs=True``);
   the ledger row holds the session's turn lock around the turn, as ``paicli.run.driver`` does.
   The scripted model records each prompt without copying it and its repr leaves out its script
   (a real client's is short), so it costs next to nothing; its time is still measured and the
   ratio printed with and without it.
2. The same over a long session: ``LONG_STEPS`` tool calls and an answer in a new turn on a thread
   whose history is already about ``HISTORY_TOKENS`` estimated tokens (realistic rounds from
   ``bench/compaction.py``, old tool results already cleared, a window they fit in, so no
   compaction tier fires and every loop does the same work). The history is put there by an
   untimed first turn; the timed turn starts by loading it, as a session's next turn does. Rows:
   ours (both savers) and the minimal loop, in the same interleaved run as (1). deepagents is left
   out here: its own summarization would fire at this size, which is other work.
3. Start-up: ``paicli --help``, and the time from launching the REPL in a pseudo-terminal until
   its prompt ``❯`` is drawn.

``--baseline DIR`` compares this tree with another checkout (``git worktree add DIR <commit>``)
instead: each tree's own copy of this benchmark runs in a process of its own, the two taking
turns (this, DIR, this, DIR, ...) ``--rounds`` times, one run of each loop per process. A
process measures its tree's loops and the minimal loop side by side, so each tree's ratio to the
minimal loop cancels what the machine was doing at that moment; the table gives each tree's
medians and the ratio of the two trees' ratios (the change's cost: 1.05 is 5% slower). DIR's
own ``.venv`` runs it when it has one, else this one (DIR's folders come first on ``sys.path``).

Benchmarks print; they never fail over a missed target.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import fcntl
import gc
import os
import pstats
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: tests.support

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402
from pydantic import PrivateAttr  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from bench.compaction import Rounds, build_history  # noqa: E402
from paicli.graphs.react import build_graph  # noqa: E402
from paicli.memory.ledger.saver import JsonlLedgerSaver  # noqa: E402
from paicli.nodes.core.state import Deps, RunContext  # noqa: E402
from paicli.run.session import RECURSION_LIMIT  # noqa: E402
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call  # noqa: E402
from paicli.tools.base import ToolSpec  # noqa: E402

STEPS = 200  # model responses with a tool call; one final answer follows
LONG_STEPS = 20  # the same over a long history: the "20 calls over a 1M-token history"
HISTORY_TOKENS = 1_000_000  # estimated tokens of the long history (paicli.memory.tokens)
LONG_WINDOW = 1_100_000  # its summary trigger (1.067M) is above the history: nothing fires
RUNS = 5  # per loop, interleaved; the median is reported (other work on the machine adds noise)
STARTS = 5  # process launches per start-up figure
TARGET_RATIO = 1.5  # the target: ours / baseline per model call
TARGET_LEDGER_RATIO, TARGET_VS_DEEPAGENTS = 1.6, 0.6  # issue 30: ledger loop / minimal, / deepagents
TARGET_LONG_RATIO = 1.2  # issue 30: ledger loop / minimal over the long history
TARGET_HELP = 0.3  # seconds
TARGET_PROMPT = 1.0  # seconds
STREAM_MODES = ["messages", "updates"]
THREAD = "bench"
PROMPT_MARK = "❯".encode()
CPR_QUERY, CPR_ANSWER = b"\x1b[6n", b"\x1b[1;1R"  # prompt_toolkit asks where the cursor is


# -- the shared zero-cost tool and the fake model ---------------------------------------------

async def noop(args: dict[str, Any], ctx: Any) -> str:
    return "ok"


# Async, so neither loop pays a thread hop (our sync tools run in asyncio.to_thread).
NOOP = ToolSpec("noop", "Does nothing and returns ok.", {"type": "object", "properties": {}, "required": []},
                noop, is_async=True, parallel_safe=True)


class TimedModel(ScriptedChatModel):
    """The scripted model at next to no cost of its own, timing what it still does so that can be
    told apart from the framework's. It keeps each prompt as the list it was given (the test
    model deep-copies it, which at 200 steps costs as much as the framework) and its repr leaves
    out the script: langchain serialises a model by its repr, and deepagents binds its model
    anew on every call, so a repr of the whole script would be billed to every one of its calls."""

    _spent: list[float] = PrivateAttr(default_factory=lambda: [0.0])  # shared by bind_tools copies

    def _next_step(self, messages: list[BaseMessage]) -> AIMessage:
        started = time.perf_counter()
        try:
            rec = self._rec
            with rec.lock:
                rec.seen.append(list(messages))
                step = rec.script[rec.cursor]  # IndexError: the script ran out
                rec.cursor += 1
            return step.model_copy()
        finally:
            self._spent[0] += time.perf_counter() - started

    def __repr_args__(self) -> Any:
        return [(name, value) for name, value in super().__repr_args__() if name != "script"]

    @property
    def spent(self) -> float:
        return self._spent[0]


def new_model(steps: int, seeded: bool = False) -> TimedModel:
    """``steps`` tool calls and an answer; ``seeded``: first an answer to the turn that puts the
    long history in place."""
    # Distinct arguments per step, as in a real session: identical calls would (rightly) trip the
    # stagnation guard after 5 steps (reference s.3).
    script = [ai("", tool_call("noop", {"step": i}, id=f"call_{i}")) for i in range(steps)]
    return TimedModel([*([ai("seeded")] if seeded else []), *script, ai("done")])


def long_history() -> list[BaseMessage]:
    """About ``HISTORY_TOKENS`` of realistic rounds, tool results already cleared (built once)."""
    if not _HISTORY:
        _HISTORY.extend(build_history(Rounds(30), HISTORY_TOKENS, 0, cleared=True))
    return _HISTORY


_HISTORY: list[BaseMessage] = []


# -- the two loops ------------------------------------------------------------------------------

class LoopState(TypedDict):
    messages: Annotated[list, add_messages]


def build_baseline(model: TimedModel, saver: InMemorySaver):
    """The smallest honest LangGraph tool loop: agent ⇄ tools."""
    bound = model.bind_tools([NOOP.schema()])

    async def agent(state: LoopState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def tools(state: LoopState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        return {"messages": [ToolMessage(await noop(c["args"], None), tool_call_id=c["id"], name=c["name"])
                             for c in calls]}

    def route(state: LoopState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(LoopState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def build_deepagents(model: TimedModel):
    """deepagents' agent (its middleware: todos, files, sub-agents, summarization) with the same tool."""
    from deepagents import create_deep_agent
    from langchain_core.tools import tool

    @tool("noop")
    async def noop_tool(step: int = 0) -> str:
        """Does nothing and returns ok."""
        return "ok"

    return create_deep_agent(model=model, tools=[noop_tool], checkpointer=InMemorySaver())


def deepagents_installed() -> bool:
    try:
        import deepagents  # noqa: F401
    except ImportError:
        return False
    return True


async def drain(graph, context: RunContext | None, durability: str | None = None,
                messages: list[BaseMessage] | None = None) -> None:
    config = {"configurable": {"thread_id": THREAD}, "recursion_limit": RECURSION_LIMIT}
    kwargs: dict[str, Any] = {"context": context} if context is not None else {}
    if durability:
        kwargs["durability"] = durability
    async for _ in graph.astream({"messages": messages or [HumanMessage("go")]}, config, stream_mode=STREAM_MODES,
                                 subgraphs=True, **kwargs):
        pass


async def turn(graph, context: RunContext | None, durability: str | None, saver: Any,
               messages: list[BaseMessage] | None = None) -> None:
    """One turn, under the session's turn lock when the saver is the ledger (``paicli.run.driver``)."""
    lock = saver.turn_lock(THREAD) if isinstance(saver, JsonlLedgerSaver) else None
    if lock is not None and not lock.try_acquire():
        raise RuntimeError("the bench's turn lock is taken")
    try:
        await drain(graph, context, durability, messages)
    finally:
        if lock is not None:
            lock.release()


class ProfiledLedger(JsonlLedgerSaver):
    """The ledger with what its worker thread runs (the sync methods) under a profiler of its own:
    cProfile sees one thread only, and the loop's profile shows the worker only as waiting."""

    def __init__(self, directory: str, profiler: cProfile.Profile) -> None:
        super().__init__(directory)
        self.profiler = profiler

    def _profiled(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        self.profiler.enable()
        try:
            return method(*args, **kwargs)
        finally:
            self.profiler.disable()

    def get_tuple(self, *args: Any, **kwargs: Any) -> Any:
        return self._profiled(super().get_tuple, *args, **kwargs)

    def put(self, *args: Any, **kwargs: Any) -> Any:
        return self._profiled(super().put, *args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> Any:
        return self._profiled(super().put_writes, *args, **kwargs)


def run_loop(kind: str, project: Path, steps: int = STEPS, profiler: cProfile.Profile | None = None,
             history: list[BaseMessage] | None = None,
             worker_profiler: cProfile.Profile | None = None) -> tuple[float, int, float]:
    """(wall seconds, model calls, seconds the fake model spent) for one scripted turn; with
    ``history``, a turn on a thread that an untimed first turn filled with it; with
    ``worker_profiler``, the ledger's worker thread is profiled into it."""
    model = new_model(steps, seeded=history is not None)
    durability, saver = None, InMemorySaver()
    if kind in ("ours", "ours, ledger"):
        ledger = kind == "ours, ledger"
        if ledger:
            directory = tempfile.mkdtemp(dir=project, prefix="ledger-")
            saver = ProfiledLedger(directory, worker_profiler) if worker_profiler else JsonlLedgerSaver(directory)
        graph = build_graph(Deps(model=model, tools={NOOP.name: NOOP}), checkpointer=saver)
        context = RunContext(project_root=str(project), approval="yes",
                             context_window=LONG_WINDOW if history else RunContext.context_window)
        durability = "sync" if ledger else None
    elif kind == "deepagents":
        graph, context = build_deepagents(model), None
    else:
        graph, context = build_baseline(model, saver), None
    if history is not None:
        asyncio.run(turn(graph, context, durability, saver, [*history, HumanMessage("seed")]))
    calls, spent = model.calls, model.spent
    gc.collect()  # the previous run's model kept every prompt it saw; don't bill its collection here
    if profiler:
        profiler.enable()
    started = time.perf_counter()
    asyncio.run(turn(graph, context, durability, saver))
    wall = time.perf_counter() - started
    if profiler:
        profiler.disable()
    model.assert_consumed()
    return wall, model.calls - calls, model.spent - spent


def loop_kinds() -> list[str]:
    return ["ours", "ours, ledger", "baseline"] + (["deepagents"] if deepagents_installed() else [])


LONG_KINDS = ["ours", "ours, ledger", "baseline"]


def measure_loops(project: Path, steps: int, runs: int, long_steps: int) -> dict[tuple[str, str], dict[str, float]]:
    """Per (kind, "short" | "long"): median wall, net of the model, and model seconds per call."""
    for kind in loop_kinds():
        run_loop(kind, project, 5)  # warm caches and lazy imports
    rows = [(kind, "short") for kind in loop_kinds()] + [(kind, "long") for kind in LONG_KINDS if long_steps]
    samples: dict[tuple[str, str], list[tuple[float, int, float]]] = {row: [] for row in rows}
    for _ in range(runs):
        for kind, length in rows:
            history = long_history() if length == "long" else None
            samples[(kind, length)].append(run_loop(kind, project, long_steps if history else steps, history=history))
    return {row: {"wall": statistics.median(w / n for w, n, _ in got),
                  "net": statistics.median((w - m) / n for w, n, m in got),
                  "model": statistics.median(m / n for _, n, m in got)}
            for row, got in samples.items()}


def profile_loops(project: Path, steps: int, top: int) -> None:
    for kind in loop_kinds():
        profiler, worker = cProfile.Profile(), cProfile.Profile()
        run_loop(kind, project, steps, profiler, worker_profiler=worker if kind == "ours, ledger" else None)
        print(f"\n-- cProfile, one {kind} run, top {top} by own time --")
        pstats.Stats(profiler).strip_dirs().sort_stats("tottime").print_stats(top)
        if kind == "ours, ledger":
            print(f"\n-- cProfile of the same run's ledger worker thread, top {top} by own time --")
            pstats.Stats(worker).strip_dirs().sort_stats("tottime").print_stats(top)


# -- start-up -----------------------------------------------------------------------------------

def paicli_command() -> list[str]:
    """The venv's console script, as a user runs it; ``python -m paicli`` if it is missing."""
    script = Path(sys.executable).with_name("paicli")
    return [str(script)] if script.exists() else [sys.executable, "-m", "paicli"]


def help_seconds() -> float:
    started = time.perf_counter()
    subprocess.run([*paicli_command(), "--help"], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def prompt_seconds(home: Path, project: Path, timeout: float = 15.0) -> float:
    """Launch the REPL on a pty, wait for ``❯``, then end it with Ctrl-D (killing it if need be)."""
    env = {**os.environ, "PAICLI_API_KEY": "x", "PAICLI_BASE_URL": "http://127.0.0.1:9/v1",
           "PAICLI_MODEL": "m", "PAICLI_HOME": str(home), "TERM": "xterm-256color"}
    command = paicli_command()
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: a sized terminal, then paicli; never returns into the benchmark
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            os.chdir(project)
            os.execve(command[0], command, env)
        finally:
            os._exit(127)
    exited = False
    try:
        elapsed = _read_until(fd, PROMPT_MARK, started, timeout)
        os.write(fd, b"\x04")  # Ctrl-D at an empty prompt ends the REPL
        exited = _wait_exit(pid, fd, 5.0)
        return elapsed
    finally:
        if not exited:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


def _read_until(fd: int, mark: bytes, started: float, timeout: float) -> float:
    seen = b""
    while time.perf_counter() - started < timeout:
        if not select.select([fd], [], [], 0.05)[0]:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if CPR_QUERY in data:
            os.write(fd, CPR_ANSWER)
        seen += data
        if mark in seen:
            return time.perf_counter() - started
    raise RuntimeError(f"no {mark.decode()!r} within {timeout:.0f} s; the REPL printed: {seen[-400:]!r}")


def _wait_exit(pid: int, fd: int, timeout: float) -> bool:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return True
        if select.select([fd], [], [], 0.05)[0]:
            try:
                os.read(fd, 65536)  # keep the pty drained so the child never blocks writing
            except OSError:
                pass
    return False


# -- report -------------------------------------------------------------------------------------

def row(measure: str, value: str, target: float | None = None, figure: float | None = None,
        unit: str = "") -> tuple[str, str, str, str]:
    if target is None or figure is None:
        return measure, value, "", ""
    return measure, value, f"<= {target:g}{unit}", "PASS" if figure <= target else "over target"


def print_table(title: str, rows: list[tuple[str, str, str, str]]) -> None:
    print(title)
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print(f"  {r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip())


def loop_rows(loops: dict[tuple[str, str], dict[str, float]]) -> list[tuple[str, str, str, str]]:
    ours, ledger, base = loops[("ours", "short")], loops[("ours, ledger", "short")], loops[("baseline", "short")]
    ratio, net_ratio = ours["wall"] / base["wall"], ours["net"] / base["net"]
    ledger_ratio, ledger_net = ledger["wall"] / base["wall"], ledger["net"] / base["net"]
    rows = [
        row("ours (InMemorySaver), per model call", f"{ours['wall'] * 1e3:.2f} ms"),
        row("ours on the ledger (durability sync), per model call", f"{ledger['wall'] * 1e3:.2f} ms"),
        row("minimal LangGraph loop, per model call", f"{base['wall'] * 1e3:.2f} ms"),
        row("ratio ours / minimal", f"{ratio:.2f}x", TARGET_RATIO, ratio, "x"),
        row("ratio ours on the ledger / minimal", f"{ledger_ratio:.2f}x", TARGET_LEDGER_RATIO, ledger_ratio, "x"),
        row("fake model's own time per call (in all)", f"{base['model'] * 1e3:.2f} ms"),
        row("ratios without it (InMemorySaver, ledger)", f"{net_ratio:.2f}x, {ledger_net:.2f}x"),
    ]
    if ("deepagents", "short") in loops:
        deep = loops[("deepagents", "short")]["wall"]
        rows += [row("deepagents create_deep_agent, per model call", f"{deep * 1e3:.2f} ms"),
                 row("ratio ours on the ledger / deepagents", f"{ledger['wall'] / deep:.2f}x",
                     TARGET_VS_DEEPAGENTS, ledger["wall"] / deep, "x")]
    else:
        rows.append(row("deepagents", "not installed (pip install deepagents into this venv)"))
    return rows


def long_rows(loops: dict[tuple[str, str], dict[str, float]]) -> list[tuple[str, str, str, str]]:
    ours, ledger, base = loops[("ours", "long")], loops[("ours, ledger", "long")], loops[("baseline", "long")]
    ratio = ledger["wall"] / base["wall"]
    return [
        row("ours (InMemorySaver), per model call", f"{ours['wall'] * 1e3:.2f} ms"),
        row("ours on the ledger (durability sync), per model call", f"{ledger['wall'] * 1e3:.2f} ms"),
        row("minimal LangGraph loop, per model call", f"{base['wall'] * 1e3:.2f} ms"),
        row("ratio ours / minimal", f"{ours['wall'] / base['wall']:.2f}x"),
        row("ratio ours on the ledger / minimal", f"{ratio:.2f}x", TARGET_LONG_RATIO, ratio, "x"),
        row("fake model's own time per call (in all)", f"{base['model'] * 1e3:.2f} ms"),
    ]


# -- two trees, taking turns (--baseline) ------------------------------------------------------

PAIRED_ROWS = {"ours (InMemorySaver), per model call": "ours",
               "ours on the ledger (durability sync), per model call": "ledger",
               "minimal LangGraph loop, per model call": "minimal"}


def tree_figures(tree: Path, steps: int, long_steps: int) -> dict[str, float]:
    """One run of ``tree``'s benchmark in a process of its own: ms per model call by row, the
    short session's as ``ours``/``ledger``/``minimal``, the long one's with ``long `` before."""
    python = tree / ".venv" / "bin" / "python"
    command = [str(python if python.exists() else sys.executable), str(tree / "bench" / "loop_overhead.py"),
               "--steps", str(steps), "--runs", "1", "--long-steps", str(long_steps), "--no-startup"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(f"the benchmark of {tree} failed:\n{done.stderr[-2000:]}")
    figures: dict[str, float] = {}
    for line in done.stdout.splitlines():
        label, _, rest = line.strip().rpartition("  ")
        name = PAIRED_ROWS.get(label.strip())
        if name and rest.endswith(" ms"):
            figures["long " + name if name in figures else name] = float(rest.removesuffix(" ms"))
    if not {"ours", "ledger", "minimal"} <= figures.keys():
        raise SystemExit(f"no per-call figures in the output of {tree}'s benchmark:\n{done.stdout[-2000:]}")
    return figures


def paired(baseline: Path, rounds: int, steps: int, long_steps: int) -> None:
    here = Path(__file__).resolve().parents[1]
    trees = {"this tree": here, "baseline": baseline.resolve()}
    got: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            got[name].append(tree_figures(tree, steps, long_steps))
    lengths = ["", "long "] if long_steps else [""]

    def med(name: str, key: str) -> float:
        return statistics.median(f[key] for f in got[name])

    def ratio(name: str, key: str, length: str) -> float:  # per round, to that process's minimal loop
        return statistics.median(f[length + key] / f[length + "minimal"] for f in got[name])

    print(f"agent loop, this tree ({here}) against {baseline} taking turns: {rounds} rounds, "
          f"{steps} tool-calling responses (+{long_steps} over the long history), one run per process")
    print(f"  {'ms per model call (median)':<44}{'this tree':>11}{'baseline':>11}{'this / baseline':>17}")
    for length in lengths:
        for key, label in (("ours", "ours (InMemorySaver)"), ("ledger", "ours on the ledger"),
                           ("minimal", "minimal LangGraph loop")):
            a, b = med("this tree", length + key), med("baseline", length + key)
            print(f"  {length + label:<44}{a:>11.2f}{b:>11.2f}{a / b:>16.3f}x")
        for key, label in (("ours", "ratio ours / minimal"), ("ledger", "ratio ledger / minimal")):
            a, b = ratio("this tree", key, length), ratio("baseline", key, length)
            print(f"  {length + label:<44}{a:>10.2f}x{b:>10.2f}x{a / b:>16.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=STEPS, help=f"tool-calling model responses (default {STEPS})")
    parser.add_argument("--long-steps", type=int, default=LONG_STEPS,
                        help=f"the same over the long history (default {LONG_STEPS}; 0 leaves those rows out)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs of each loop (default {RUNS})")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up figures")
    parser.add_argument("--profile", type=int, nargs="?", const=25, default=0, metavar="N",
                        help="also print the top N functions of one cProfiled run of each loop")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="compare with another checkout, the two taking turns in processes of their own")
    parser.add_argument("--rounds", type=int, default=8, help="with --baseline: turns of each tree (default 8)")
    args = parser.parse_args()
    if args.baseline:
        paired(args.baseline, args.rounds, args.steps, args.long_steps)
        return
    with tempfile.TemporaryDirectory(prefix="paicli-bench-") as tmp:
        home, project = Path(tmp, "home"), Path(tmp, "project")
        home.mkdir(), project.mkdir()
        loops = measure_loops(project, args.steps, args.runs, args.long_steps)
        starts = 0 if args.no_startup else STARTS
        print_table(f"agent loop: {args.steps} tool-calling model responses + 1 answer, "
                    f"median of {args.runs} interleaved runs", loop_rows(loops))
        if args.long_steps:
            tokens = HISTORY_TOKENS // 1000
            print_table(f"the same in a turn over a {tokens}k-token history ({len(long_history())} messages): "
                        f"{args.long_steps} tool-calling responses + 1 answer, in the same run", long_rows(loops))
        if starts:
            helps = statistics.median(help_seconds() for _ in range(starts))
            prompts = statistics.median(prompt_seconds(home, project) for _ in range(starts))
            print_table(f"start-up: median of {starts} launches", [
                row("paicli --help", f"{helps:.3f} s", TARGET_HELP, helps, " s"),
                row("first prompt ready (REPL on a pty)", f"{prompts:.3f} s", TARGET_PROMPT, prompts, " s"),
            ])
        if args.profile:
            profile_loops(project, args.steps, args.profile)


if __name__ == "__main__":
    main()
