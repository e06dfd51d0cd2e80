"""The Plan graph's state: the plan and its progress; the tasks' messages live in their own
units (``graphs/unit.py``), not here."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from nodes.unit import merge_results


class PlanState(TypedDict, total=False):
    # The user's goal, then the run's result: what Studio shows and what fact extraction reads.
    messages: Annotated[list, add_messages]
    submitted: str  # the user's text (authority: turn policy, extraction)
    goal: str  # what is planned: the user's text, plus supplements, or a replan's goal
    plan: Optional[dict[str, Any]]  # nodes.plan.model
    replans: int
    replan_reason: str
    batch: list[str]  # ids of the tasks running now
    results: Annotated[dict[str, Any], merge_results]  # unit id -> result, for the running batch
    failures: list[str]  # "任务 X 失败: …" lines for the final text
    stopping: bool  # replan limit reached: skip what is left after this batch
    outcome: str  # the final text
    status: str  # "" running | completed | partial | failed | cancelled
    approved_all: list[str]  # "approve all" answers, shared by every task of the run
    external_sources: list[str]  # reference (o.1): what any task read
    error: Optional[str]
