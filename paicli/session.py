"""A session: settings, the compiled graph, one ledger thread, and the turn runner the REPL
and ``-p`` share.

The checkpointer is the session ledger (``$PAICLI_HOME/history/raw/<id>.jsonl``), so a
session is a LangGraph thread: ``--session ID`` and ``/resume`` just continue it. Steps are
saved before the next one starts (``durability="sync"``), so a killed process loses at most
the step that was running. One process at a time runs a turn on a session: a second one waits for
the turn lock (``memory.ledger.owner``) up to ``PAICLI_SESSION_WAIT`` seconds, saying whose turn
it waits for, then gives up naming that process; ``/clear`` and ``/compact`` take it too. Heavy imports (LangGraph, the model client) happen here, so the
CLI can show its prompt before they finish.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from graphs.react import build_react
from memory.ledger.saver import JsonlLedgerSaver
from memory.context.profile import prompt_cache_mode
from memory.context.rounds import SKILL_INJECTION, internal_kind
from memory.context.turn_memory import memory_context_messages
from memory.longterm.manager import LongTermMemory
from memory.longterm.enrichment import Enricher, model_proposer
from memory.longterm.store_entries import store_of
from nodes.support.background import Background
from nodes.call_model import skill_index
from nodes.compact import state_update
from nodes.support.state import Deps, RunContext
from paicli.answers import ask_audited
from paicli.context_view import ContextUsage
from paicli.driver import TurnWatcher, drive
from paicli.models import make_chat_model, make_review_model
from paicli.settings import Settings
from prompts import PromptSources, load_resource
from tools.policy.audit import AuditLog
from tools.policy.auto_review import REVIEW_TIMEOUT, AutoReviewer
from tools.base import WebConfig
from tools.sandbox.command import CommandSandbox
from tools.registry import BUILTIN_TOOLS
from tools.skills.library import SkillLibrary
from tools.skills.load import load_skill_spec
from tools.skills.reference import save_skill_reference_spec
from tools.snapshots.revert import revert_turn_spec
from tools.snapshots.store import TurnSnapshots, snapshot_home

RECURSION_LIMIT = 10_000  # reference s.2.9: no iteration cap; this only stops a runaway graph


def search_term_enricher(settings: Settings, deps: Deps) -> Enricher:
    """Issue 16: the light model proposes search terms for memories written from now on."""
    prompt = load_resource("memory/search_terms.md", PromptSources.for_project(settings.home, None))
    return Enricher(model_proposer(deps.light_model or deps.model, prompt.strip()))


def history_dir(settings: Settings):
    return settings.home / "history" / "raw"


def make_reviewer(settings: Settings) -> AutoReviewer:
    """The auto reviewer (reference v.2). Its prompts come from paicli and $PAICLI_HOME only: a
    repository's .paicli/prompts must not rewrite the judge of its own commands."""
    sources = PromptSources.for_project(settings.home, None)
    return AutoReviewer(None, load_resource("approvals/reviewer-system.md", sources),
                        load_resource("approvals/reviewer-user.md", sources),
                        make_model=lambda: make_review_model(settings, REVIEW_TIMEOUT))  # built at the first review


def make_deps(settings: Settings, *, auto_extract: bool, skills: SkillLibrary | None = None,
              review: bool = False) -> Deps:
    """The live objects a graph needs, from the user's settings (the CLI's and Studio's).
    ``skills``: the library the CLI's /skill commands share; a new one otherwise. ``review``: the
    CLI's auto reviewer (reference v.2); without it (Studio) commands at the default level ask
    the person, who is at the UI anyway."""
    web = settings.web
    skills = skills or SkillLibrary(settings.home, settings.skill_budget)
    snapshots = TurnSnapshots(snapshot_home(settings.home), settings.snapshots)
    return Deps(
        model=make_chat_model(settings),
        tools={**BUILTIN_TOOLS, "load_skill": load_skill_spec(skills),
               "save_skill_reference": save_skill_reference_spec(skills),
               "revert_turn": revert_turn_spec(snapshots)},
        skills=skills,
        light_model=make_chat_model(settings, settings.light_model) if settings.light_model != settings.model else None,
        prompt_home=settings.home,
        compaction=settings.compaction,
        budget=settings.budget,
        external_guard=settings.memory.external_guard,
        auto_extract=auto_extract,
        background=Background(),
        audit=AuditLog(web.audit_dir or settings.home / "audit"),  # as App.audit_dir
        web=WebConfig(searxng_url=web.searxng_url, allow_hosts=web.allow_hosts),
        hidden_env=settings.secret_env,
        snapshots=snapshots,
        sandbox=CommandSandbox(settings.sandbox),
        reviewer=make_reviewer(settings) if review else None,
    )


def attach_mcp(deps: Deps, servers: Any) -> None:
    """The MCP servers' tools join ``deps.tools`` whenever a server is ready or gone. The table
    is replaced, never changed in place: the servers' thread calls this while a node may be
    reading the old one."""
    base = dict(deps.tools)

    def swap(specs: dict[str, Any]) -> None:
        deps.tools = {**base, **specs}

    servers.on_change = swap
    swap(servers.specs())


class TurnUI(Protocol):
    def token(self, text: str) -> None: ...
    def notice(self, text: str) -> None: ...
    def model_message(self, message: AIMessage) -> None: ...
    def tool_results(self, messages: list[ToolMessage]) -> None: ...
    async def approve(self, request: dict[str, Any]) -> Any: ...


@dataclass
class TurnResult:
    answer: str = ""
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # input tokens the provider served from its prefix cache
    model_calls: int = 0
    seconds: float = 0.0
    tool_calls: int = 0


@dataclass
class TokenStats:
    """The session's model calls so far, for ``/memory`` (reference u.2)."""

    calls: int = 0
    input: int = 0
    output: int = 0
    cached: int = 0


@dataclass
class Session:
    """The running conversation: its graph, ledger, session id, token counts and the external
    content it has read. Built from the ``App``'s settings and wiring; ``/model`` changes its
    settings here (``App.settings`` reads them from here once the session exists)."""

    settings: Settings
    approval: str = "auto"
    session_id: str = "default"
    deps: Deps | None = None
    checkpointer: JsonlLedgerSaver | None = None  # or paicli.database.SessionSaver (PAICLI_DATABASE_URL)
    memory: LongTermMemory | None = None  # the App's, shared with /save and /memory
    skills: SkillLibrary | None = None  # the App's, shared with /skill
    stats: TokenStats = field(default_factory=TokenStats)
    external_sources: tuple[str, ...] = ()  # reference (o.1), as of the last finished step
    mcp: Any = None  # tools.mcp.servers.McpServers: its tools join the table as servers get ready
    project_key: str = ""  # with a database, the origin remote's key (RunContext.project_key); "": the path

    def __post_init__(self) -> None:
        if self.deps is None:
            self.deps = make_deps(self.settings, auto_extract=self.settings.memory.auto_extract, skills=self.skills,
                                  review=True)
        if self.mcp is not None:
            attach_mcp(self.deps, self.mcp)
        self.checkpointer = self.checkpointer or JsonlLedgerSaver(history_dir(self.settings))
        self.store = store_of(self.memory) if self.memory is not None else None
        if self.memory is not None and self.settings.memory.enrich and self.memory.enricher is None:
            self.memory.enricher = search_term_enricher(self.settings, self.deps)
        builder, self.compaction = build_react(self.deps)
        self.graph = builder.compile(checkpointer=self.checkpointer, store=self.store, name="react")
        self._mode_runs: dict[str, Any] = {}

    async def values(self) -> dict[str, Any]:
        return dict((await self.graph.aget_state(self.config)).values)

    async def messages(self) -> list[Any]:
        return list((await self.values()).get("messages") or [])

    def sessions(self) -> list[dict[str, Any]]:
        return self.checkpointer.sessions()

    def resume(self, session_id: str) -> None:
        """Continue another thread of the same ledger (reference h.5; Q2/Q10, docs/behavior.md#decisions)."""
        self.session_id = session_id
        self.external_sources = ()  # refreshed from the thread's state by `load_external`

    async def load_external(self) -> tuple[str, ...]:
        self.external_sources = tuple((await self.values()).get("external_sources") or ())
        return self.external_sources

    @asynccontextmanager
    async def turn_lock(self, notice: Callable[[str], None] | None = None) -> AsyncIterator[None]:
        """Hold the session's turn lock: no other process writes a turn meanwhile (issue 10)."""
        lock = self.checkpointer.turn_lock(self.session_id)
        await lock.acquire(self.settings.session_wait, notice or _to_stderr)
        try:
            yield
        finally:
            lock.release()

    async def compact_now(self) -> Any:
        """``/compact``: a full summary keeping one user round; None when nothing to compact."""
        async with self.turn_lock():
            return await self._compact()

    async def _compact(self) -> Any:
        values = await self.values()
        result = await self.compaction.now(list(values.get("messages") or []), self.context,
                                           values.get("project_context", ""))
        if result is not None:
            await self.graph.aupdate_state(self.config, state_update(result), as_node="call_model")
        return result

    async def context_usage(self) -> ContextUsage:
        """``/context``: the next request's estimate by part (reference u.2), and its share that
        repeats the last request (issue 13)."""
        values, ctx, c = await self.values(), self.context, self.compaction
        messages, extra = list(values.get("messages") or []), values.get("project_context", "")
        profile, options = c.profile(ctx), self.deps.compaction
        index, bodies = skill_index(self.deps, ctx), [m for m in messages if internal_kind(m) == SKILL_INJECTION]
        from paicli.request_prefix import stable_prefix  # /context only: a turn never imports it

        stable = await stable_prefix(self.graph, self.config, self.deps, ctx, messages)
        return ContextUsage(
            model=self.settings.model,
            provider=self.settings.provider,
            window=profile.window,
            system_tokens=c.estimator.system(c.system(ctx, extra)),
            memory_tokens=c.estimator.messages(memory_context_messages(messages)),
            schema_tokens=c.estimator.schema(c.caller.exposed_schemas()),
            conversation_tokens=c.estimator.messages(messages),
            conversation_messages=len(messages),
            summary_trigger=profile.compression_trigger_tokens,
            summary_percent=profile.compression_trigger_percent,
            clearing_trigger=profile.tool_result_clearing_trigger if options.clearing else None,
            clearing_keep=options.clearing_keep,
            session_memory=options.session_memory,
            prompt_cache=prompt_cache_mode(self.settings.provider),
            skill_index_tokens=c.estimator.system(index) if index else 0,
            skill_body_tokens=c.estimator.messages(bodies) if bodies else 0,
            skill_bodies=len(bodies),
            stable_share=None if stable is None else stable.share,
        )

    async def next_request_tokens(self) -> int:
        """The status bar's figure (reference u.4): the next request's estimate, i.e. the system
        prompt, the tools schema and the conversation as it stands."""
        values, ctx, c = await self.values(), self.context, self.compaction
        system = c.estimator.system(c.system(ctx, values.get("project_context", "")))
        return system + c.estimator.schema(c.caller.exposed_schemas()) + c.estimator.messages(list(values.get("messages") or []))

    async def clear(self) -> int:
        """``/clear`` (reference h.3): an empty view in the same session; earlier ledger lines and
        long-term memory stay. Returns how many messages left the view."""
        async with self.turn_lock():
            return await self._clear()

    async def _clear(self) -> int:
        discarded = len(await self.messages())
        self.checkpointer.append_event(
            self.session_id, "history_clear", source="slash_clear", metadata={"discardedViewMessages": discarded}
        )
        # reference (o.1): only /clear forgets the external content the session has read.
        update = {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)], "approved_all": [], "decisions": {},
                  "external_sources": []}
        self.external_sources = ()
        # as_node="call_model": with no assistant message left, the loop's router ends the run.
        await self.graph.aupdate_state(self.config, update, as_node="call_model")
        return discarded

    async def forget_approvals(self) -> None:
        """reference v.1: switching to the `default` level clears the "approve all" choices."""
        if not (await self.values()).get("approved_all"):
            return
        async with self.turn_lock():
            # as_node="extract_facts": the update reads as the end of a finished turn.
            await self.graph.aupdate_state(self.config, {"approved_all": []}, as_node="extract_facts")

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.session_id}, "recursion_limit": RECURSION_LIMIT}

    @property
    def context(self) -> RunContext:
        return RunContext(
            project_root=str(self.settings.project_root),
            session_id=self.session_id,
            approval=self.approval,
            context_window=self.settings.context_window,
            allow_revert=self.settings.snapshots.allow_revert,
            project_key=self.project_key,
        )

    def mode_context(self, mode: str, *, review: bool) -> RunContext:
        """A Plan or Team run's context: the session's, with its mode and the plan settings."""
        return replace(self.context, mode=mode, review=review, max_replans=self.settings.plan_max_replans)

    def mode_run(self, mode: str) -> Any:
        """The session's runner for ``mode`` (``paicli.mode_run``), compiled on first use."""
        if mode not in self._mode_runs:
            from paicli.mode_run import ModeRun
            from paicli.modes import MODE_SPECS

            self._mode_runs[mode] = ModeRun(self, MODE_SPECS[mode])
        return self._mode_runs[mode]

    async def unfinished_mode(self) -> str | None:
        """The mode of a run of this session that was cut short (Q11), if any."""
        from paicli.modes import RUN_MODES

        for mode in RUN_MODES:
            if await self.mode_run(mode).unfinished():
                return mode
        return None

    def switch_model(self, model: str) -> None:
        self.settings = self.settings.with_model(model)
        self.deps.model = make_chat_model(self.settings)
        if self.deps.reviewer is not None and not self.settings.review_model:  # it follows the session's model (v.2)
            self.deps.reviewer = make_reviewer(self.settings)

    @property
    def background(self) -> Background:
        return self.deps.background

    def remember(self) -> None:
        """This project's newest session is this one (``paicli --continue``; issue 26)."""
        from paicli.comeback import remember_session

        remember_session(self.settings.home, self.settings.project_root, self.session_id)

    async def run(self, mode: str, text: str | None, ui: Any, *, review: bool) -> Any:
        """A run in ``mode`` (``paicli.modes``): a ReAct turn (``TurnResult``) or a run apart
        (``paicli.mode_run.RunResult``; text None finishes the unfinished one)."""
        from paicli.modes import RUN_MODES

        if mode in RUN_MODES:
            return await self.mode_run(mode).run(text, ui, review=review)
        return await self.run_turn(text or "", ui)

    async def run_turn(self, text: str, ui: TurnUI) -> TurnResult:
        """One ReAct turn, through the driver every mode shares (``paicli.driver``)."""
        result, started = TurnResult(), time.monotonic()
        self.remember()
        if self.mcp is not None:  # servers still starting get the startup wait (reference x)
            await self.mcp.wait_started()
        pending: Any = {"messages": await self._user_messages(text, ui)}

        async def answer(interrupts: list[Any]) -> dict[str, Any]:
            return {i.id: await ask_audited(ui, i.value, self.deps.audit) for i in interrupts}

        await drive(self.graph, pending, self.config, self.context, TurnWatcher(self, ui, result), answer,
                    self.turn_lock(ui.notice))
        result.seconds = time.monotonic() - started
        return result

    async def _user_messages(self, text: str, ui: TurnUI) -> list[Any]:
        """The user's message as typed, then the MCP resources it mentions (``tools.mcp.mentions``)."""
        if self.mcp is None:  # no servers: a mention is just text, and no MCP module is imported
            return [HumanMessage(text)]
        from tools.mcp.mentions import expand, expansion_message

        expansion = await expand(text, self.mcp)
        for warning in expansion.warnings:
            ui.notice(warning)
        resources = expansion_message(expansion)
        return [HumanMessage(text), *([resources] if resources else [])]


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
