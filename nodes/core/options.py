"""The compaction and budget options, declared once: ``paicli.config.settings`` builds them from the
user's settings and ``Deps`` carries the same objects to the nodes (no field-by-field copy).

Kept apart from ``paicli.nodes.core.state`` so the settings loader can import them without
LangChain, which the CLI should not pay for before it needs a model.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CompactionOptions:
    """The compaction tiers' options (reference x); defaults are the reference's."""

    session_memory: bool = False  # PAICLI_SESSION_MEMORY_COMPACTION_ENABLED
    clearing: bool = True  # PAICLI_TOOL_RESULT_CLEARING_ENABLED
    clearing_keep: int = 3  # PAICLI_TOOL_RESULT_CLEARING_KEEP
    clearing_exclude: frozenset[str] = frozenset()  # PAICLI_TOOL_RESULT_CLEARING_EXCLUDE_TOOLS
    clearing_trigger: int = 0  # PAICLI_TOOL_RESULT_CLEARING_TRIGGER_TOKENS (0 = derived)
    offload: bool = True  # PAICLI_TOOL_OFFLOAD_ENABLED
    offload_threshold: int = 32_000  # PAICLI_TOOL_OFFLOAD_THRESHOLD_CHARS


@dataclass(frozen=True)
class BudgetOptions:
    """reference (s.3): per-turn budgets; None is unlimited (the newest defaults)."""

    token_budget: int | None = None  # PAICLI_REACT_TOKEN_BUDGET
    stagnation_window: int = 5  # PAICLI_REACT_STAGNATION_WINDOW (at least 2)
    hard_max_iterations: int | None = None  # PAICLI_REACT_HARD_MAX_ITERATIONS
    remind_after: int = 3  # the runaway guard's streak (at least 3)
