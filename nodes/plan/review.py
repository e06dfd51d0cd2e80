"""review: the user reads the plan and executes, cancels or supplements it (reference s.4).

An interrupt whose payload carries the summary, the full table and what to resume with; the
CLI shows the keys, Studio shows the payload. A run without review (``RunContext.review``
false: ``paicli -p``) executes at once.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.plan.state import PlanState
from nodes.plan.text import REVIEW_CANCELLED, review_decision, review_text, visualize
from nodes.support.state import RunContext, run_context

REVIEW_KIND = "plan_review"
RESUME_WITH = ('"" or "run": execute; "cancel": cancel; any other text: re-plan with it as a '
               'supplement (or {"action": "execute" | "cancel"} / {"text": "..."})')
SUPPLEMENT_NOTICE = "📝 已收到补充要求，正在重新规划..."


def review_request(plan: dict[str, Any]) -> dict[str, Any]:
    return {"kind": REVIEW_KIND, "summary": review_text(plan), "plan": visualize(plan), "resume_with": RESUME_WITH}


async def review(state: PlanState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    plan = state.get("plan")
    if not plan or not run_context(runtime).review or plan.get("reviewed"):
        return {}
    action, text = review_decision(interrupt(review_request(plan)))
    if action == "cancel":
        return {"outcome": REVIEW_CANCELLED, "status": "cancelled"}
    if action == "supplement" and text:
        get_stream_writer()({"notice": SUPPLEMENT_NOTICE})
        supplement = "\n补充要求：" + text
        return {"goal": state["goal"] + supplement, "submitted": state["submitted"] + supplement, "plan": None}
    return {"plan": {**plan, "reviewed": True}}
