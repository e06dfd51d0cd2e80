"""Which steps run next and on which worker (reference s.5, Execution).

Two workers, so at most two steps at once. A wave is the ready steps (pending, every dependency
completed) in plan order, at most two of them (``paicli.nodes.dag.next_wave`` over ``TEAM`` in
``paicli.nodes.team.run``); the scheduler asks again when the wave is done, so a third ready step
starts in the next wave. Workers are taken round-robin over the whole run
(``workers[cursor++ % 2]``), which also gives the two steps of a wave different workers.
"""

from __future__ import annotations

from typing import Any

from paicli.nodes.team.plan import TeamStep

WORKERS = ("worker-1", "worker-2")  # reference s.5: the orchestrator's two executors
MAX_WORKERS = len(WORKERS)
MAX_RETRIES = 2  # reference s.5 MAX_RETRIES_PER_STEP: a worker runs at most 3 times per step

PENDING, COMPLETED, FAILED = "pending", "completed", "failed"


def status(records: dict[str, Any], step_id: str) -> str:
    return (records.get(step_id) or {}).get("status", PENDING)


def assign(wave: list[TeamStep], cursor: int) -> tuple[list[tuple[TeamStep, str]], int]:
    """The wave's steps with their workers, and the advanced cursor."""
    return [(step, WORKERS[(cursor + i) % MAX_WORKERS]) for i, step in enumerate(wave)], cursor + len(wave)


def reviewer_name(step_id: str, parallel: bool) -> str:
    """reference s.5: a step of a parallel wave gets its own reviewer, ``reviewer-<step>``."""
    return f"reviewer-{step_id}" if parallel else "reviewer"


def left_pending(steps: list[TeamStep], records: dict[str, Any]) -> list[TeamStep]:
    return [s for s in steps if status(records, s["id"]) == PENDING]


def all_completed(steps: list[TeamStep], records: dict[str, Any]) -> bool:
    return all(status(records, s["id"]) == COMPLETED for s in steps)
