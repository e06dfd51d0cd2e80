"""What a run in any mode comes to (issue 36 item 4): one :class:`Usage` every model call adds
into, and one :class:`RunResult` that a ReAct turn (``paicli.run.driver.run_turn``) and a Plan or
Team run (``paicli.run.mode_run.ModeRun``) both return. The status bar, the closing token line
(reference u.3) and ``/memory``'s token statistics read these and nothing else, so no front end
asks which mode a result came from. Only the standard library: ``paicli.ui`` reads it too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

COMPLETED, PARTIAL, FAILED, CANCELLED = "completed", "partial", "failed", "cancelled"


@dataclass(frozen=True)
class Usage:
    """Tokens and model calls: one call's (:meth:`of_call`), a run's, or a session's. ``a + b``
    is both together."""

    input: int = 0
    output: int = 0
    cached: int = 0  # input tokens the provider served from its prefix cache (part of ``input``)
    calls: int = 0

    @classmethod
    def of_call(cls, metadata: dict[str, Any] | None) -> Usage:
        """One model call, from its message's ``usage_metadata`` (langchain's; None: not reported)."""
        metadata = metadata or {}
        cached = (metadata.get("input_token_details") or {}).get("cache_read") or 0
        return cls(metadata.get("input_tokens") or 0, metadata.get("output_tokens") or 0, cached, 1)

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input + other.input, self.output + other.output, self.cached + other.cached,
                     self.calls + other.calls)

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass
class RunResult:
    """A ReAct turn's or a Plan/Team run's end. ``answer``: the turn's answer, or the run's summary
    (for a failed run, its text); ``detail``: why it failed (a ReAct turn's error, a run's reason
    with a preview of what the model sent); ``usage``: every model call of it (a run's planner,
    units and reviewers included)."""

    answer: str = ""
    status: str = ""  # completed | partial | failed | cancelled
    seconds: float = 0.0
    detail: str = ""
    usage: Usage = field(default_factory=Usage)

    @property
    def completed(self) -> bool:
        return self.status == COMPLETED

    @property
    def failed(self) -> bool:
        return self.status == FAILED
