"""schedule and collect: one wave of ready tasks at a time (reference s.4 "Execution").

Both are the shared nodes of ``paicli.nodes.dag`` over ``PLAN``, the plan's tasks in execution order.
``schedule`` takes the ready tasks (at most ``MAX_WAVE``),
marks them RUNNING and announces them; the graph fans them out as units. ``collect`` applies
their results in task order, whatever order they finished in, and decides what follows a
failure: re-plan while progress < 50 % and re-plans are left, otherwise skip what depended on it.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer

from paicli.nodes import dag
from paicli.nodes.core.state import RunContext
from paicli.nodes.plan.model import (
    COMPLETED,
    FAILED,
    PENDING,
    RUNNING,
    SKIPPED,
    dependents,
    progress,
    status_reader,
    tasks_in_order,
)
from paicli.nodes.plan.state import PlanState
from paicli.nodes.plan.text import replan_goal

MAX_WAVE = 4  # reference (s.4): a pool of min(N, 4) threads; the graph layer fans out what this node picks
PREVIEW_CHARS = 100
START_NOTICE = "🚀 开始执行计划..."
NO_RESULT = "任务没有结果"

PLAN: dag.Dag[PlanState] = dag.Dag(
    units=lambda state: tasks_in_order(state["plan"]), status_of=lambda state: status_reader(state["plan"]),
    running=lambda state: state.get("batch") or [], pending=PENDING, completed=COMPLETED, failed=FAILED,
    max_wave=MAX_WAVE, no_result=NO_RESULT)


def _with_status(plan: dict[str, Any], changes: dict[str, tuple[str, str | None]],
                 extra: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A new plan whose tasks in ``changes`` get (status, result) and the keys in ``extra``;
    the state's plan is never edited."""
    tasks = []
    for t in plan["tasks"]:
        status, result = changes.get(t["id"], (t["status"], None))
        more = (extra or {}).get(t["id"], {})
        tasks.append({**t, **more, "status": status, "result": t["result"] if result is None else result})
    return {**plan, "tasks": tasks}


def start_wave(state: PlanState, wave: list[dict[str, Any]]) -> dict[str, Any]:
    plan, notify = state["plan"], get_stream_writer()
    if state.get("stopping"):  # reference (s.4 step 6): the replan limit was reached
        left = [t["id"] for t in plan["tasks"] if t["status"] == PENDING]
        lines = [f"任务 {i} 已跳过: 已达到重新规划上限" for i in left]
        return {"plan": _with_status(plan, {i: (SKIPPED, None) for i in left}), "batch": [],
                "failures": [*state.get("failures", []), *lines], "stopping": False}
    if not any(t["status"] != PENDING for t in plan["tasks"]) and wave:
        notify({"notice": START_NOTICE})
    if len(wave) == 1:
        notify({"notice": f"▶️ 执行任务 [{wave[0]['id']}]: {wave[0]['description']}"})
    elif wave:
        notify({"notice": f"⚡ 本轮并行执行 {len(wave)} 个任务: {', '.join(t['id'] for t in wave)}"})
        for t in wave:
            notify({"notice": f"▶️ 并行任务 [{t['id']}]: {t['description']}"})
    return {"plan": _with_status(plan, {t["id"]: (RUNNING, None) for t in wave}), "batch": [t["id"] for t in wave]}


def apply_results(state: PlanState, done: list[dag.Finished], ctx: RunContext) -> dict[str, Any]:
    plan, notify, max_replans = state["plan"], get_stream_writer(), max(0, ctx.max_replans)
    failures, stopping, update = list(state.get("failures") or []), bool(state.get("stopping")), {}
    for task in done:
        if task.ok:
            plan = _with_status(plan, {task.id: (task.status, task.text)},
                                {task.id: {"trusted_urls": list(task.result.get("trusted_urls") or [])}})
            notify({"notice": f"✅ 完成 [{task.id}]" + (f": {task.text[:PREVIEW_CHARS]}" if task.text.strip() else "")})
            continue
        plan = _with_status(plan, {task.id: (task.status, task.text)})
        notify({"notice": f"❌ 失败 [{task.id}]: {task.text}"})
        failures.append(f"任务 {task.id} 失败: {task.text}")
        if not stopping and progress(plan).fraction < 0.5:
            used = state.get("replans", 0)
            if used < max_replans:
                notify({"notice": f"🔄 尝试重新规划（第 {used + 1}/{max_replans} 次）..."})
                update = {"goal": replan_goal(plan, task.text), "replan_reason": task.text, "replans": used + 1}
                break  # the rest of this wave's results are discarded with the old plan
            line = f"🛑 已达到重新规划上限（{max_replans} 次），停止执行剩余任务。"
            notify({"notice": line})
            failures.append(line)
            stopping = True
        else:
            skipped = [d for d in dependents(plan, task.id) if _status(plan, d) == PENDING]
            plan = _with_status(plan, {d: (SKIPPED, None) for d in skipped})
            failures += [f"任务 {d} 已跳过: 依赖的任务 {task.id} 失败" for d in skipped]
    if update:  # the new plan's run starts afresh (its result replaces this one's)
        plan, failures, stopping = None, [], False
    return {"plan": plan, **update, "batch": [], "failures": failures, "stopping": stopping}


schedule = dag.make_schedule(PLAN, start_wave)
collect = dag.make_collect(PLAN, apply_results)


def _status(plan: dict[str, Any], task_id: str) -> str:
    return next(t["status"] for t in plan["tasks"] if t["id"] == task_id)
