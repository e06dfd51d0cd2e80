"""The Plan graph's state: the plan and its progress; the tasks' messages live in their own
units (``graphs/unit.py``), not here."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from paicli.nodes.core.state import ModeState
from paicli.nodes.unit import merge_results


class PlanState(ModeState, total=False):
    goal: str  # what is planned: the user's text, plus supplements, or a replan's goal
    plan: Optional[dict[str, Any]]  # paicli.nodes.plan.model
    replans: int
    replan_reason: str
    batch: list[str]  # ids of the tasks running now: the wave (key kept: it is in saved runs)
    results: Annotated[dict[str, Any], merge_results]  # unit id -> result, for the running wave
    failures: list[str]  # "任务 X 失败: …" lines for the final text
    stopping: bool  # replan limit reached: skip what is left after this wave
