"""execute_tools: run the allowed calls of the last assistant message, answer every call.

Every call id of the assistant message gets exactly one ``ToolMessage``, in call order:
the tool's result, a denial, or why call_model refused it (``invalid_tool_calls``: arguments
cut off with the response, or not one JSON object).
Each result is wrapped in the untrusted-data boundary (reference r) before the model sees it.

One iteration's calls, top to bottom: each call one value (``paicli.tools.call.Call``: its spec and
facts) with its decision (``settled``), one ``Step`` per call; the tool context, the allowed calls run
(``run_allowed`` fills each step's result), oversized results offloaded, the messages, the audit
lines, the skill injections (``paicli.tools.skills.injection``), the runaway reminder, the state
update. Every stage reads the one list of steps.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from paicli.memory.context.offload import ToolResultOffloader
from paicli.memory.context.outcome import decided_artifact
from paicli.nodes.core.policy import decide_now, decision_context, recorded
from paicli.nodes.core.state import AgentState, Deps, RunContext, long_term_memory, memory_project_key, run_context
from paicli.nodes.core.turn_files import turn_files
from paicli.nodes.gate_tools import last_ai
from paicli.nodes.guards.cutoff import NAMELESS, invalid_json_error, refusal
from paicli.nodes.guards.turn import RUNAWAY_NOTICE, current_turn, runaway_reminder
from paicli.tools.base import ToolContext, ToolText
from paicli.tools.boundary import mask_secrets, mask_secrets_in, wrap
from paicli.tools.call import Call, calls_of
from paicli.tools.diffs import summary as change_summary
from paicli.tools.policy.audit import is_audited
from paicli.tools.policy.decision import Allow, Ask, Deny
from paicli.tools.policy.external_context import add_source, external_source
from paicli.tools.registry import run_specs

if TYPE_CHECKING:
    from paicli.nodes.core.options import CompactionOptions

# Only a graph whose state was edited by hand (Studio) can reach here with an open question:
# execution never asks, so it fails closed.
UNANSWERED = "[HITL] 操作未获批准：这次调用需要用户审批，但没有得到答复"
WAITING_NOTICE = "  ⏳ 等待浏览器：{holder} 正在使用"  # issue 40: a unit's turn with the browser


@dataclass(frozen=True)
class CallResult:
    """What one call came to."""

    text: str  # what the model reads, before the untrusted-data boundary
    ok: bool  # the status set where the result was made (a denial never ran: it failed)
    decided: bool  # a denial or a guard's refusal, not the model's doing (reference s.3)
    artifact: dict[str, Any] | None = None  # e.g. web_search's discovered URLs, for the turn policy
    seconds: float = 0.0


@dataclass(frozen=True)
class Step:
    """One call of the iteration: the call, its decision, and (once run or answered) its result."""

    call: Call
    decision: Allow | Deny
    result: CallResult | None = None

    @property
    def ran(self) -> bool:
        return isinstance(self.decision, Allow)


async def settled(state: AgentState, call: Call, ctx: RunContext, deps: Deps) -> Allow | Deny:
    """The iteration's decision on a call (made by call_model, answered by gate_tools). A call
    without one, in a state edited by hand, is decided now."""
    decision = recorded(state, call.id) or await decide_now(call, decision_context(state, ctx, deps))
    return Deny(UNANSWERED) if isinstance(decision, Ask) else decision


async def run_allowed(steps: list[Step], tool_ctx: ToolContext, deps: Deps) -> list[Step]:
    """The steps with their results, in call order: the allowed calls run (consecutive
    parallel-safe ones together), the denied ones answer with their text."""
    allowed = [(s.call.spec, s.call.name, s.decision.args) for s in steps if isinstance(s.decision, Allow)]
    seconds = [0.0] * len(allowed)
    results = iter(zip(await run_specs(allowed, tool_ctx, timings=seconds), seconds))
    done = []
    for step in steps:
        if isinstance(step.decision, Deny):
            done.append(replace(step, result=CallResult(step.decision.text, ok=False, decided=True)))
            continue
        result, took = next(results)
        text = mask_secrets(str(result), deps.masked)  # issue 34: before the offloader, the model, the ledger
        artifact = mask_secrets_in(result.artifact, deps.masked) if result.artifact else None  # the ledger keeps it too
        done.append(replace(step, result=CallResult(text, result.ok, result.refused, artifact, took)))
    return done


class Offloaders:
    """One tier-1 offloader per (project, session) (reference d.4), created on first use."""

    def __init__(self, options: CompactionOptions):
        self.options = options
        self._made: dict[tuple[str, str], ToolResultOffloader] = {}

    def get(self, ctx: RunContext) -> ToolResultOffloader | None:
        if not self.options.offload:
            return None
        key = (ctx.project_root, ctx.session_id)
        if key not in self._made:
            self._made[key] = ToolResultOffloader(ctx.project_root, ctx.session_id,
                                                  threshold=self.options.offload_threshold)
        return self._made[key]


async def offload(offloader: ToolResultOffloader | None, steps: list[Step]) -> list[Step]:
    """Oversized results go to a file; the model gets a preview (tier 1)."""
    if offloader is None or all(len(_result(s).text) <= offloader.threshold for s in steps):
        return steps

    def shrink(step: Step) -> Step:
        if not isinstance(step.decision, Allow):
            return step
        outcome = _result(step)
        text = offloader.offload_if_oversized(step.call.name, step.decision.args, outcome.text,
                                               ranged_read=step.call.facts.ranged_read)
        return replace(step, result=replace(outcome, text=text))

    return await asyncio.to_thread(lambda: [shrink(s) for s in steps])


def _result(step: Step) -> CallResult:
    assert step.result is not None, "a step's result is read after run_allowed"
    return step.result


def tool_message(call_id: str, name: str, outcome: CallResult) -> ToolMessage:
    """``artifact`` is kept for the turn policy, never shown; a decided outcome is marked so
    the runaway guard does not count it against the model."""
    artifact = decided_artifact(outcome.artifact) if outcome.decided else outcome.artifact
    extra = {"artifact": artifact} if artifact else {}
    status = "success" if outcome.ok else "error"
    return ToolMessage(wrap(name, outcome.text), tool_call_id=call_id, name=name, status=status, **extra)


def bad_arguments(call: dict[str, Any]) -> str:
    """``error`` is call_model's verdict (``paicli.nodes.guards.cutoff``): cut off, or not a JSON object,
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


def invalid_call_results(ai: AIMessage) -> list[ToolMessage]:
    return [tool_message(c["id"], c.get("name") or NAMELESS, CallResult(bad_arguments(c), ok=False, decided=False))
            for c in ai.invalid_tool_calls if c.get("id")]


def sources_after(sources: tuple[str, ...], steps: list[Step]) -> tuple[str, ...]:
    """reference (o.1): every call that ran read what it read, success or failure."""
    for step in steps:
        source = external_source(step.call.name, step.decision.args, step.call.facts) if step.ran else None
        if source is not None:
            sources = add_source(sources, source)
    return sources


def audit_row(call: Call, decision: Allow | Deny, verdict: str, reason: str, ms: int = 0,
              metadata: dict[str, Any] | None = None) -> tuple:
    """The arguments that ran (the user's edit), with the model's beside them when they differ
    (issue 26: the log is what happened)."""
    ran = decision.args if isinstance(decision, Allow) else call.args
    extra = {**(metadata or {}), **({"proposedArgs": call.args} if ran != call.args else {})}
    return call.name, ran, verdict, reason, decision.approver, ms, extra or None


def audit_metadata(outcome: CallResult) -> dict[str, Any] | None:
    """How a command ran (issue 24: sandboxed, network or outside) and what a write changed
    (issue 41: lines, sizes and hashes, ``paicli.tools.diffs``)."""
    artifact, metadata = outcome.artifact or {}, {}
    if artifact.get("sandbox"):
        metadata["sandbox"] = artifact["sandbox"]
    if isinstance(artifact.get("change"), dict):
        metadata["change"] = change_summary(artifact["change"])
    return metadata or None


async def audit(deps: Deps, steps: list[Step]) -> None:
    """reference (v.7): one line per risky call, allowed, denied or failed; failed is the
    status of the call's ToolMessage, so the log and the model agree."""
    if deps.audit is None:
        return
    rows = []
    for step in steps:
        call, decision, outcome = step.call, step.decision, _result(step)
        if not is_audited(call.facts):
            continue
        verdict = "deny" if isinstance(decision, Deny) else "allow" if outcome.ok else "error"
        reason = getattr(decision, "reason", "") or (outcome.text[:200] if verdict != "allow" else "")
        rows.append(audit_row(call, decision, verdict, reason, int(outcome.seconds * 1000),
                              audit_metadata(outcome) or browser_metadata(deps, call)))
    if rows:
        await asyncio.to_thread(lambda: [deps.audit.write(*row) for row in rows])


def audit_cancelled(deps: Deps, steps: list[Step]) -> None:
    """Calls that were allowed and then cancelled (Ctrl-C) while the iteration ran: written at once,
    the task is being cancelled."""
    if deps.audit is not None:
        for step in steps:
            if isinstance(step.decision, Allow) and is_audited(step.call.facts):
                deps.audit.write(*audit_row(step.call, step.decision, "cancelled", "执行中被 Ctrl-C 取消"))


def _browser_call(call: Call) -> bool:
    return call.facts.web == "browser"  # reference o.4: its spec says it drives a browser


async def browser_turn(deps: Deps, steps: list[Step]) -> None:
    """Issue 40: a batch with a browser call waits for its unit's turn with the browser (the
    lease, ``paicli.tools.browser.lease``); the front end shows the unit waiting meanwhile."""
    if deps.browser is None or not any(s.ran and _browser_call(s.call) for s in steps):
        return
    notify = get_stream_writer()

    def waiting(holder: str) -> None:
        notify({"browser_wait": holder or "?", "notice": WAITING_NOTICE.format(holder=holder or "?")})

    await deps.browser.lease.acquire(waiting, lambda: notify({"browser_wait": ""}))


def browser_metadata(deps: Deps, call: Call) -> dict[str, Any] | None:
    """reference (v.7): a browser call's audit line says which browser it drove."""
    if deps.browser is None or not _browser_call(call):
        return None
    return {"mode": "shared" if deps.browser.shared else "isolated"}


def after_browser_switch(approved: list[str], steps: list[Step]) -> list[str] | None:
    """reference (v.1): a connect or disconnect that switched the browser forgets "approve all"
    of the browser server; None when nothing changes."""
    from paicli.tools.browser.names import action_of

    switched = any(_result(s).ok and s.ran and _browser_call(s.call) and action_of(s.call.name) in ("connect", "disconnect")
                   for s in steps)
    kept = [key for key in approved if not key.startswith("mcp__chrome-devtools__")]
    return kept if switched and kept != approved else None


def split_images(steps: list[Step]) -> tuple[list[Step], list[Any]]:
    """Images a tool returned (``read_file`` of an image, issue 39) leave its result and follow
    the results as one internal user message each (reference r), so they are stored once."""
    from paicli.tools.images import ARTIFACT_KEY, image_followup

    kept, images = [], []
    for step in steps:
        outcome = _result(step)
        parts = (outcome.artifact or {}).get(ARTIFACT_KEY)
        if parts:
            artifact = {k: v for k, v in outcome.artifact.items() if k != ARTIFACT_KEY}  # type: ignore[union-attr]
            step = replace(step, result=replace(outcome, artifact=artifact or None))
            images.append(image_followup(step.call.name, parts))
        kept.append(step)
    return kept, images


def make_execute_tools(deps: Deps):
    offloaders = Offloaders(deps.compaction)
    project_keys: dict[tuple[str, str], str] = {}  # resolved once per project: a thread hop per step otherwise

    async def tool_context(state: AgentState, ctx: RunContext, runtime: Runtime) -> ToolContext:
        if (where := (ctx.project_key, ctx.project_root)) not in project_keys:
            # The project key may readlink, a call `langgraph dev` refuses on its event loop.
            project_keys[where] = await asyncio.to_thread(memory_project_key, ctx)
        key = project_keys[where]
        return ToolContext(root=Path(ctx.project_root), session_id=ctx.session_id,
                           command_timeout=ctx.command_timeout, offloader=offloaders.get(ctx), web=deps.web,
                           memory=long_term_memory(runtime, deps), project_key=key,
                           external_sources=tuple(state.get("external_sources") or ()),
                           files_of_turn=partial(turn_files, state["messages"], deps.tools), hidden_env=deps.hidden_env,
                           sandbox=deps.sandbox, vision=ctx.vision, lsp=deps.lsp)

    async def execute_tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, ai = run_context(runtime), last_ai(state)
        if ai is None:
            return {}
        steps = [Step(call, await settled(state, call, ctx, deps)) for call in calls_of(ai, deps.tools)]
        tool_ctx = await tool_context(state, ctx, runtime)
        try:
            await browser_turn(deps, steps)
            steps = await offload(tool_ctx.offloader, await run_allowed(steps, tool_ctx, deps))
        except asyncio.CancelledError:
            audit_cancelled(deps, steps)
            raise
        steps, images = split_images(steps)
        await audit(deps, steps)
        return state_update(state, steps, result_messages(state, ai, steps, images, deps), tool_ctx.external_sources)

    return execute_tools


def result_messages(state: AgentState, ai: AIMessage, steps: list[Step], images: list[Any], deps: Deps) -> list[Any]:
    """What the model reads next: a result per call, in order, then the invalid calls' results,
    the images the results showed, skills loaded settled, and the runaway reminder when due."""
    from paicli.tools.skills.injection import settle as settle_skill_loads  # start-up: only once a tool runs

    messages = [tool_message(s.call.id, s.call.name, _result(s)) for s in steps]
    messages = settle_skill_loads(state["messages"], [*messages, *invalid_call_results(ai), *images])
    reminder = runaway_reminder([*current_turn(state["messages"]), *messages], deps.budget.remind_after)
    if reminder is not None:
        get_stream_writer()({"notice": RUNAWAY_NOTICE})
        messages.append(reminder)
    return messages


def state_update(state: AgentState, steps: list[Step], messages: list[Any], sources_before: tuple[str, ...]) -> dict[str, Any]:
    """The node's update: the messages; "approve all" dropped after a browser switch; the
    iteration's decisions cleared; the external sources the calls added (reference o.1)."""
    update: dict[str, Any] = {"messages": messages}
    if (approved := after_browser_switch(list(state.get("approved_all") or []), steps)) is not None:
        update["approved_all"] = approved
    if state.get("decisions"):
        update["decisions"] = {}
    sources = sources_after(sources_before, steps)
    if sources != sources_before:
        update["external_sources"] = list(sources)
    return update
