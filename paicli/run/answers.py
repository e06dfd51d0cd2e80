"""Answering the interrupts a run stopped on, one at a time (reference v.3: the approval dialog
is one at a time, parallel agents queue).

An approval from a unit names it (``request["unit"]``, set by ``graphs/unit.py``). "Approve all"
(``a``) for a tool answers every later request for that tool in this run, whichever task asks.
A plan review (``kind: plan_review``) goes to the front end's ``review``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping

from paicli.tools.call import facts_for
from paicli.tools.policy.audit import is_audited

APPROVE_ALL = "approve_all"
PLAN_REVIEW_KIND = "plan_review"  # paicli.nodes.plan.review.PLAN_REVIEW_KIND (not imported: the REPL starts light)


CANCELLED_REASON = "审批时被 Ctrl-C 取消"


async def ask_audited(ui: Any, request: Any, audit: Any = None, tools: Mapping[str, Any] | None = None) -> Any:
    """``ui.approve``; a question cancelled with Ctrl-C is audited as ``cancelled`` (issue 26:
    the audit log is what happened, a call put to the user and never answered included), when
    its tool (in ``tools``, the run's table) is audited."""
    try:
        return await ui.approve(request)
    except asyncio.CancelledError:
        tool = str(request.get("tool") or "") if isinstance(request, dict) else ""
        if audit is not None and is_audited(facts_for(tool, tools or {})):
            audit.write(tool, request.get("args"), "cancelled", CANCELLED_REASON, "hitl")
        raise


class Answers:
    def __init__(self, ui: Any, audit: Any = None, tools: Mapping[str, Any] | None = None):
        self.ui, self.audit = ui, audit  # audit: paicli.tools.policy.audit.AuditLog, for cancelled questions
        self.tools = tools  # the run's tool table, for the audited tools' facts
        self.approved_all: set[str] = set()

    async def answer_all(self, interrupts: list[Any]) -> dict[str, Any]:
        return {i.id: await self.answer(i.value) for i in interrupts}

    async def answer(self, request: Any) -> Any:
        if isinstance(request, dict) and request.get("kind") == PLAN_REVIEW_KIND:
            return await self.ui.review(request)
        tool = request.get("tool") if isinstance(request, dict) else None
        if tool in self.approved_all:
            self.ui.notice(f"  {unit_label(request)}{tool} 已全部放行，自动批准")
            return {"decision": APPROVE_ALL}
        if isinstance(request, dict) and request.get("unit"):
            self.ui.notice(f"🔐 任务 [{request['unit']}] 请求审批")
        answer = await ask_audited(self.ui, request, self.audit, self.tools)
        if isinstance(answer, dict) and answer.get("decision") == APPROVE_ALL and tool:
            self.approved_all.add(tool)
        return answer


def unit_label(request: dict[str, Any]) -> str:
    return f"[{request['unit']}] " if request.get("unit") else ""
