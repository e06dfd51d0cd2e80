"""The orchestrator's nodes (reference s.5 Flow): take the goal, plan, schedule waves of ready
steps, collect their results in step order, and write the final text.

The planner, ``schedule`` and ``collect`` are the shared nodes of ``paicli.nodes.dag`` (as Plan's), over
``TEAM``: the plan's steps, their status in ``records``. The planner asks a member without tools
(``paicli.nodes.team.members``); a reply that breaks any plan rule ends the run before a worker
starts. ``collect`` applies a wave's results in plan
order, whatever order they finished in; a failed step never stops its sibling, only the steps
that depend on it, which stay pending and are reported as skipped.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from paicli.nodes import dag
from paicli.nodes.core.policy import submitted_text
from paicli.nodes.core.request import turn_memory
from paicli.nodes.core.run_errors import require_user_message
from paicli.nodes.core.state import Deps, RunContext, long_term_memory, memory_project_key, run_context
from paicli.nodes.team import texts
from paicli.nodes.team.inputs import Dependency, TeamInputs
from paicli.nodes.team.members import reply_text
from paicli.nodes.team.plan import PlanError, TeamStep, parse_team_plan
from paicli.nodes.team.schedule import COMPLETED, FAILED, MAX_WORKERS, PENDING, assign, left_pending, reviewer_name, status
from paicli.nodes.team.state import TeamState


def _notify(*lines: str) -> None:
    notify = get_stream_writer()
    for line in lines:
        notify({"notice": line.rstrip("\n")})


async def team_start(state: TeamState) -> dict[str, Any]:
    """A new run: the goal is the user's message; nothing of an earlier run carries over."""
    messages = list(state.get("messages") or [])
    require_user_message(messages)
    _notify(texts.PLANNING_HEADING, texts.PLANNER_WORKING)
    return {"submitted": submitted_text(messages), "plan": None, "records": None, "results": None, "wave": [],
            "cursor": 0, "batches": 0, "outcome": "", "status": "", "error": None}


TEAM: dag.Dag[TeamState] = dag.Dag(
    units=lambda state: state["plan"]["steps"],
    status_of=lambda state: partial(status, state.get("records") or {}),
    running=lambda state: [item["step"]["id"] for item in state.get("wave") or []],
    pending=PENDING, completed=COMPLETED, failed=FAILED, max_wave=MAX_WORKERS, no_result=texts.EMPTY_RESULT)


def make_planning(deps: Deps, planner: Any, inputs: TeamInputs, member_config: Any):
    """Team's planning for ``paicli.nodes.dag.make_planner``: the planner member's reply, parsed strictly."""

    async def plan_team(state: TeamState, config: RunnableConfig, runtime: Runtime[RunContext]) -> dict[str, Any]:
        goal, ctx = state["submitted"], run_context(runtime)
        request = [HumanMessage(inputs.planning(goal))]
        # Q16: the memories relevant to the goal ride after the request, as in every mode's turn
        note = await asyncio.to_thread(turn_memory, long_term_memory(runtime, deps), [], goal,
                                       window=ctx.context_window, project_key=memory_project_key(ctx), now=deps.clock())
        out = await planner.ainvoke({"messages": request + ([note] if note else [])}, member_config(config, "planner"))
        if out.get("error"):
            raise dag.PlanningFailed(texts.PLANNER_FAILED.format(error=out["error"]))
        reply = reply_text(out)
        if not reply.strip():
            raise dag.PlanningFailed(texts.PLAN_BLANK)
        try:
            plan = parse_team_plan(reply)
        except PlanError as exc:
            raise dag.PlanningFailed(texts.PLAN_REJECTED.format(reason=exc, reply=texts.bounded_reply(reply))) from None
        _notify(*texts.plan_lines(plan["steps"]), texts.EXECUTION_HEADING)
        return {"plan": plan}

    return plan_team


def start_wave(state: TeamState, ready: list[TeamStep]) -> dict[str, Any]:
    wave, cursor = assign(ready, state.get("cursor", 0))
    batches = state.get("batches", 0) + (len(wave) > 1)
    if len(wave) > 1:
        _notify(texts.wave_line(batches, len(wave)))
    _notify(*(texts.step_started(worker, step) for step, worker in wave))
    return {"wave": [{"step": s, "worker": w, "reviewer": reviewer_name(s["id"], len(wave) > 1)} for s, w in wave],
            "cursor": cursor, "batches": batches}


def step_payloads(state: TeamState, inputs: TeamInputs) -> list[dict[str, Any]]:
    """One unit per step of the wave: its context is the goal and its dependencies' results."""
    by_id = {s["id"]: s for s in state["plan"]["steps"]}
    records = state.get("records") or {}
    payloads = []
    for item in state.get("wave") or []:
        step = item["step"]
        done = [Dependency(by_id[d], str(records[d].get("result") or "")) for d in step["dependencies"]]
        # reference s.5 runStep item 2: what the dependencies' web_search grounded, also trusted here
        urls = sorted({u for d in step["dependencies"] for u in records[d].get("trusted_urls") or ()})
        context = inputs.context(state["submitted"], done, urls)
        payloads.append({**dag.unit_payload(state, step["id"], inputs.step(context, step), urls), "context": context, **item})
    return payloads


def apply_results(state: TeamState, done: list[dag.Finished], ctx: RunContext) -> dict[str, Any]:
    workers = {item["step"]["id"]: item["worker"] for item in state.get("wave") or []}
    records = {step.id: {"status": step.status, "result": step.text, "worker": workers[step.id],
                         "retries": step.result.get("retries", 0), "trusted_urls": list(step.result.get("trusted_urls") or [])}
               for step in done}
    return {"records": records, "wave": []}


schedule = dag.make_schedule(TEAM, start_wave)
collect = dag.make_collect(TEAM, apply_results)


async def finish(state: TeamState) -> dict[str, Any]:
    """reference s.5 items 6-7: skipped steps, then the final header and summary."""
    if state.get("outcome"):  # the run ended while planning
        return {"messages": [AIMessage(state["outcome"])]}
    steps, records = state["plan"]["steps"], state.get("records") or {}
    _notify(*(texts.skipped(s) for s in left_pending(steps, records)))
    text = texts.final_text(steps, records)
    return {"outcome": text, "status": texts.run_status(steps, records), "messages": [AIMessage(text)]}
