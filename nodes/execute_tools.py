"""execute_tools: run the allowed calls of the last assistant message, answer every call.

Every call id of the assistant message gets exactly one ``ToolMessage``, in call order:
the tool's result, a denial, or why call_model refused it (``invalid_tool_calls``: arguments
cut off with the response, or not one JSON object).
Each result is wrapped in the untrusted-data boundary (reference r) before the model sees it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from nodes.guards.cutoff import NAMELESS, invalid_json_error, refusal
from memory.context.offload import ToolResultOffloader
from memory.context.outcome import decided_artifact
from memory.longterm.entry import normalize_project_key
from nodes.gate_tools import last_ai, verdict
from nodes.support.policy import decide_call, turn_view
from nodes.support.state import AgentState, Deps, RunContext, long_term_memory, run_context
from nodes.support.turn_files import turn_files
from nodes.guards.turn import RUNAWAY_NOTICE, current_turn, runaway_reminder
from tools.policy.audit import is_audited
from tools.base import ToolContext, ToolText
from tools.boundary import wrap
from tools.policy.external_context import external_source, record
from tools.registry import run_batch
from tools.skills.injection import settle as settle_skill_loads


def bad_arguments(call: dict[str, Any]) -> str:
    """``error`` is call_model's verdict (``nodes.guards.cutoff``): cut off, or not a JSON object,
    with a preview of the raw arguments (the stored call carries ``{}`` instead)."""
    raw = call.get("args") if isinstance(call.get("args"), str) else None
    error = call.get("error") or refusal(invalid_json_error(_json_error(raw)), raw)
    return f"工具执行失败: {error}"


def _json_error(raw: Any) -> str:
    """Streamed invalid calls carry no error text; tell the model what the parser saw."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        return str(exc)
    return "需要一个 JSON 对象" if not isinstance(value, dict) else "无法解析"


def tool_message(call_id: str, name: str, text: str, ok: bool, artifact: dict[str, Any] | None = None,
                 decided: bool = False) -> ToolMessage:
    """``ok`` is the status the tool (or the gate) set where the result was made; ``decided``
    marks a denial or refusal (not the model's doing); ``artifact`` (e.g. web_search's
    discovered URLs) is kept for the turn policy, never shown."""
    artifact = decided_artifact(artifact) if decided else artifact
    extra = {"artifact": artifact} if artifact else {}
    status = "success" if ok else "error"
    return ToolMessage(wrap(name, text), tool_call_id=call_id, name=name, status=status, **extra)


def make_execute_tools(deps: Deps):
    offloaders: dict[tuple[str, str], ToolResultOffloader] = {}

    def offloader_for(ctx: RunContext) -> ToolResultOffloader | None:
        options = deps.compaction
        if not options.offload:
            return None
        key = (ctx.project_root, ctx.session_id)
        if key not in offloaders:
            offloaders[key] = ToolResultOffloader(ctx.project_root, ctx.session_id, threshold=options.offload_threshold)
        return offloaders[key]

    async def offload(offloader: ToolResultOffloader | None, runnable: list, results: list[str]) -> list[str]:
        """Tier 1 (reference d.4): oversized results go to a file, the model gets a preview."""
        if offloader is None or all(len(r) <= offloader.threshold for r in results):
            return results
        pairs = zip(runnable, results)
        return await asyncio.to_thread(lambda: [offloader.offload_if_oversized(n, a, r) for (_, n, a), r in pairs])

    async def execute_tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, ai = run_context(runtime), last_ai(state)
        if ai is None:
            return {}
        verdicts = decided(state, ctx, ai)
        runnable = [(c["id"], c["name"], verdicts[c["id"]]["args"]) for c in ai.tool_calls if verdicts[c["id"]]["allow"]]
        texts = {c["id"]: verdicts[c["id"]]["text"] for c in ai.tool_calls if not verdicts[c["id"]]["allow"]}
        sources = tuple(state.get("external_sources") or ())
        # normalize_project_key may readlink, a call `langgraph dev` refuses on its event loop.
        key = await asyncio.to_thread(normalize_project_key, ctx.project_root)
        tool_ctx = tool_context(ctx, runtime, key, sources, turn_files(state["messages"]))
        results, seconds = await timed_batch([(name, args) for _, name, args in runnable], tool_ctx)
        artifacts = {cid: r.artifact for (cid, _, _), r in zip(runnable, results)}
        # Denials never ran: they failed. Read before offloading, which returns plain text.
        ok = {cid: False for cid in texts} | {cid: r.ok for (cid, _, _), r in zip(runnable, results)}
        refused = set(texts) | {cid for (cid, _, _), r in zip(runnable, results) if r.refused}
        results = await offload(tool_ctx.offloader, runnable, results)
        texts.update({cid: text for (cid, _, _), text in zip(runnable, results)})
        for _, name, args in runnable:  # reference (o.1): success or failure, it was read
            sources = record(sources, external_source(name, args))
        messages = [tool_message(c["id"], c["name"], texts[c["id"]], ok[c["id"]], artifacts.get(c["id"]),
                                 c["id"] in refused) for c in ai.tool_calls]
        await audit(ai.tool_calls, verdicts, texts, {m.tool_call_id: m.status for m in messages}, seconds)
        messages += [tool_message(c["id"], c.get("name") or NAMELESS, bad_arguments(c), False)
                     for c in ai.invalid_tool_calls if c.get("id")]
        messages = settle_skill_loads(state["messages"], messages)  # skill bodies after the results (s.6)
        reminder = runaway_reminder([*current_turn(state["messages"]), *messages], deps.budget.remind_after)
        if reminder is not None:
            get_stream_writer()({"notice": RUNAWAY_NOTICE})
            messages.append(reminder)
        update: dict[str, Any] = {"messages": messages}
        if state.get("verdicts"):
            update["verdicts"] = {}
        if sources != tuple(state.get("external_sources") or ()):
            update["external_sources"] = list(sources)
        return update

    def decided(state: AgentState, ctx: RunContext, ai: Any) -> dict[str, dict[str, Any]]:
        """gate_tools' verdicts, or the policy's and approval level's when nobody was asked."""
        verdicts, view = state.get("verdicts") or {}, turn_view(state, deps)
        approved = set(state.get("approved_all") or ())
        return {c["id"]: verdicts.get(c["id"]) or verdict(decide_call(view, c, ctx, approved, deps))
                for c in ai.tool_calls}

    def tool_context(ctx: RunContext, runtime: Runtime, project_key: str, sources: tuple[str, ...],
                     files: tuple[str, ...]) -> ToolContext:
        return ToolContext(root=Path(ctx.project_root), session_id=ctx.session_id,
                           command_timeout=ctx.command_timeout, offloader=offloader_for(ctx), web=deps.web,
                           memory=long_term_memory(runtime, deps), project_key=project_key,
                           external_sources=sources, source_files=files, hidden_env=deps.hidden_env)

    async def timed_batch(calls: list[tuple[str, dict[str, Any]]], tool_ctx: ToolContext) -> tuple[list[ToolText], list[float]]:
        seconds = [0.0] * len(calls)
        results = await run_batch(calls, tool_ctx, deps.tools, timings=seconds)
        return results, seconds

    async def audit(calls: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]], texts: dict[str, str],
                    statuses: dict[str, str], seconds: list[float]) -> None:
        """reference (v.7): one line per risky call, allowed, denied or failed; failed is the
        status of the call's ToolMessage, so the log and the model agree."""
        if deps.audit is None:
            return
        ran = iter(seconds)
        rows = []
        for call in calls:
            v, text = verdicts[call["id"]], texts[call["id"]]
            duration = next(ran) if v["allow"] else 0.0
            if is_audited(call["name"]):
                outcome = "deny" if not v["allow"] else "error" if statuses[call["id"]] == "error" else "allow"
                reason = v.get("reason") or (text[:200] if outcome != "allow" else "")
                rows.append((call["name"], call["args"], outcome, reason, v.get("approver", "none"), int(duration * 1000)))
        if rows:
            await asyncio.to_thread(lambda: [deps.audit.record(*row) for row in rows])

    return execute_tools
