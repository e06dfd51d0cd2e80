"""What context compaction costs per model call (issue 4), summary LLM time excluded.

Prints, in one run (``python bench/compaction.py``; ``--profile`` adds a cProfile of the
no-fire loop at the largest size):

1. **Nothing fires.** The steady state the agent loop sees at about 10k, 100k and 1M estimated
   tokens (system prompt and tool schemas included, as the trigger counts them, Q1). Each call
   appends one message (alternately an assistant tool call and its short tool result) to a NEW
   list, as LangGraph state hands it over, then runs what runs before a model call: the router
   (``Compaction.needed``: the estimate and, above the floor, whether a tier would fire) and the
   compact node (``Compaction.run``) if the router sends the call there, which it must not
   when nothing fires. So that nothing does: the window's summary trigger is above the
   history, the old tool results are already cleared placeholders, and the new results are
   shorter than clearing's 400-character minimum. Median and p95 per call; the first (cold)
   estimate of a freshly built history, whose strings were never hashed, is printed apart.
2. **Each tier fires**, at the same sizes, timed the same way (router + compact node) on the
   call where the tier fires, the estimator warm on the history minus its last message:
   tier 2 clearing on a history of uncleared results, tier 3a full summary with a zero-latency
   summarizer that returns a valid four-heading summary, tier 3b session memory (enabled) with
   its summary prepared beforehand by the same summarizer. Also the tokens each tier frees.

History rounds: a user request (Chinese), an assistant reading a file and grepping, their
wrapped results (``<tool_result tool="read_file" trust="untrusted-data">``, a few KB of code
with Chinese comments), an ``edit_file`` call carrying the new code, a short edit result, a
test run and its output, and a final answer mixing Chinese and code.

Benchmarks print; they never fail over a missed target.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import math
import pstats
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: tests.support

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402

from paicli.memory.context.clearing import ToolResultClearer  # noqa: E402
from paicli.memory.context.compaction import CompactionResult, Strategy  # noqa: E402
from paicli.memory.context.profile import ContextProfile  # noqa: E402
from paicli.memory.tokens import message_tokens  # noqa: E402
from paicli.nodes.compact import Compaction  # noqa: E402
from paicli.nodes.core.state import CompactionOptions, Deps, RunContext  # noqa: E402
from paicli.nodes.model.call_model import ModelCaller  # noqa: E402
from tests.support.scripted_model import ScriptedChatModel  # noqa: E402
from tests.unit.compaction_helpers import VALID_SUMMARY  # noqa: E402
from paicli.tools.boundary import wrap  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)  # estimated tokens of the whole request
CALLS = 150  # model calls per size in the no-fire loop
SAMPLES = {10_000: 30, 100_000: 10, 1_000_000: 5}  # fresh compactions per tier and size
TARGET_MS = 5.0  # the target: per call at 1M tokens when nothing fires
# Windows, per size, that make the intended tier the one that fires (memory/context/profile.py):
# no-fire and tier 2: clearing trigger <= history < summary trigger.
NO_FIRE_WINDOW = {10_000: 24_000, 100_000: 160_000, 1_000_000: 1_100_000}
# tiers 3a and 3b: summary trigger < history.
SUMMARY_WINDOW = {10_000: 12_000, 100_000: 128_000, 1_000_000: 1_000_000}
# Session memory keeps a tail of at least 10,000 tokens (reference g), so at 10k there is
# nothing before it to summarise; its smallest row uses a 17k history and a 26k window.
SESSION_HISTORY = {10_000: 17_000}
SESSION_WINDOW = {10_000: 26_000}

WORDS = ("cache", "token", "window", "history", "result", "message", "summary", "profile", "round",
         "trigger", "budget", "ledger", "session", "prompt", "schema", "offload", "estimate", "split")
CHINESE = ("计算缓存键", "读取配置文件", "检查工具结果", "更新会话记忆", "压缩历史消息",
           "统计令牌数量", "保留最近三轮", "处理边界情况", "记录错误日志", "避免重复调用")


# -- a realistic history -----------------------------------------------------------------------

class Rounds:
    """Deterministic rounds with fresh string objects (nothing cached on them yet)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.n = 0
        self._pending: dict = {}  # the tool call step() answers next

    def id(self, prefix: str) -> str:
        return f"{prefix}-{self.rng.getrandbits(96):024x}"

    def word(self) -> str:
        return self.rng.choice(WORDS)

    def code(self, chars: int) -> str:
        lines, size = [], 0
        while size < chars:
            r = self.rng.random()
            if r < 0.15:
                line = f"    # {self.rng.choice(CHINESE)}：{self.rng.choice(CHINESE)}，然后返回"
            elif r < 0.3:
                line = f"def {self.word()}_{self.word()}_{self.rng.randrange(1000)}(self, {self.word()}: int) -> str:"
            else:
                line = (f"        {self.word()}_{self.rng.randrange(100)} = self.{self.word()}"
                        f"({self.word()}, {self.rng.randrange(10_000)})")
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)

    def chinese(self, chars: int) -> str:
        parts, size = [], 0
        while size < chars:
            name = f"{self.word()}_{self.rng.randrange(100)}"
            part = f"{self.rng.choice(CHINESE)}，{self.rng.choice(CHINESE)}（`{name}`）。"
            parts.append(part)
            size += len(part)
        return "".join(parts)

    def call(self, name: str, args: dict) -> dict:
        return {"name": name, "args": args, "id": self.id("call"), "type": "tool_call"}

    def result(self, call: dict, text: str) -> ToolMessage:
        return ToolMessage(wrap(call["name"], text), tool_call_id=call["id"], name=call["name"], id=self.id("tool"))

    def ai(self, text: str, *calls: dict) -> AIMessage:
        return AIMessage(text, tool_calls=list(calls), id=self.id("ai"))

    def next(self) -> list[BaseMessage]:
        """One user round, 9 messages, about 3,100 tokens (1,600 once its results are cleared).

        Long, but it is one round's data read top to bottom, in the order the model would see it."""
        i, r = self.n, self.rng
        self.n += 1
        path = f"src/paicli_demo/{self.word()}_{i}.py"
        read = self.call("read_file", {"path": path})
        grep = self.call("grep", {"pattern": f"def {self.word()}_", "path": "src"})
        edit = self.call("edit_file", {"path": path, "old_string": self.code(300),
                                       "new_string": self.code(r.randrange(1500, 3500))})
        test = self.call("execute_command", {"command": f"pytest -q tests/unit/test_{self.word()}_{i}.py"})
        grep_out = "\n".join(f"src/{self.word()}.py:{r.randrange(900)}: def {self.word()}_{self.word()}()"
                             for _ in range(r.randrange(8, 25)))
        test_out = "\n".join(f"tests/unit/test_{self.word()}.py::{self.word()}_{k} PASSED"
                             for k in range(r.randrange(10, 40)))
        answer = (f"已完成。{self.chinese(r.randrange(300, 900))}\n\n"
                  f"```python\n{self.code(r.randrange(300, 900))}\n```")
        return [
            HumanMessage(f"第 {i} 轮：请检查 {path}，{self.chinese(r.randrange(80, 300))}", id=self.id("user")),
            self.ai("我先读一下相关文件。", read, grep),
            self.result(read, self.code(r.randrange(2500, 6000))),
            self.result(grep, grep_out),
            self.ai("", edit),
            self.result(edit, f"已修改 {path}：1 处替换。"),  # short: never cleared
            self.ai("修改完成，运行测试确认。", test),
            self.result(test, test_out + f"\n{r.randrange(10, 40)} passed in {r.random():.2f}s"),
            self.ai(answer),
        ]

    def step(self, k: int) -> BaseMessage:
        """The k-th message the no-fire loop appends: a tool call, then its short result."""
        if k % 2 == 0:
            self._pending = self.call("execute_command", {"command": f"git diff --stat -- src/{self.word()}_{k}.py"})
            return self.ai("", self._pending)
        return self.result(self._pending, f" src/{self.word()}_{k}.py | {k % 50} ++--\n 1 file changed")


CLEAR_ALL = ToolResultClearer(keep_recent=0)  # a history tier 2 has already been over


def build_history(rounds: Rounds, target: int, overhead: int, cleared: bool) -> list[BaseMessage]:
    """Whole rounds until the estimate (``overhead`` = system prompt + schemas) reaches ``target``.

    Counted with the uncached ``message_tokens`` so no string gets its hash cached here."""
    history: list[BaseMessage] = []
    total = overhead
    while total < target:
        round_ = rounds.next()
        if cleared:
            round_ = CLEAR_ALL.clear(round_).messages
        history += round_
        total += sum(map(message_tokens, round_))
    return history


# -- the compaction under test -------------------------------------------------------------------

class BenchCompaction(Compaction):
    """The graph's Compaction with a zero-latency summarizer: LLM time is excluded."""

    async def summarize(self, messages: list[BaseMessage]) -> str:
        return VALID_SUMMARY


def new_caller(session_memory: bool) -> ModelCaller:
    # The model is never called: the summarizer is BenchCompaction's, and nothing else asks it.
    options = CompactionOptions(session_memory=session_memory)
    return ModelCaller(Deps(model=ScriptedChatModel(script=[]), compaction=options))


async def one_call(compaction: Compaction, messages: list[BaseMessage],
                   ctx: RunContext) -> tuple[float, float, bool, CompactionResult | None]:
    """(router seconds, router + compact node seconds, whether the node ran, its result) for one model call."""
    started = time.perf_counter()
    needed = compaction.needed({"messages": messages}, ctx)
    routed = time.perf_counter()
    result = await compaction.run(messages, ctx) if needed else None
    return routed - started, time.perf_counter() - started, needed, result


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass
class NoFire:
    size: int
    window: int
    messages: int
    start_tokens: int
    end_tokens: int
    cold_ms: float
    router: list[float]
    total: list[float]
    above_floor: int
    fired: int


async def no_fire(size: int, window: int, project: str, overhead: int, seed: int,
                  profiler: cProfile.Profile | None = None) -> NoFire:
    rounds = Rounds(seed)
    base = build_history(rounds, size, overhead, cleared=True)
    ctx = RunContext(project_root=project, context_window=window, session_id="bench")
    compaction = Compaction(new_caller(session_memory=False))
    compaction.estimate([HumanMessage("warm the system prompt and schemas")], ctx)
    gc.collect()
    started = time.perf_counter()
    start_tokens = compaction.estimate(base, ctx)
    cold = time.perf_counter() - started
    messages, router, total, above, fired = base, [], [], 0, 0
    if profiler:
        profiler.enable()
    for step in range(CALLS):
        messages = [*messages, rounds.step(step)]  # a new list, like LangGraph state
        r, t, needed, result = await one_call(compaction, messages, ctx)
        router.append(r), total.append(t)
        above += needed
        fired += result is not None
    if profiler:
        profiler.disable()
    return NoFire(size, window, len(base), start_tokens, compaction.estimate(messages, ctx), cold * 1e3, router, total,
                  above, fired)


@dataclass
class Fired:
    tier: str
    size: int
    window: int
    messages: int
    seconds: list[float]
    strategies: set[str]
    before: int
    after: int


async def fire(tier: str, size: int, window: int, history: list[BaseMessage], project: str, samples: int) -> Fired:
    ctx = RunContext(project_root=project, context_window=window, session_id="bench")
    seconds, strategies, before, after = [], set(), 0, 0
    for _ in range(samples):
        compaction = BenchCompaction(new_caller(session_memory=tier == "3b"))
        if tier == "3b":
            await prepare_session_memory(compaction, history, ctx)
        compaction.estimate(history[:-1], ctx)  # the previous call's estimate: only the last message is new
        gc.collect()
        _, t, _, result = await one_call(compaction, history, ctx)
        seconds.append(t)
        strategies.add(result.strategy.value if result else "nothing")
        if result:
            before, after = result.tokens_before, result.tokens_after
    return Fired(tier, size, window, len(history), seconds, strategies, before, after)


async def prepare_session_memory(compaction: Compaction, history: list[BaseMessage], ctx: RunContext) -> None:
    """Get tier 3b into its ready state the way the loop does: a background summary started on an
    earlier, shorter history (between 60 % of the summary trigger and the trigger), then awaited."""
    trigger = compaction.profile(ctx).compression_trigger_tokens
    starts = [i for i, m in enumerate(history) if isinstance(m, HumanMessage)]
    prefix = next((history[:i] for i in reversed(starts) if compaction.estimate(history[:i], ctx) < trigger), [])
    memory, unit = compaction.compactor.session_memory, f"{ctx.session_id}:{ctx.mode}"
    memory.prepare_if_needed(unit, prefix, trigger, compaction.estimate(prefix, ctx), compaction.estimator.messages)
    await memory.wait(unit)


# -- report ------------------------------------------------------------------------------------

def k(tokens: int) -> str:
    return f"{tokens / 1000:,.1f}k"


def print_table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]], notes: list[str] = ()) -> None:
    print(title)
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for r in table:
        cells = [f"{c:<{w}}" if i == 0 or i == len(r) - 1 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(r, widths))]
        print("  " + "  ".join(cells).rstrip())
    for note in notes:
        print(f"  {note}")
    print()


def triggers(window: int) -> str:
    p = ContextProfile.from_window(window)
    return f"{k(p.tool_result_clearing_trigger)} / {k(p.compression_trigger_tokens)}"


def no_fire_rows(results: list[NoFire]) -> list[tuple[str, ...]]:
    rows = []
    for r in results:
        median, high = statistics.median(r.total) * 1e3, p95(r.total) * 1e3
        verdict = ("PASS" if median <= TARGET_MS else "over target") if r.size == SIZES[-1] else ""
        target = f"<= {TARGET_MS:g} ms {verdict}" if verdict else ""
        path = "router only" if not r.above_floor else ("router + compact" if r.above_floor == CALLS else "mixed")
        fired = f", {r.fired} fired!" if r.fired else ""
        rows.append((f"{k(r.start_tokens)} -> {k(r.end_tokens)}", f"{r.messages:,}", f"{r.window:,}",
                     triggers(r.window), path + fired, f"{statistics.median(r.router) * 1e3:.3f}", f"{median:.3f}",
                     f"{high:.3f}", f"{r.cold_ms:.1f}", target))
    return rows


TIER_NAMES = {"2": ("tier 2 clearing", Strategy.TOOL_RESULT_CLEARING),
              "3a": ("tier 3a full summary", Strategy.FULL_SUMMARY),
              "3b": ("tier 3b session memory", Strategy.SESSION_MEMORY)}


def fired_rows(results: list[Fired]) -> list[tuple[str, ...]]:
    rows = []
    for r in results:
        name, expected = TIER_NAMES[r.tier]
        fired = ",".join(sorted(r.strategies))
        check = "" if r.strategies == {expected.value} else f"  (expected {expected.value})"
        freed = r.before - r.after
        rows.append((name, f"{k(r.before)}", f"{r.messages:,}", f"{r.window:,}", triggers(r.window),
                     f"{statistics.median(r.seconds) * 1e3:.2f}", f"{max(r.seconds) * 1e3:.2f}",
                     f"{k(r.before)} -> {k(r.after)}", f"{k(freed)}", f"{100 * freed / max(1, r.before):.1f}%",
                     fired + check))
    return rows


async def run(profile_top: int) -> None:
    # An assembly point: builds every history, runs every measurement, prints the two tables.
    with tempfile.TemporaryDirectory(prefix="paicli-bench-") as project:
        probe = Compaction(new_caller(session_memory=False))
        ctx = RunContext(project_root=project)
        overhead = probe.estimator.system(probe.caller.system_message(ctx).content) + probe.estimator.schema(
            probe.caller.exposed_schemas())
        quiet = [await no_fire(size, NO_FIRE_WINDOW[size], project, overhead, seed) for seed, size in enumerate(SIZES)]
        fired = []
        for seed, size in enumerate(SIZES, start=10):
            n = SAMPLES[size]
            raw = build_history(Rounds(seed), size, overhead, cleared=False)
            fired.append(await fire("2", size, NO_FIRE_WINDOW[size], raw, project, n))
            cleared = build_history(Rounds(seed + 100), size, overhead, cleared=True)
            fired.append(await fire("3a", size, SUMMARY_WINDOW[size], cleared, project, n))
            if size in SESSION_HISTORY:
                cleared = build_history(Rounds(seed + 200), SESSION_HISTORY[size], overhead, cleared=True)
            fired.append(await fire("3b", size, SESSION_WINDOW.get(size, SUMMARY_WINDOW[size]), cleared, project, n))
        profiler = cProfile.Profile() if profile_top else None
        if profiler:  # a separate pass: the profiler's overhead must not reach the table
            await no_fire(SIZES[-1], NO_FIRE_WINDOW[SIZES[-1]], project, overhead, len(SIZES), profiler)
    print_table(f"nothing fires: {CALLS} model calls per size, each appending one message; ms per call "
                f"(router = Compaction.needed; total = router + compact node)",
                ("history (tokens)", "messages", "window", "clear / summary", "path", "router", "median", "p95",
                 "cold est.", "target"),
                no_fire_rows(quiet),
                [f"cold est.: the first estimate of a freshly built history (ms), system prompt and schemas "
                 f"({overhead:,} tokens) already cached."])
    print_table("each tier fires: router + compact node on the call where it fires, summary LLM time excluded; "
                "median and max of fresh runs (ms)",
                ("tier", "history", "messages", "window", "clear / summary", "median", "max",
                 "tokens before -> after", "freed", "%", "fired"),
                fired_rows(fired),
                ["tier 3b at the smallest size uses a 17k history: session memory keeps a tail of >= 10k tokens.",
                 f"samples per size: {', '.join(f'{k(s)}: {n}' for s, n in SAMPLES.items())}."])
    if profiler:
        print(f"-- cProfile, the no-fire loop at {k(SIZES[-1])}, top {profile_top} by own time --")
        pstats.Stats(profiler).strip_dirs().sort_stats("tottime").print_stats(profile_top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", type=int, nargs="?", const=25, default=0, metavar="N",
                        help="also print the top N functions of a cProfile of the no-fire loop at 1M tokens")
    args = parser.parse_args()
    asyncio.run(run(args.profile))


if __name__ == "__main__":
    main()
