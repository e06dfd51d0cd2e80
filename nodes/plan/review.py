"""review: the user reads the plan and executes, cancels or supplements it (reference s.4).

An interrupt whose payload is data, the same for the CLI and for Studio or an SDK client
(issue 26): the goal, the planner's summary, the tasks as objects (id, description, type,
dependencies, ``batch``: the wave), the resume values accepted with their meaning, and help in Chinese and
English. The terminal's keys are the CLI's business (``paicli/ui/plan_review.py``). A run without review
(``RunContext.review`` false: ``paicli -p``) executes at once.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from paicli.nodes.core.state import RunContext, run_context
from paicli.nodes.plan.state import PlanState
from paicli.nodes.plan.text import PLAN_REVIEW_CANCELLED, plan_review_answer, task_rows

PLAN_REVIEW_KIND = "plan_review"
RESUME = {"execute": {"action": "execute"}, "cancel": {"action": "cancel"},
          "supplement": {"text": "补充要求 / what to add"}}
MEANINGS = {"execute": "按当前计划执行 / run the plan as shown",
            "cancel": "取消本次计划，不执行任何任务 / cancel the plan, no task runs",
            "supplement": "把补充要求加入目标后重新规划，再次审阅 / re-plan with the text added to the goal, then review again"}
HELP = ("Resume (Command(resume=...)) with one of the values under 'resume': execute, cancel, or supplement "
        "with your text in 'text'. Plain strings work too: \"\" or \"run\" executes, \"cancel\" cancels, any "
        "other string is a supplement. / 用 'resume' 中的一个值恢复运行：execute 执行，cancel 取消，supplement "
        "在 text 中给出补充要求后重新规划。也可直接用字符串：\"\" 或 \"run\" 执行，\"cancel\" 取消，其他字符串作为补充要求。")
SUPPLEMENT_NOTICE = "📝 已收到补充要求，正在重新规划..."


def plan_review_request(plan: dict[str, Any]) -> dict[str, Any]:
    return {"kind": PLAN_REVIEW_KIND, "goal": plan["goal"], "summary": plan.get("summary") or "",
            "tasks": task_rows(plan), "resume": RESUME, "meanings": MEANINGS, "help": HELP}


async def plan_review(state: PlanState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    plan = state.get("plan")
    if not plan or not run_context(runtime).review or plan.get("reviewed"):
        return {}
    action, text = plan_review_answer(interrupt(plan_review_request(plan)))
    if action == "cancel":
        return {"outcome": PLAN_REVIEW_CANCELLED, "status": "cancelled"}
    if action == "supplement" and text:
        get_stream_writer()({"notice": SUPPLEMENT_NOTICE})
        supplement = "\n补充要求：" + text
        return {"goal": state["goal"] + supplement, "submitted": state["submitted"] + supplement, "plan": None}
    return {"plan": {**plan, "reviewed": True}}
