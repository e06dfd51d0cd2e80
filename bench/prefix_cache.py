"""How much of a session's input a provider's prefix cache can serve (issue 13): the turn's
memories in the system prompt (the reference's placement, paicli before issue 13) against the
memories travelling with their turn (now), side by side.

A scripted 20-turn session runs through the real react graph (``ScriptedChatModel``, a real
memory file with 24 saved facts, a PAI.md): each turn asks about different facts, reads a
project file with a tool and answers, so each turn makes two requests and its relevant memories
change from turn to turn. The new placement is what the model was sent. The old placement is
rebuilt from the same requests: the turn's memory messages taken out, and the turn's full block
(what ``load_context`` put in the system prompt before: no "already shown" check) placed last in
the system prompt's ``## Project Context``.

A request's cacheable part is the common prefix of its serialized messages with the request
before it (providers match prefixes of earlier requests; the previous one is the usual hit).
Tokens are paicli's estimate of that text. The tool schemas (the same in every request) are
left out of both columns. Target: ≥ 0.9 of all input tokens cacheable with the new placement.

    python bench/prefix_cache.py [--turns 20]

Benchmarks print; they never fail over a missed target.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: tests.support

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage  # noqa: E402

from paicli.memory.context.prefix_cache import common_prefix, serialize  # noqa: E402
from paicli.memory.context.profile import ContextProfile  # noqa: E402
from paicli.memory.context.turn_memory import is_memory_context  # noqa: E402
from paicli.memory.longterm.entry import normalize_project_key  # noqa: E402
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions  # noqa: E402
from paicli.memory.tokens import estimate_text  # noqa: E402
from paicli.nodes.core.policy import submitted_text  # noqa: E402
from paicli.nodes.core.state import Deps, RunContext  # noqa: E402
from paicli.nodes.load_context import project_context  # noqa: E402
from paicli.nodes.model.call_model import system_prompt  # noqa: E402
from tests.graphs.conftest import Harness  # noqa: E402
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call  # noqa: E402

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
TOPICS = ["Java", "Maven", "PostgreSQL", "Redis", "Kubernetes", "Nginx", "Kafka", "gRPC", "React", "Webpack",
          "JUnit", "Flyway"]
FACTS = [f"{t} 的约定：{detail}" for t in TOPICS for detail in (f"{t} 配置在 config/{t.lower()}.yml",
                                                                  f"升级 {t} 前先跑集成测试")]


def question(turn: int) -> str:
    first, second = TOPICS[turn % len(TOPICS)], TOPICS[(turn * 5 + 3) % len(TOPICS)]
    return f"第 {turn} 轮：{first} 和 {second} 怎么配置？先读一下 notes/{turn}.md"


def script(turns: int) -> list:
    steps = []
    for turn in range(turns):
        steps += [ai("我先读文件", tool_call("read_file", {"path": f"notes/{turn}.md"})),
                  ai(f"第 {turn} 轮的回答：按记忆和文件，" + "配置说明。" * 40)]
    return steps


async def run_session(root: Path, turns: int) -> tuple[list[list[BaseMessage]], Deps, RunContext, LongTermMemory]:
    project = root / "project"
    (project / "notes").mkdir(parents=True)
    (project / "PAI.md").write_text("# 项目约定\n\n构建用 `mvn -q verify`，提交前跑全量测试。\n", encoding="utf-8")
    for turn in range(turns):
        (project / "notes" / f"{turn}.md").write_text(f"# 笔记 {turn}\n\n" + "一些项目说明和代码片段。\n" * 60)
    memory = LongTermMemory(root / "mem", MemoryOptions(sync=False))
    for fact in FACTS:
        memory.save_fact(fact, scope="project", project_key=normalize_project_key(project), now=NOW)
    model = ScriptedChatModel(script(turns))
    harness = Harness(model, project, approval="yes", memory=memory, clock=lambda: NOW,
                      prompt_home=root / "home")
    for turn in range(turns):
        await harness.turn(question(turn))
    model.assert_consumed()
    deps = Deps(model=model, clock=lambda: NOW, prompt_home=root / "home")
    return model.seen, deps, harness.context, memory


def old_placement(requests: list[list[BaseMessage]], deps: Deps, ctx: RunContext,
                  memory: LongTermMemory) -> list[list[BaseMessage]]:
    """Each request as paicli built it before issue 13: the turn's whole block in the system prompt."""
    budget = ContextProfile.from_window(ctx.context_window).memory_context_tokens
    key, pai = normalize_project_key(Path(ctx.project_root)), project_context(deps, ctx)
    rebuilt = []
    for request in requests:
        messages = [m for m in request[1:] if not is_memory_context(m)]
        block = memory.context_block(submitted_text(messages), budget, key, NOW)
        system = SystemMessage(system_prompt(deps, ctx, NOW, "\n\n".join(p for p in (pai, block.strip()) if p)))
        rebuilt.append([system, *messages])
    return rebuilt


def cacheable(requests: list[list[BaseMessage]]) -> tuple[int, int, list[float]]:
    """(cacheable tokens, input tokens, share of each turn's first request)."""
    served = total = 0
    firsts, previous = [], None
    for i, request in enumerate(requests):
        texts = serialize(request)
        whole = "".join(texts)
        stable = common_prefix(previous, texts) if previous is not None else 0
        served += estimate_text(whole[:stable])
        total += estimate_text(whole)
        if i % 2 == 0 and i:
            firsts.append(stable / len(whole))
        previous = texts
    return served, total, firsts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        new, deps, ctx, memory = asyncio.run(run_session(Path(tmp), args.turns))
        old = old_placement(new, deps, ctx, memory)
    rows = [("memories in the system prompt (before)", *cacheable(old)),
            ("memories with their turn (now)", *cacheable(new))]
    print(f"{args.turns} turns, {len(new)} requests, {len(FACTS)} saved facts; "
          f"{sum(isinstance(m, HumanMessage) and is_memory_context(m) for m in new[-1])} memory messages in the last request")
    print(f"{'placement':<40} {'input tokens':>13} {'cacheable':>10} {'share':>6} {'turn starts (min / median)':>28}")
    for label, served, total, firsts in rows:
        firsts = sorted(firsts)
        print(f"{label:<40} {total:>13,} {served:>10,} {served / total:>6.1%} "
              f"{firsts[0]:>13.0%} / {firsts[len(firsts) // 2]:.0%}")
    print("target: ≥ 90% cacheable with the new placement")


if __name__ == "__main__":
    main()
