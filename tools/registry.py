"""The built-in tools (bound from ``paicli.tools.specs``), their schemas, and how one call or one batch is executed (s.8).

``run_tool`` is the one place tool errors become text the model can react to; only
cancellation passes through, so Ctrl-C still stops the run. Every result is a ``ToolText``
whose ``ok`` was set where the result was made: a plain returned string is a success, a
``failed(text)``, a raised ``PolicyError`` or any error is a failure. Nothing reads failure from
the text's prefixes (which stay the reference's model-facing wording).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

from paicli.tools.base import PolicyError, ToolContext, ToolSpec, ToolText, failed
from paicli.tools.specs import BUILTIN_SPECS

MAX_PARALLEL_TOOLS = 4  # reference (s.8)
BUILTIN_TOOLS: dict[str, ToolSpec] = {spec.name: spec.bound() for spec in BUILTIN_SPECS}


def schemas(tools: Mapping[str, ToolSpec] | Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI tool schemas sorted by name (reference t), so the prompt prefix stays stable."""
    specs = tools.values() if isinstance(tools, Mapping) else tools
    return [spec.schema() for spec in sorted(specs, key=lambda spec: spec.name)]


async def run_tool(name: str, args: dict[str, Any] | None, ctx: ToolContext,
                   tools: Mapping[str, ToolSpec] = BUILTIN_TOOLS) -> ToolText:
    return await run_spec(tools.get(name), name, args, ctx)


async def run_spec(spec: ToolSpec | None, name: str, args: dict[str, Any] | None, ctx: ToolContext) -> ToolText:
    """One call of ``spec`` (None: the call named no tool of the table)."""
    if spec is None:
        return failed(f"未知工具: {name}")
    args = args if isinstance(args, dict) else {}
    try:
        result = await spec.fn(args, ctx) if spec.is_async else await asyncio.to_thread(spec.fn, args, ctx)
    except PolicyError as exc:
        return ToolText(f"🛡️ 策略拒绝: {exc.reason}", refused=True)
    except Exception as exc:  # any tool bug becomes text the model can react to
        return failed(f"工具执行失败: {str(exc) or type(exc).__name__}")
    return result if isinstance(result, ToolText) else ToolText(str(result))


async def run_batch(calls: list[tuple[str, dict[str, Any]]], ctx: ToolContext,
                    tools: Mapping[str, ToolSpec] = BUILTIN_TOOLS, timings: list[float] | None = None) -> list[ToolText]:
    """Results in call order; runs of consecutive parallel-safe calls go concurrently.
    ``timings``, when given, receives each call's duration in seconds (for the audit log)."""
    return await run_specs([(tools.get(name), name, args) for name, args in calls], ctx, timings)


async def run_specs(calls: list[tuple[ToolSpec | None, str, dict[str, Any]]], ctx: ToolContext,
                    timings: list[float] | None = None) -> list[ToolText]:
    """``run_batch`` for calls that carry their spec (``paicli.tools.call.Call``: execution looks
    nothing up by name): ``(spec, name, args)``, spec None for a name the table does not hold."""
    results: list[ToolText] = [ToolText("")] * len(calls)
    limiter = asyncio.Semaphore(MAX_PARALLEL_TOOLS)

    async def run(index: int) -> None:
        async with limiter:
            spec, name, args = calls[index]
            started = time.monotonic()
            results[index] = await run_spec(spec, name, args, ctx)
            if timings is not None:
                timings[index] = time.monotonic() - started

    for group in _groups(calls):
        await asyncio.gather(*(run(index) for index in group))
    return results


def _groups(calls: list[tuple[ToolSpec | None, str, dict[str, Any]]]) -> list[list[int]]:
    """Consecutive parallel-safe calls share a group; every other call is a group of one."""
    groups: list[list[int]] = []
    previous_safe = False
    for index, (spec, _, _) in enumerate(calls):
        safe = spec is not None and spec.parallel_safe
        if safe and previous_safe:
            groups[-1].append(index)
        else:
            groups.append([index])
        previous_safe = safe
    return groups

