"""The application object both front ends share: settings now, the session when first needed.

Building the session imports LangGraph and the model client (about a second), so the REPL
starts that import in a background thread and shows its prompt right away.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import re
import sys
import threading
import uuid
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Mapping

from paicli.modes import DEFAULT_MODE
from paicli.config.settings import ConfigError, Settings, load_settings
from paicli.run.state import SessionState

if TYPE_CHECKING:  # both import LangGraph or jieba: the REPL imports them in the background
    from paicli.memory.longterm.manager import LongTermMemory
    from paicli.run.database import Database
    from paicli.run.session import Session
    from paicli.tools.browser.session import BrowserSession
    from paicli.tools.mcp.servers import McpServers
    from paicli.tools.skills.library import SkillLibrary

# reference h.1: ids become file names, so no separators, no "..", no leading "-" or "." and
# no more than a file name can hold with its suffixes (generated ids are 58 characters).
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_SESSION_ID = 128
BACKGROUND_EXIT_WAIT = 15.0  # seconds a pending fact extraction may delay exit
SEARCH_TERMS_EXIT_WAIT = 5.0  # seconds pending memory search terms (issue 16) may delay exit


def new_session_id() -> str:
    """A UUID, where reference h.1 has ``session-<epoch millis>-<uuid>``: the LangGraph server
    accepts only UUID thread ids, and a session is a thread Studio opens (``paicli studio``).
    Older ``session-…`` ids still work with ``--session`` and ``/resume``."""
    return str(uuid.uuid4())


def check_session_id(session_id: str) -> None:
    if len(session_id) > MAX_SESSION_ID:
        raise ConfigError(f"--session 的 id 有 {len(session_id)} 个字符，上限是 {MAX_SESSION_ID}")
    if not SESSION_ID.fullmatch(session_id) or ".." in session_id:
        raise ConfigError(f"--session '{session_id}' 不是有效的 id：只能用字母、数字、'.'、'_' 和 '-'，"
                          "并以字母或数字开头")


def import_session() -> None:
    """Import ``paicli.run.session`` (LangGraph, the model client, the graphs: about 200k objects that
    live as long as the process) without the cyclic collector: it would walk them over and over
    while they are built, then again on every full collection of the run and at exit. Once
    imported they are frozen (``gc.freeze``), out of its sight (issue 30: about a tenth of a -p
    run's CPU time). Only the first import does this: a process that already has the module
    (the test suite) keeps its collector as it is."""
    if "paicli.run.session" in sys.modules:
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module("paicli.run.session")
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def _warm_jieba(cache_dir) -> None:
    """jieba's dictionary takes about half a second to load; the first memory search needs it."""
    importlib.import_module("paicli.memory.longterm.retriever").warm(cache_dir)


def skip_sandbox(settings: Settings, args: Any) -> Settings:
    """``--dangerously-skip-sandbox``: this run's commands run outside the sandbox (issue 24)."""
    if not getattr(args, "dangerously_skip_sandbox", False):
        return settings
    return replace(settings, sandbox=replace(settings.sandbox, skipped=True))


def sandbox_lines(settings: Settings, sandbox: Any = None) -> list[str]:
    """The sandbox state for the banner and /context (mechanism, writable roots, network);
    ``sandbox``: a ``CommandSandbox`` (a test's finds nothing), else the settings' own."""
    from paicli.tools.sandbox.command import CommandSandbox

    return (sandbox or CommandSandbox(settings.sandbox)).state(settings.project_root).lines()


def sandbox_warning(settings: Settings) -> str | None:
    """The one ⚠️ line a run prints when its commands are not sandboxed, except when the user
    switched the sandbox off in their settings (then it is today's behaviour, said in /context)."""
    if settings.sandbox.mode == "off" and not settings.sandbox.skipped:
        return None
    from paicli.tools.sandbox.command import CommandSandbox

    sandbox = CommandSandbox(settings.sandbox)
    if sandbox.why_outside() is None:  # sandboxed: nothing to say, so no layout and no version probe
        return None
    return sandbox.state(settings.project_root).lines()[0]


class App:
    """Settings and wiring: what the user configured, the shared long-term memory, the session's
    ``SessionState`` (its id, approval level, mode, counts: one object, which the ``Session`` shares
    once it is built), and the ``Session`` (the running conversation) once it is needed.
    ``settings`` is the one way to the settings: ``/model`` changes them here and hands the session
    the same model."""

    def __init__(self, args: Any, settings: Settings | None = None):
        self.args = args
        self._settings = skip_sandbox(settings or load_settings(args.project), args)
        self._settings.require_key()  # fail before the first prompt, not after the first question
        self._session: Session | None = None
        self._memory: LongTermMemory | None = None
        self._skills: SkillLibrary | None = None
        self._mcp: McpServers | None = None
        self._browser: BrowserSession | None = None
        if args.session is not None:
            check_session_id(args.session)
        self.next_mode: str | None = None  # `/plan` without a task: the next input is planned (s.1 item 8)
        self._database: Database | None = None  # PAICLI_DATABASE_URL (issue 28): a bad one stops here
        self._project_key: str | None = None
        if self._settings.database_url:
            from paicli.run.database import open_database, project_key

            self._project_key = project_key(self._settings.project_root)
            self._database = open_database(self._settings.database_url, self._project_key)
        # Session mode and approval level (paicli.run.session_modes): `--mode plan` starts in plan mode,
        # PAICLI_HITL=on in ask mode; `--yes` approves everything until a mode or /hitl changes it.
        mode = getattr(args, "mode", "react")
        # `--mode <a run apart>` (paicli.modes) makes every input such a run; `--mode plan` does so
        # through the `plan` session mode, which Shift+Tab can leave.
        self.flag_mode = mode if mode != "plan" and mode != DEFAULT_MODE else None
        self.state = SessionState(
            session_id=args.session or new_session_id(),
            approval="yes" if getattr(args, "yes", False) else self._settings.approval,
            mode="plan" if mode == "plan" else "ask" if self._settings.approval == "ask" else "auto")
        self.on_history_clear: Any = None  # the REPL forgets its in-memory input history (/history clear)
        self._warm = threading.Thread(target=import_session, daemon=True)

    def warm_up(self) -> None:
        """Import the heavy modules in the background while the user types (or while the
        model client is built), and load jieba's dictionary when there are memories to search."""
        self._warm.start()
        if (self.settings.memory_dir / "long_term_memory.json").exists():
            threading.Thread(target=_warm_jieba, args=(self.settings.cache_dir,), daemon=True).start()

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def session(self) -> Session:
        if self._session is None:
            if self._warm.is_alive():
                self._warm.join()
            from paicli.run.session import Session

            self._session = Session(self.settings, state=self.state, memory=self.memory, skills=self.skills,
                                    mcp=self.mcp if self.settings.mcp.servers else None,  # none: no MCP import
                                    browser=self.browser,
                                    checkpointer=self._database.saver if self._database else None,
                                    project_key=self._project_key or "")
        return self._session

    def mode_for_input(self) -> str:
        """The mode of the next plain input (s.1 item 4): a pending ``/plan`` or ``/team``, else
        ``--mode team`` (or another run apart), else plan in the ``plan`` session mode, else ReAct."""
        mode, self.next_mode = self.next_mode, None
        return mode or self.flag_mode or ("plan" if self.session_mode == "plan" else DEFAULT_MODE)

    @property
    def approval(self) -> str:
        """The approval level (``RunContext.approval``): auto | ask | yes."""
        return self.state.approval

    @property
    def session_mode(self) -> str:
        """The session mode (``paicli.run.session_modes``): auto | plan | ask."""
        return self.state.mode

    @session_mode.setter
    def session_mode(self, mode: str) -> None:
        self.state.mode = mode

    async def set_approval(self, level: str) -> None:
        """``/hitl``: takes effect from the next turn; ``auto`` forgets every "approve all" (v.1),
        which the session's ledger keeps (so a resumed session's too, before its first turn)."""
        self.state.approval = level
        if level == "auto":
            await self.session.forget_approvals()

    async def set_mode(self, mode: str) -> None:
        """``/mode`` and Shift+Tab (reference s.1 item 9): the mode, and the level it implies."""
        from paicli.run.session_modes import level_of

        self.state.mode = mode
        await self.set_approval(level_of(mode))

    @property
    def mcp(self) -> McpServers:
        """The MCP servers; nothing runs before ``start_mcp``."""
        if self._mcp is None:
            from paicli.tools.mcp.servers import McpServers

            self._mcp = McpServers(self.settings.mcp, self.settings.project_root)
        return self._mcp

    def start_mcp(self, say: Any) -> None:
        """One line per bad server entry, then the good servers start in the background."""
        for problem in self.settings.mcp.problems:
            say(problem)
        if self.settings.mcp.servers:
            self.mcp.start()

    @property
    def browser(self) -> BrowserSession | None:
        """Issue 40: the session's browser when PAICLI_BROWSER is on and can run; None otherwise."""
        if self._browser is None and self.settings.browser.enabled:
            from paicli.tools.browser.session import BrowserSession

            self._browser = BrowserSession(self.settings.browser, self.mcp)
        return self._browser

    async def close_mcp(self) -> None:
        if self._mcp is not None:
            await asyncio.to_thread(self._mcp.close)
        if self._browser is not None:  # after its server stopped: the throwaway profile goes
            await asyncio.to_thread(self._browser.close)

    async def close_lsp(self) -> None:
        """Issue 38: the session's language servers shut down (bounded); a crash or a kill -9 of
        paicli ends them through their leash instead."""
        if self._session is not None and self._session.deps.lsp is not None:
            await self._session.deps.lsp.close()

    def close(self) -> None:
        """The end of the run: the database's pool and its threads go (issue 35), and the
        session's sandbox holders (issue 34)."""
        if self._database is not None:
            self._database.close()
        sandbox = self._session.deps.sandbox if self._session is not None else None
        if sandbox is not None and hasattr(sandbox, "close"):
            sandbox.close()

    @property
    def started(self) -> bool:
        return self._session is not None

    def tool_table(self) -> Callable[[], Mapping[str, Any]]:
        """The session's tool table as it is when asked (MCP servers join it), for a front end's
        lines (``paicli.ui.render.Renderer``): empty before the session exists. The front end holds
        the App weakly: its objects outlive a run in places (a test's in-process runner checks
        that the ledger's thread ends with the run)."""
        ref = weakref.ref(self)

        def table() -> Mapping[str, Any]:
            app = ref()
            return app._session.deps.tools if app is not None and app._session is not None and app._session.deps else {}

        return table

    @property
    def audit_dir(self):
        """reference (v.7): PAICLI_AUDIT_DIR, else $PAICLI_HOME/audit."""
        return self.settings.web.audit_dir or self.settings.home / "audit"

    def continue_session(self) -> str:
        """``--continue``: the session named by ``--session``, else the project's newest one
        (issue 26); a session with no ledger is a mistake to fix (exit 2)."""
        from paicli.run.comeback import NO_SESSION, UNKNOWN_SESSION, has_ledger, newest_session

        saver = self._database.saver if self._database else None  # PAICLI_DATABASE_URL: sessions live there
        sid = self.args.session or newest_session(self.settings.home, self.settings.project_root)
        if sid is None and saver is not None:  # another machine's newest session of this project
            sid = next((s["id"] for s in saver.sessions()), None)
        if sid is None:
            raise ConfigError(NO_SESSION)
        known = saver.has_session(sid) if saver is not None else has_ledger(self.settings.home / "history" / "raw", sid)
        if not known:
            raise ConfigError(UNKNOWN_SESSION.format(sid=sid))
        self.state.session_id = sid
        return sid

    def new_session_line(self) -> str | None:
        """Issue 41: the line saying ``--session ID`` names no session yet, so a new one starts."""
        from paicli.run.comeback import NEW_SESSION, has_ledger

        sid = self.args.session
        if sid is None or self._session is not None:
            return None
        saver = self._database.saver if self._database else None
        known = saver.has_session(sid) if saver is not None else has_ledger(self.settings.home / "history" / "raw", sid)
        return None if known else NEW_SESSION.format(sid=sid)

    @property
    def session_id(self) -> str:
        return self.state.session_id

    def switch_model(self, target: str) -> Settings:
        """``/model <model>`` or ``/model <provider>/<model>`` (paicli.config.model_switch); a
        ``ConfigError`` (no key for that provider) leaves everything as it was."""
        from paicli.config.model_switch import switched

        self._settings = switched(self._settings, target)
        if self._session is not None:
            self._session.switch_model(self._settings)
        return self._settings

    def replace_settings(self, settings: Settings) -> None:
        """``/model add``, ``/config provider``: settings read again (the catalog changed)."""
        self._settings = settings
        if self._session is not None:
            self._session.switch_model(settings)

    @property
    def memory(self) -> LongTermMemory:
        """The shared long-term memory (``paicli.memory.longterm.manager.LongTermMemory``), opened on first use."""
        if self._memory is None:
            from paicli.memory.longterm.manager import LongTermMemory

            self._memory = (self._database.memory(self.settings.memory.options) if self._database else
                            LongTermMemory(self.settings.memory_dir, self.settings.memory.options))
        return self._memory

    @property
    def skills(self) -> SkillLibrary:
        """The skill library the session and /skill share, opened on first use."""
        if self._skills is None:
            from paicli.tools.skills.library import SkillLibrary

            self._skills = SkillLibrary(self.settings.home, self.settings.skill_budget)
        return self._skills

    def move_project(self, root) -> None:
        """``/index <path>`` (reference v.5, ``setProjectPath``): the project root moves, and with it
        everything that follows ``Settings.project_root``: memory's project key, the offloaded
        output and snapshots (per root), the sandbox and the file tools' path guard (the run's
        context). MCP servers and the settings read from the old root's ``.env`` stay."""
        self._settings = replace(self._settings, project_root=root)
        if self._database is not None:
            from paicli.run.database import project_key

            self._project_key = self._database.saver.project_key = project_key(root)
        if self._session is not None:
            self._session.settings = replace(self._session.settings, project_root=root)
            self._session.project_key = self._project_key or ""

    @property
    def project_key(self) -> str:
        from paicli.memory.longterm.entry import normalize_project_key

        return self._project_key or normalize_project_key(self.settings.project_root)

    def external_sources(self) -> tuple[str, ...]:
        """External content this session has read (reference o.1); tags explicit saves."""
        return tuple(self.state.external_sources)

    def auto_extract_status(self) -> str:
        """reference (u.2): 开启 | 开启（外部内容防护暂停） | 关闭."""
        memory = self.settings.memory
        if not memory.auto_extract:
            return "关闭"
        return "开启（外部内容防护暂停）" if memory.external_guard and self.external_sources() else "开启"

    def token_stats_line(self) -> str:
        usage = self.state.usage
        calls, inp, out, cached = usage.calls, usage.input, usage.output, usage.cached
        budget = self.settings.budget.token_budget
        limit = f"{budget} (可用: {max(0, budget - inp - out)})" if budget else "不限"
        share = f" ({cached / inp:.0%})" if cached and inp else ""
        return (f"Token 统计: 调用 {calls} 次 | 总输入: {inp} | 总输出: {out} | 缓存命中: {cached}{share} | "
                f"平均输入: {inp / calls if calls else 0:.0f} | 预算: {limit}")

    def background_notices(self) -> list[str]:
        return self.state.background.pop_notices()

    async def finish_background(self) -> None:
        """Q7: a pending fact extraction is awaited at exit, for at most BACKGROUND_EXIT_WAIT s."""
        if self.state.background.pending:
            await self.state.background.drain(BACKGROUND_EXIT_WAIT)
        enricher = self._memory.enricher if self._memory is not None else None
        if enricher is not None and enricher.pending:  # after extraction: it may have queued more
            await asyncio.to_thread(enricher.wait_idle, SEARCH_TERMS_EXIT_WAIT)
