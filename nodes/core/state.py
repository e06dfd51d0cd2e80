"""State, runtime context and live dependencies shared by every graph.

- ``AgentState``: what one execution unit (the ReAct conversation, a Plan task, a Team step)
  checkpoints. ``messages`` is exactly what the model sees, minus the system prompt, which
  ``call_model`` assembles per call so it never goes stale.
- ``ModeState``: what a Plan or Team run keeps besides its plan (``submitted``, ``outcome``, ``status``...).
- ``RunContext``: plain per-run settings, passed as LangGraph runtime context.
- ``Deps``: live objects handed to graph builders; tests substitute them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Awaitable, Callable, Optional

from langchain_core.language_models import BaseChatModel
from langgraph.config import get_config
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from paicli.nodes.core.options import BudgetOptions, CompactionOptions  # noqa: F401 (re-exported)
from paicli.tools.base import ToolSpec, WebOptions
from paicli.tools.registry import BUILTIN_TOOLS
from paicli.tools.sandbox.command import CommandSandbox

if TYPE_CHECKING:
    from paicli.memory.longterm.manager import LongTermMemory
    from paicli.tools.browser.session import BrowserSession
    from paicli.nodes.core.background import Background
    from paicli.tools.policy.audit import AuditLog
    from paicli.tools.lsp.manager import LanguageServers
    from paicli.tools.policy.auto_review import AutoReviewer
    from paicli.tools.skills.library import SkillLibrary
    from paicli.tools.snapshots.store import TurnSnapshots


class AgentState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    # The decision on each tool call of the last assistant message, by call id, as
    # ``paicli.tools.policy.decision.to_record`` JSON: made by call_model, answered by gate_tools, read by
    # execute_tools (paicli.nodes.core.policy).
    decisions: dict[str, dict[str, Any]]
    # Tools the user chose "approve all" for in this session (reference v.1).
    approved_all: list[str]
    # The auto reviewer's consecutive denials in this turn (reference v.1); prepare_turn resets it.
    auto_denials: int
    # Set by call_model when the provider failed for good: the CLI shows it, the turn ends.
    error: Optional[str]
    # The last compaction: {"source", "metadata", "mode"}; the ledger writes it as an event.
    compaction: Optional[dict[str, Any]]
    # The `## Project Context` body for this turn: PAI.md files, then relevant long-term memory
    # (reference q.2 item 9). Set once per turn, so every request of a turn shares its prompt.
    project_context: str
    # Sources of external content this session has read (reference o.1), oldest first, at most 8.
    # Only /clear resets them.
    external_sources: list[str]
    # URLs a Plan task's dependencies grounded with web_search (reference s.4): the turn policy
    # trusts them as its own discoveries. Never set in the ReAct conversation.
    trusted_urls: list[str]
    # Language-server diagnostics (nodes/diagnostics.py, issue 38): per project-relative file, the
    # problem keys the model was last told of ("seen"), and the files whose server was late ("late").
    lsp: dict[str, Any]


@dataclass(frozen=True)
class RunContext:
    """Per-run settings (LangGraph runtime context). Defaults suit Studio runs."""

    project_root: str = field(default_factory=os.getcwd)
    # Names the offload folder, budgets and audit entries; "" means the run's thread id, so
    # every Studio thread is a session of its own.
    session_id: str = ""
    approval: str = "auto"  # auto | ask | yes (paicli.tools.policy.approval)
    context_window: int = 128_000
    mode: str = "react"
    command_timeout: float = 60.0
    # Plan mode (reference s.4): review the plan before it runs (an interrupt; `-p` runs without),
    # and how many times a failing plan may be re-planned (PAICLI_PLAN_MAX_REPLANS).
    review: bool = True
    max_replans: int = 2
    # PAICLI_ALLOW_REVERT=yes: under --yes, revert_turn runs without a question (paicli.tools.policy.approval).
    allow_revert: bool = False
    # The key that scopes project memory (reference j.1); "": the normalised project_root. With a
    # database, paicli sets the origin remote's URL, so every clone shares it (issue 28).
    project_key: str = ""
    # The model takes image parts (issue 39; the catalog's "vision"): read_file returns images to it.
    vision: bool = False


class ModeState(TypedDict, total=False):
    """What a mode apart from ReAct (Plan, Team) keeps beside its own plan, and what the CLI's
    runner reads (``paicli.run.mode_run``): its state extends this."""

    # The user's goal, then the run's final text: what Studio shows and what fact extraction reads.
    messages: Annotated[list, add_messages]
    submitted: str  # the user's text: the goal, and the authority for every unit's turn policy
    outcome: str  # the final text
    status: str  # "" running | completed | partial | failed | cancelled
    approved_all: list[str]  # "approve all" answers, shared by every unit of the run
    external_sources: list[str]  # reference (o.1): what any unit read
    error: Optional[str]  # why a failed run failed, with a preview of what the model sent


class MessagesInput(TypedDict):
    """What a run takes as input (Studio's input form): the user's message."""

    messages: Annotated[list, add_messages]


def memory_project_key(ctx: RunContext) -> str:
    """The project key of memory reads and writes: the context's, else the project root's. Off
    the event loop: resolving the path may readlink, which `langgraph dev` refuses there."""
    from paicli.memory.longterm.entry import normalize_project_key

    return ctx.project_key or normalize_project_key(ctx.project_root)


def run_context(runtime: Runtime | None) -> RunContext:
    context = getattr(runtime, "context", None)
    if isinstance(context, dict):  # Studio and the SDK send context as JSON
        known = {k: v for k, v in context.items() if k in RunContext.__dataclass_fields__}
        context = RunContext(**known)
    elif not isinstance(context, RunContext):
        context = RunContext()
    return context if context.session_id else replace(context, session_id=thread_id() or "default")


def thread_id() -> str | None:
    """The running graph's thread id (``configurable.thread_id``), None outside a run."""
    try:
        thread = (get_config().get("configurable") or {}).get("thread_id")
    except RuntimeError:
        return None
    return str(thread) if thread else None  # the server may hand over a UUID object


@dataclass
class Deps:
    """Live objects for the graph builders. Mutable on purpose: ``/model`` swaps ``model``."""

    model: BaseChatModel
    tools: dict[str, ToolSpec] = field(default_factory=lambda: dict(BUILTIN_TOOLS))
    clock: Callable[[], datetime] = field(default_factory=lambda: (lambda: datetime.now().astimezone()))
    prompt_home: Path | None = None  # $PAICLI_HOME, for prompt overrides and the user PAI.md; None: neither
    compaction: CompactionOptions = field(default_factory=CompactionOptions)
    budget: BudgetOptions = field(default_factory=BudgetOptions)
    # paicli.memory.longterm.manager.LongTermMemory, used when the graph has no store (with one, the
    # store's memory is used, with these options); None: no long-term memory.
    memory: LongTermMemory | None = None
    external_guard: bool = True  # PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT (reference o.1)
    auto_extract: bool = False  # PAICLI_MEMORY_AUTO_EXTRACT_ENABLED; the CLI turns it on (n.1)
    light_model: BaseChatModel | None = None  # PAICLI_LIGHT_MODEL for fact extraction; None: `model`
    background: Background | None = None  # fact extraction runs there (Q7); None: in the turn
    audit: AuditLog | None = None  # risky calls' log (reference v.7); None: no audit
    web: WebOptions = field(default_factory=WebOptions)  # web_search / web_fetch settings
    hidden_env: frozenset[str] = frozenset()  # Settings.secret_env: kept from commands' environment
    # issue 34: the API key's and the database password's values, masked in every tool result.
    masked: tuple[str, ...] = ()
    # How execute_command runs (issue 24): the session's sandbox, from Settings.sandbox; the
    # default is the production one (auto), so every graph, Studio's included, sandboxes commands.
    sandbox: CommandSandbox = field(default_factory=CommandSandbox)
    # Skills (reference s.6): their index goes into the system prompt; `load_skill` in `tools` reads
    # them. None: no skills (the Team planner and reviewer get none: they have no tools).
    skills: SkillLibrary | None = None
    # The auto reviewer of the `default` approval level (reference v.2). None: its calls ask the person.
    reviewer: AutoReviewer | None = None
    # Turn snapshots (reference s.1 item 6): taken before every run, restored by revert_turn.
    # None: no snapshots (the graphs then have no snapshot node).
    snapshots: TurnSnapshots | None = None
    # The browser (issue 40, PAICLI_BROWSER): its live pages for the turn policy, and the lease
    # parallel units take turns with. None: no browser.
    browser: BrowserSession | None = None
    # The MCP resource index (reference q.2 item 9, tools/mcp/resource_index.py), refreshed by the
    # CLI before a turn; load_context puts it last in ## Project Context when the window is >= 32K.
    mcp_index: str = ""
    # Language servers (issue 38): diagnostics after edits (nodes/diagnostics.py), /lsp, exact
    # navigation. None: no servers (the graphs then have no diagnostics node).
    lsp: LanguageServers | None = None
    # Awaited before each model call, by session id: waits for MCP servers still starting (as the
    # CLI does before a turn; Studio runs have no other wait), then the lines the run is told, the
    # servers that failed or stopped answering since that session was last told (issue 41).
    # None: nothing to wait for or tell.
    notices: Callable[[str], Awaitable[list[str]]] | None = None


def long_term_memory(runtime: Runtime | None, deps: Deps) -> LongTermMemory | None:
    """The graph store's memory, else ``deps.memory`` (issue 28).

    Any LangGraph store holds it: paicli's file store carries its own, and any other store (an
    ``InMemoryStore``, a ``PostgresStore``, LangGraph Server's) is read and written through the
    ``BaseStore`` API by ``paicli.memory.longterm.store_entries``, with paicli's rules applied in between.
    """
    store = getattr(runtime, "store", None)
    if store is None:
        return deps.memory
    from paicli.memory.longterm.config import MemoryOptions
    from paicli.memory.longterm.store_entries import memory_of

    return memory_of(store, deps.memory.options if deps.memory is not None else MemoryOptions())
