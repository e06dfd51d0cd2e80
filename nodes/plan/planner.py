"""plan_start and Plan's planning: take the user's goal, then make the plan (reference s.4).

The planner node is ``paicli.nodes.dag.make_planner`` over ``make_planning``, which tries the
simple-goal shortcut first (no model call), otherwise asks the model once, without tools, with
the Plan Builder prompt and PAI.md. A reply that is not a valid plan, or a provider failure,
ends the run with ``❌ 执行失败: <why>``; for a reply that is not a plan, ``error`` holds a
bounded preview of what the model sent (issue 26: the CLI shows it on stderr).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from paicli.nodes.core.policy import submitted_text
from paicli.nodes.core.run_errors import require_user_message
from paicli.nodes.core.state import Deps, RunContext, run_context
from paicli.nodes.dag import PlanningFailed
from paicli.nodes.guards.provider_errors import describe_provider_error
from paicli.nodes.model.response import PROVIDER_ERRORS, reply_preview
from paicli.nodes.plan.model import PlanError, parse_plan, simple_plan
from paicli.nodes.plan.state import PlanState
from paicli.prompts import PromptSources, assemble_planner_prompt
from paicli.prompts.pai_md import load_project_context

PLANNING_REQUEST = "请为以下任务制定执行计划：\n"
PLANNING_FAILED = "❌ 执行失败: {error}"  # the run's final text when planning fails
PLANNER_TAGS = ["nostream", "planner"]  # the JSON is not an answer to show token by token


async def plan_start(state: PlanState) -> dict[str, Any]:
    """A new run: the goal is the user's message; nothing of an earlier run carries over."""
    messages = list(state.get("messages") or [])
    require_user_message(messages)
    goal = submitted_text(messages)
    return {"submitted": goal, "goal": goal, "plan": None, "replans": 0, "replan_reason": "", "batch": [],
            "results": None, "failures": [], "stopping": False, "outcome": "", "status": "", "error": None}


def make_planning(deps: Deps):
    """Plan's planning for ``paicli.nodes.dag.make_planner``."""

    async def plan_tasks(state: PlanState, config: RunnableConfig, runtime: Runtime[RunContext]) -> dict[str, Any]:
        notify, goal = get_stream_writer(), state["goal"]
        if state.get("replan_reason"):
            notify({"notice": f"🔄 重新规划，原因: {state['replan_reason']}"})
        notify({"notice": f"📋 正在规划任务: {goal}"})
        plan_id = f"plan_{int(deps.clock().timestamp() * 1000)}"
        plan = simple_plan(goal, plan_id)
        if plan is None:
            reply = ""
            try:
                reply = await ask_model(deps, run_context(runtime), goal)
                plan = parse_plan(reply, goal, plan_id)
            except PlanError as exc:
                raise PlanningFailed(PLANNING_FAILED.format(error=exc), reply_preview(reply)) from None
            except PROVIDER_ERRORS as exc:
                raise PlanningFailed(PLANNING_FAILED.format(error=describe_provider_error(exc))) from None
        return {"plan": plan, "replan_reason": ""}

    return plan_tasks


async def ask_model(deps: Deps, ctx: RunContext, goal: str) -> str:
    root = Path(ctx.project_root)
    sources = PromptSources.for_project(deps.prompt_home, root)
    system = assemble_planner_prompt(project_context=load_project_context(root, deps.prompt_home), sources=sources)
    reply = await deps.model.with_config(tags=PLANNER_TAGS).ainvoke(
        [SystemMessage(system), HumanMessage(PLANNING_REQUEST + goal)])
    if reply.usage_metadata:  # the run's token line counts the planner's call too
        get_stream_writer()({"usage": dict(reply.usage_metadata)})
    if reasoning := reply.additional_kwargs.get("reasoning_content"):  # shown as `🧠 规划思考` (reference s.4)
        get_stream_writer()({"reasoning": str(reasoning), "role": "planner"})
    return reply.text if isinstance(reply.text, str) else str(reply.content)
