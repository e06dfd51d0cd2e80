"""Team mode's parallelism: a 4-step team run against the same model calls made one by one.

``python bench/team.py [--latency 1.0]``. The plan has two parallel pairs (step_1 ∥ step_2, then
step_3 ∥ step_4, each depending on one of the first pair), so the run makes 9 model calls: the
planner, 4 workers and 4 reviewers. Every call waits ``--latency`` seconds (the scripted model's
delay, like a provider's). The team graph runs with ``InMemorySaver``; the baseline makes the
same 9 calls sequentially on the same model. Target: team / sequential ≤ 0.6 (the ideal is
5/9 ≈ 0.56: planner, then two waves of worker + reviewer). Prints; never fails over a target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from paicli.graphs.team import build_graph  # noqa: E402
from paicli.nodes.core.state import Deps, RunContext  # noqa: E402
from tests.support.scripted_model import ScriptedChatModel, ai  # noqa: E402

STEPS = [("a", "读 A", []), ("b", "读 B", []), ("c", "用 A", ["a"]), ("d", "用 B", ["b"])]
PLAN = json.dumps({"summary": "s", "steps": [{"id": i, "description": d, "dependencies": deps}
                                              for i, d, deps in STEPS]}, ensure_ascii=False)


def model(latency: float) -> ScriptedChatModel:
    routes = {"请为以下任务制定执行计划": [ai(PLAN)]}
    for _, description, _ in STEPS:
        routes[f"原始任务：{description}"] = [ai('{"approved": true}')]
        routes[f"当前任务：{description}"] = [ai(f"{description} 完成")]
    return ScriptedChatModel.by_content(routes, delay=latency)


async def team_run(latency: float, root: str) -> float:
    graph = build_graph(Deps(model=model(latency)), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "bench"}, "recursion_limit": 500}
    started = time.perf_counter()
    await graph.ainvoke({"messages": [HumanMessage("基准目标")]}, config,
                        context=RunContext(project_root=root, approval="yes", session_id="bench", mode="team"))
    elapsed = time.perf_counter() - started
    state = (await graph.aget_state(config)).values
    assert state["status"] == "completed", state.get("outcome")
    return elapsed


async def sequential(latency: float) -> float:
    m = model(latency)
    prompts = ["请为以下任务制定执行计划：基准目标"]
    for _, description, _ in STEPS:
        prompts += [f"当前任务：{description}", f"原始任务：{description}"]
    started = time.perf_counter()
    for text in prompts:
        await m.ainvoke([HumanMessage(text)])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        team = asyncio.run(team_run(args.latency, root))
    alone = asyncio.run(sequential(args.latency))
    print(f"team run (4 steps, 9 calls, {args.latency:.1f} s each): {team:.2f} s")
    print(f"same calls one after another:             {alone:.2f} s")
    print(f"ratio: {team / alone:.2f} (target ≤ 0.6; ideal 5/9 = 0.56)")


if __name__ == "__main__":
    main()
