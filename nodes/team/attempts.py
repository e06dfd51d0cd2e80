"""One step's attempts and reviews (reference s.5 runStep items 3-8), as a pure state machine.

The step graph calls ``after_worker`` when the worker's loop ended and ``after_review`` when the
reviewer answered; each returns the new attempts record, the lines to show, and what comes next:
``REVIEW`` (ask the reviewer), ``RETRY`` (the worker again, history kept, with the feedback) or
``DONE``. A step fails only when its worker does on the first run; review never fails it, and
after at most ``MAX_RETRIES`` retries it keeps the last result it accepted.

Two choices where the reference is odd, both so that nothing is lost or misreported:
- a blank retry keeps the last accepted result (the reference stores ``执行结果为空`` as the result);
- a reviewer that fails during a retry keeps the result with the ``审查阶段 LLM 调用失败`` line
  (the reference counts it as approved and prints ``重试后审查通过``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from paicli.nodes.team import texts
from paicli.nodes.team.schedule import COMPLETED, FAILED, MAX_RETRIES
from paicli.nodes.team.verdict import Verdict

RETRY_FAILED = "重试时 LLM 调用失败：{error}"  # reference s.5 runStep item 7.3
Next = Literal["review", "retry", "done"]
REVIEW: Next = "review"
RETRY: Next = "retry"
DONE: Next = "done"


@dataclass(frozen=True)
class Attempts:
    """A step's attempts so far: its worker's runs and the reviewer's answers."""

    step_id: str
    retries: int = 0  # worker re-runs after a rejection (at most MAX_RETRIES)
    accepted: str = ""  # the last result accepted from the worker
    feedback: str = ""  # why the last result was rejected: the retry's input
    status: str = ""  # "" while running, then COMPLETED or FAILED
    failure: str = ""  # why the step failed


def after_worker(p: Attempts, ok: bool, text: str) -> tuple[Attempts, list[str], Next]:
    """The worker's loop ended: ``ok`` False means its model call failed (``text`` says how)."""
    first = p.retries == 0
    if not ok:
        if first:
            return replace(p, status=FAILED, failure=text), [texts.worker_failed(p.step_id, text)], DONE
        return _again(replace(p, feedback=RETRY_FAILED.format(error=text)))
    if not text.strip():
        if first:
            return (replace(p, status=FAILED, failure=texts.EMPTY_RESULT),
                    [texts.worker_empty(p.step_id)], DONE)
        return _again(replace(p, feedback=texts.EMPTY_RESULT))
    return replace(p, accepted=text), [], REVIEW


def after_review(p: Attempts, verdict: Verdict | None) -> tuple[Attempts, list[str], Next]:
    """The reviewer answered (``verdict``) or its call failed (None)."""
    if verdict is None:
        return replace(p, status=COMPLETED), [texts.reviewer_failed(p.step_id)], DONE
    if verdict.approved:
        return replace(p, status=COMPLETED), [texts.approved(p.step_id, retried=p.retries > 0)], DONE
    return _again(replace(p, feedback=verdict.feedback))


def _again(p: Attempts) -> tuple[Attempts, list[str], Next]:
    """Retry with the feedback, or keep the accepted result once the retries are used up."""
    if p.retries >= MAX_RETRIES:
        return replace(p, status=COMPLETED), [texts.retries_exhausted(p.step_id)], DONE
    return replace(p, retries=p.retries + 1), [texts.rejected(p.step_id, p.feedback)], RETRY
