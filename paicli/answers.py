"""Answering the interrupts a run stopped on, one at a time (reference v.3: the approval dialog
is one at a time, parallel agents queue).

An approval from a unit names it (``request["unit"]``, set by ``graphs/unit.py``). "Approve all"
(``a``) for a tool answers every later request for that tool in this run, whichever task asks.
A plan review (``kind: plan_review``) goes to the front end's ``review``.
"""

from __future__ import annotations

from typing import Any

APPROVE_ALL = "approve_all"
REVIEW_KIND = "plan_review"  # nodes.plan.review.REVIEW_KIND (not imported: the REPL starts light)


class Answers:
    def __init__(self, ui: Any):
        self.ui = ui
        self.approved_all: set[str] = set()

    async def answer_all(self, interrupts: list[Any]) -> dict[str, Any]:
        return {i.id: await self.answer(i.value) for i in interrupts}

    async def answer(self, request: Any) -> Any:
        if isinstance(request, dict) and request.get("kind") == REVIEW_KIND:
            return await self.ui.review(request)
        tool = request.get("tool") if isinstance(request, dict) else None
        if tool in self.approved_all:
            self.ui.notice(f"  {unit_label(request)}{tool} 已全部放行，自动批准")
            return {"decision": APPROVE_ALL}
        if isinstance(request, dict) and request.get("unit"):
            self.ui.notice(f"🔐 任务 [{request['unit']}] 请求审批")
        answer = await self.ui.approve(request)
        if isinstance(answer, dict) and answer.get("decision") == APPROVE_ALL and tool:
            self.approved_all.add(tool)
        return answer


def unit_label(request: dict[str, Any]) -> str:
    return f"[{request['unit']}] " if request.get("unit") else ""
