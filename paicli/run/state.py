"""What a session is while paicli runs, kept in one object the ``App`` and its ``Session`` share
(issue 36): the App holds no copy of it and need not ask whether the session exists yet, so
``/hitl``, ``/mode``, the status bar and the token line read the same values before the first turn
as after it. Light on purpose: the App builds it before LangGraph is imported."""

from __future__ import annotations

from dataclasses import dataclass, field

from paicli.nodes.core.background import Background
from paicli.run.result import Usage
from paicli.run.session_modes import DEFAULT_SESSION_MODE


@dataclass
class SessionState:
    session_id: str
    approval: str = "auto"  # RunContext.approval: auto | ask | yes (paicli.run.session_modes)
    mode: str = DEFAULT_SESSION_MODE  # the session mode Shift+Tab cycles: auto | plan | ask
    usage: Usage = Usage()  # the session's model calls so far, in every mode (``/memory``, reference u.2)
    external_sources: tuple[str, ...] = ()  # reference (o.1), as of the last finished step
    background: Background = field(default_factory=Background)  # fact extraction (Q7): the graph's Deps.background
