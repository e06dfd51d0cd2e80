"""A session: the conversation the REPL and ``-p`` share: the compiled graph, one ledger thread,
and what a person does with it besides asking (``/clear``, ``/compact``, ``/context``, ``/resume``,
``/model``), and which runner takes the next input. The graph's live objects come from
``paicli.run.wiring``; a turn runs through ``paicli.run.driver`` (ReAct) or ``paicli.run.mode_run`` (Plan, Team).

The checkpointer is the session ledger (``$PAICLI_HOME/history/raw/<id>.jsonl``), so a
session is a LangGraph thread: ``--session ID`` and ``/resume`` just continue it. Graph steps
are saved before the next one starts (``durability="sync"``), so a killed process loses at most
the graph step that was running. One process at a time runs a turn on a session: a second one waits for
the turn lock (``paicli.memory.ledger.owner``) up to ``PAICLI_SESSION_WAIT`` seconds, saying whose turn
it waits for, then gives up naming that process; ``/clear`` and ``/compact`` take it too. Heavy imports (LangGraph, the model client) happen here, so the
CLI can show its prompt before they finish.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from paicli.graphs.react import build_react
from paicli.memory.context.rounds import SKILL_INJECTION, internal_kind
from paicli.memory.context.turn_memory import memory_context_messages
from paicli.memory.ledger.saver import JsonlLedgerSaver
from paicli.memory.longterm.manager import LongTermMemory
from paicli.memory.longterm.store_entries import store_of
from paicli.nodes.compact import state_update
from paicli.nodes.core.background import Background
from paicli.nodes.core.state import Deps, RunContext
from paicli.nodes.model.call_model import skill_index
from paicli.ui.context_view import ContextUsage
from paicli.run.driver import run_turn
from paicli.run.models import make_chat_model
from paicli.run.result import RunResult, Usage
from paicli.run.state import SessionState
from paicli.config.settings import Settings
from paicli.run.wiring import attach_browser, attach_mcp, history_dir, make_deps, make_reviewer, search_term_enricher
from paicli.tools.skills.library import SkillLibrary

RECURSION_LIMIT = 10_000  # reference s.2.9: no iteration cap; this only stops a runaway graph


@dataclass
class Session:
    """The running conversation: its graph and ledger, over the session's ``SessionState`` (its id,
    approval level, token counts, the external content it has read), which it shares with the
    ``App``. Built from the App's settings (``paicli.run.wiring``); ``/model`` reaches it through
    ``App.switch_model``, which changes the App's settings the same way."""

    settings: Settings
    state: SessionState = field(default_factory=lambda: SessionState("default"))
    deps: Deps | None = None
    checkpointer: JsonlLedgerSaver | None = None  # or paicli.run.database.SessionSaver (PAICLI_DATABASE_URL)
    memory: LongTermMemory | None = None  # the App's, shared with /save and /memory
    skills: SkillLibrary | None = None  # the App's, shared with /skill
    mcp: Any = None  # paicli.tools.mcp.servers.McpServers: its tools join the table as servers get ready
    browser: Any = None  # paicli.tools.browser.session.BrowserSession (PAICLI_BROWSER, issue 40); None: off
    project_key: str = ""  # with a database, the origin remote's key (RunContext.project_key); "": the path

    def __post_init__(self) -> None:
        if self.deps is None:
            self.deps = make_deps(self.settings, auto_extract=self.settings.memory.auto_extract, skills=self.skills,
                                  review=True)
        self.deps.background = self.state.background  # the App reads its notices before the session exists
        if self.browser is not None:
            attach_browser(self.deps, self.browser)
        if self.mcp is not None:
            attach_mcp(self.deps, self.mcp)
            from paicli.tools.mcp.resource_index import ResourceIndex

            self.mcp_index = ResourceIndex()
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

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def approval(self) -> str:
        return self.state.approval

    @property
    def usage(self) -> Usage:
        return self.state.usage

    @usage.setter
    def usage(self, usage: Usage) -> None:
        self.state.usage = usage

    @property
    def external_sources(self) -> tuple[str, ...]:
        return self.state.external_sources

    @external_sources.setter
    def external_sources(self, sources: tuple[str, ...]) -> None:
        self.state.external_sources = sources

    def resume(self, session_id: str) -> None:
        """Continue another thread of the same ledger (reference h.5; Q2/Q10, docs/behavior.md#decisions)."""
        self.state.session_id = session_id
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
        from paicli.run.request_prefix import stable_prefix  # /context only: a turn never imports it

        stable = await stable_prefix(self.graph, self.config, self.deps, ctx, messages)
        from paicli.memory.context.images import count_images

        images = count_images(messages)
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
            prompt_cache=self.settings.prompt_cache,
            skill_index_tokens=c.estimator.system(index) if index else 0,
            skill_body_tokens=c.estimator.messages(bodies) if bodies else 0,
            skill_bodies=len(bodies),
            stable_share=None if stable is None else stable.share,
            mcp_index=bool(self.deps.mcp_index),
            images=images[0],
            image_tokens=images[1],
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
        state = await self.graph.aget_state(self.config)
        if state.created_at is None:  # a session nothing was written to: /clear leaves no empty ledger behind
            return 0
        discarded = len(state.values.get("messages") or [])
        await asyncio.to_thread(  # a file append, or a round trip to the database: off the event loop
            self.checkpointer.append_event, self.session_id, "history_clear", source="slash_clear",
            metadata={"discardedViewMessages": discarded})
        # reference (o.1): only /clear forgets the external content the session has read.
        update = {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)], "approved_all": [], "decisions": {},
                  "external_sources": [], "lsp": {}}  # issue 38: no diagnostics count as told any more
        self.external_sources = ()
        # as_node="call_model": with no assistant message left, the loop's router ends the run.
        await self.graph.aupdate_state(self.config, update, as_node="call_model")
        return discarded

    async def forget_approvals(self, keep: Callable[[str], bool] = lambda _key: False) -> None:
        """reference v.1: switching to the `default` level clears the "approve all" choices;
        switching the browser mode those of the browser server (``keep`` the others)."""
        approved = list((await self.values()).get("approved_all") or [])
        kept = [key for key in approved if keep(key)]
        if kept == approved:
            return
        async with self.turn_lock():
            # as_node="extract_facts": the update reads as the end of a finished turn.
            await self.graph.aupdate_state(self.config, {"approved_all": kept}, as_node="extract_facts")

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
            vision=self.settings.model_info.vision,
        )

    def mode_context(self, mode: str, *, review: bool) -> RunContext:
        """A Plan or Team run's context: the session's, with its mode and the plan settings."""
        return replace(self.context, mode=mode, review=review, max_replans=self.settings.plan_max_replans)

    def mode_run(self, mode: str) -> Any:
        """The session's runner for ``mode`` (``paicli.run.mode_run``), compiled on first use."""
        if mode not in self._mode_runs:
            from paicli.run.mode_run import ModeRun
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

    def switch_model(self, settings: Settings) -> None:
        """``/model`` (reference b, "Switching windows at runtime"): the App's new settings. The
        clients are rebuilt (the light model and the auto reviewer follow, v.2), the token counts
        start again (a new TokenBudget), every session-memory summary is dropped (pending ones
        cancelled), and the thresholds follow the new window from the next call on: they are read
        from ``RunContext.context_window`` every time, never cached."""
        self.settings = settings
        deps = self.deps
        deps.model = make_chat_model(settings)
        deps.light_model = make_chat_model(settings, settings.light_model) if settings.light_model != settings.model else None
        if deps.reviewer is not None:
            deps.reviewer = make_reviewer(settings)
        if self.memory is not None and settings.memory.enrich and self.memory.enricher is not None:
            self.memory.enricher = search_term_enricher(settings, deps)
        session_memory = self.compaction.compactor.session_memory
        if session_memory is not None:
            session_memory.reset_all()
        self.state.usage = Usage()  # counts start again for the new model

    @property
    def background(self) -> Background:
        return self.state.background

    def remember(self) -> None:
        """This project's newest session is this one (``paicli --continue``; issue 26)."""
        from paicli.run.comeback import remember_session

        remember_session(self.settings.home, self.settings.project_root, self.session_id)

    async def run(self, mode: str, text: str | None, ui: Any, *, review: bool) -> RunResult:
        """A run in ``mode`` (``paicli.modes``): a ReAct turn or a run apart (text None finishes
        the unfinished one); either way a ``paicli.run.result.RunResult``."""
        from paicli.modes import RUN_MODES

        if mode in RUN_MODES:
            return await self.mode_run(mode).run(text, ui, review=review)
        return await run_turn(self, text or "", ui)

def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
