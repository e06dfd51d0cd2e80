"""Plan-and-Execute: parallel tasks against the same tasks one after another, and what a plan
task costs the harness next to a ReAct turn.

Prints, in one run (``python bench/plan.py``):

1. **Parallel batch.** Four independent tasks whose model calls each take ``--latency`` seconds
   (the local OpenAI-compatible test server's delay; the planner's reply is immediate), run as
   one plan, against the same four tasks run as four ReAct turns one after another.
   Target: plan / sequential ≤ 0.35 (the ideal, four tasks at once, is 0.25).
2. **Harness overhead.** The same with no model latency: wall time per task of a plan run
   (planner call included, divided over the tasks) next to the wall time of one ReAct turn.

Both go through the real model client over HTTP (``tests/support/openai_server.py``) and the
graphs the CLI compiles, with ``InMemorySaver``. Benchmarks print; they never fail.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: tests.support

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from paicli.graphs.plan import build_graph as build_plan_graph  # noqa: E402
from paicli.graphs.react import build_graph as build_react_graph  # noqa: E402
from paicli.nodes.core.state import Deps, RunContext  # noqa: E402
from paicli.run.models import make_chat_model  # noqa: E402
from paicli.config.settings import load_settings  # noqa: E402
from tests.support.openai_server import ByContent, FakeOpenAIServer, Hang, Reply  # noqa: E402

TASKS = ["统计 alpha", "统计 beta", "统计 gamma", "统计 delta"]
TARGET_RATIO = 0.35
PLANNING = "请为以下任务制定执行计划"


def plan_reply() -> Reply:
    tasks = [{"id": f"t{i}", "description": d, "type": "ANALYSIS"} for i, d in enumerate(TASKS)]
    return Reply(json.dumps({"summary": "四个独立任务", "tasks": tasks}, ensure_ascii=False))


def answer(latency: float) -> Reply | Hang:
    return Hang(latency, Reply("完成")) if latency else Reply("完成")


def deps_for(url: str, root: str) -> Deps:
    settings = load_settings(root, environ={"PAICLI_API_KEY": "bench", "PAICLI_BASE_URL": url, "PAICLI_MODEL": "m",
                                            "PAICLI_HOME": str(Path(root) / ".home")})
    return Deps(model=make_chat_model(settings))


def context(root: str, mode: str) -> RunContext:
    return RunContext(project_root=root, approval="yes", session_id="bench", mode=mode, review=False)


async def run_plan(latency: float, root: str) -> float:
    routes = ByContent({**{f"当前任务：{d}": [answer(latency)] for d in TASKS}, PLANNING: [plan_reply()]})
    with FakeOpenAIServer(routes.script()) as server:
        graph = build_plan_graph(deps_for(server.base_url, root), checkpointer=InMemorySaver())
        started = time.perf_counter()
        await graph.ainvoke({"messages": [HumanMessage("分别统计四个模块然后汇报")]},
                            {"configurable": {"thread_id": "p"}}, context=context(root, "plan"))
        elapsed = time.perf_counter() - started
        assert not routes.left(), routes.left()
        return elapsed


async def run_sequential(latency: float, root: str) -> float:
    """The same four tasks as ReAct turns, one after another (what a single agent would do)."""
    with FakeOpenAIServer([answer(latency) for _ in TASKS]) as server:
        graph = build_react_graph(deps_for(server.base_url, root), checkpointer=InMemorySaver())
        started = time.perf_counter()
        for task in TASKS:
            await graph.ainvoke({"messages": [HumanMessage(task)]}, {"configurable": {"thread_id": "r"}},
                                context=context(root, "react"))
        return time.perf_counter() - started


async def main(latency: float, runs: int) -> None:
    root = tempfile.mkdtemp(prefix="paicli-bench-plan-")
    await run_plan(0, root)  # warm-up: imports, prompt caches, the HTTP client
    plan = statistics.median([await run_plan(latency, root) for _ in range(runs)])
    sequential = statistics.median([await run_sequential(latency, root) for _ in range(runs)])
    ratio = plan / sequential
    print(f"Parallel batch ({len(TASKS)} independent tasks, {latency:.1f} s per model call, median of {runs}):")
    print(f"  plan run:        {plan:6.2f} s")
    print(f"  one after other: {sequential:6.2f} s")
    print(f"  ratio:           {ratio:6.2f}   (target ≤ {TARGET_RATIO}; {'met' if ratio <= TARGET_RATIO else 'MISSED'})")
    fast_plan = statistics.median([await run_plan(0, root) for _ in range(runs)])
    fast_turns = statistics.median([await run_sequential(0, root) for _ in range(runs)])
    per_task, per_turn = fast_plan / len(TASKS), fast_turns / len(TASKS)
    print("Harness overhead (no model latency):")
    print(f"  per plan task:   {per_task * 1000:6.1f} ms (a plan run of {len(TASKS)} tasks, planner call included, / {len(TASKS)})")
    print(f"  per ReAct turn:  {per_turn * 1000:6.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per task model call (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the median is printed (default 3)")
    options = parser.parse_args()
    asyncio.run(main(options.latency, options.runs))
