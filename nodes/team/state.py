"""The Team graph's state, and a step's (reference s.5). Members' messages live in their own
units (``graphs/unit.py``): the worker's in its step, the planner's and reviewers' in theirs."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from paicli.nodes.core.state import ModeState
from paicli.nodes.team.plan import TeamPlan, TeamStep
from paicli.nodes.unit import UnitInput, UnitState, merge_results


def merge_records(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Steps add or replace their record by id; a new run starts from ``None``."""
    if right is None:
        return {}
    return {**(left or {}), **right}


class TeamState(ModeState, total=False):
    plan: Optional[TeamPlan]
    # step id -> {"status", "result", "worker", "retries", "trusted_urls"}; a step without one is pending.
    records: Annotated[dict[str, Any], merge_records]
    results: Annotated[dict[str, Any], merge_results]  # the running wave's, by step id
    wave: list[dict[str, Any]]  # the running wave: [{"step", "worker", "reviewer"}]
    cursor: int  # round-robin position over WORKERS
    batches: int  # parallel waves so far, for "批次 #k" (key kept: it is in saved runs)


class StepInput(UnitInput, total=False):
    step: TeamStep
    worker: str
    reviewer: str
    context: str


class StepState(UnitState, total=False):
    """One step: its worker's unit (messages, loop) plus what review needs."""

    step: TeamStep
    worker: str
    reviewer: str
    context: str  # the step's context (goal and dependency results), reused by retries
    progress: dict[str, Any]  # paicli.nodes.team.attempts.Attempts as a dict (the key stays: saved runs resume)
    next: str
