"""What every tool shares: its spec, the context it runs in, and the policy error.

A tool is a plain function of (arguments, context) returning the result text the model
reads. Sync tools run in a worker thread; async tools (shell, web) run on the event loop.
A result may be a ``ToolText``: the same text plus structured data for the turn policy.
Whether a call failed is decided where its result is made, never guessed from the text: a
failure the model can react to is returned as ``failed(text)`` (or raised as ``PolicyError``);
the registry turns any other error into ``工具执行失败: <msg>`` so the loop never crashes, and
hands every result on as a ``ToolText`` whose ``ok`` says which it was.
"""

from __future__ import annotations

import importlib
import os
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Union

from paicli.tools.facts import DEFAULT, ToolFacts
from paicli.tools.rate_limit import FixedWindow
from paicli.tools.sandbox.secrets import command_environment

if TYPE_CHECKING:
    from paicli.tools.sandbox.command import CommandSandbox
    from paicli.memory.context.offload import ToolResultOffloader
    from paicli.memory.longterm.manager import LongTermMemory

# When this process started, as far as tools can tell: every tool table imports this module before
# any tool runs, so it predates every file a tool wrote (the command guard's fresh scripts,
# paicli.tools.policy.script_files, which the guards import only when a call is decided).
PROCESS_STARTED = time.time()

ToolResult = str  # or ToolText, which is a str (the registry always returns a ToolText)
SyncToolFn = Callable[[dict[str, Any], "ToolContext"], ToolResult]
AsyncToolFn = Callable[[dict[str, Any], "ToolContext"], Awaitable[ToolResult]]


class PolicyError(Exception):
    """A guard refused the call; shown to the model as ``🛡️ 策略拒绝: <reason>``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ToolText(str):
    """Result text that also carries structured data the model never sees.

    ``artifact`` is for the turn policy, e.g. ``{"discovered_urls": [...]}`` from
    web_search (reference o.6: only typed result URLs grant fetch authority, never prose).
    ``ok`` is the call's typed status: False for a failure (ToolMessage status ``error``);
    ``refused`` marks a failure that was a guard's decision, not the model's doing (s.3).
    Being a str, it flows through the executor unchanged.
    """

    artifact: dict[str, Any]
    ok: bool
    refused: bool

    def __new__(cls, text: str, artifact: dict[str, Any] | None = None, ok: bool = True,
                refused: bool = False) -> ToolText:
        self = super().__new__(cls, text)
        self.artifact = dict(artifact or {})
        self.ok = ok and not refused
        self.refused = refused
        return self


def failed(text: str) -> ToolText:
    """A failed call's result; ``text`` is exactly what the model reads (the reference's wording)."""
    return ToolText(text, ok=False)


MAX_FETCH_BYTES = 5 * 1024 * 1024  # reference (t): web_fetch 5 MiB maximum body


@dataclass(frozen=True)
class SearchService:
    """web_search's back end (issue 39): ``kind`` zhipu | serpapi | searxng, where, with which key."""

    kind: str
    url: str
    key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class WebOptions:
    """How the web tools reach the network; paicli/config/settings.py fills it from the environment."""

    searxng_url: str | None = None  # PAICLI_SEARXNG_URL: base of a SearXNG instance with JSON output
    search: SearchService | None = None  # PAICLI_SEARCH_PROVIDER's choice; None: searxng_url's, if any
    allow_hosts: tuple[str, ...] = ()  # PAICLI_WEB_ALLOW_HOSTS: hosts exempt from the private-address check
    timeout: float = 30.0  # reference (t): web_fetch 30 s timeout (also used by web_search)
    max_bytes: int = MAX_FETCH_BYTES
    # One budget per session (the config object is shared by its calls), not per process.
    fetch_limit: FixedWindow = field(default_factory=FixedWindow, compare=False, repr=False)

    @property
    def search_service(self) -> SearchService | None:
        if self.search is not None:
            return self.search
        return SearchService("searxng", self.searxng_url) if self.searxng_url else None


@dataclass(frozen=True)
class ToolContext:
    """Per-run facts a tool needs. Built by the executor from the runtime context."""

    root: Path  # project root, already resolved (realpath)
    session_id: str = "default"
    command_timeout: float = 60.0  # reference (t): execute_command 60 s
    env: dict[str, str] | None = None  # environment for subprocesses (None = this process's)
    hidden_env: frozenset[str] = frozenset()  # variables commands must not see (the API key's)
    offloader: ToolResultOffloader | None = None  # where oversized output goes (tier 1)
    web: WebOptions = field(default_factory=WebOptions)  # web_search / web_fetch settings (and fetch budget)
    memory: LongTermMemory | None = None  # for save_memory; None: not available
    project_key: str | None = None  # reference (j.1): the normalised project path memories belong to
    external_sources: tuple[str, ...] = ()  # reference (o.1): tags explicit saves after external content
    files_of_turn: Callable[[], tuple[str, ...]] = field(default=tuple, compare=False, repr=False)  # see source_files
    sandbox: CommandSandbox | None = None  # how execute_command runs (issue 24); None: outside, as before it
    vision: bool = False  # the model takes images (issue 39): read_file of an image returns it
    # issue 38: the session's language servers (paicli.tools.lsp.manager.LanguageServers, Deps.lsp), for
    # code_map's exact definitions and references; None: none (the code index's answer only)
    lsp: Any = None

    @cached_property
    def source_files(self) -> tuple[str, ...]:
        """Q13: the project files this turn read or wrote, linked to saved memories. Worked out
        when a tool first asks (save_memory), not for every call: it reads the whole turn."""
        return self.files_of_turn()

    def command_env(self) -> dict[str, str]:
        """The environment a command runs with: a copy without the hidden variables, without any
        variable named like a secret (reference t, widened by issue 34), paicli's own settings,
        the session's socket pointers, and credentials inside URLs (``paicli.tools.sandbox.secrets``),
        so a command (or whatever it prints) never carries the user's keys."""
        return command_environment(os.environ if self.env is None else self.env, self.hidden_env)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what the model sees, how it runs, and its facts for the policy.

    ``fn`` is the implementation, or a ``"module:function"`` string naming it (the built-in
    specs in ``paicli.tools.specs`` are plain data, so the policy may read them), or None for a tool
    whose implementation is bound at run time (``bound``). ``facts`` (``paicli.tools.facts``) say how
    approval, the guards, the audit log and the external-content record treat its calls.
    """

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema: {"type":"object","properties":{...},"required":[...]}
    fn: Union[SyncToolFn, AsyncToolFn, str, None]
    is_async: bool = False
    parallel_safe: bool = False  # reference s.8 PARALLEL_SAFE_TOOLS
    extra: dict[str, Any] = field(default_factory=dict)
    facts: ToolFacts = DEFAULT  # a spec made without facts: a harmless local read's

    def bound(self, fn: Union[SyncToolFn, AsyncToolFn, None] = None) -> ToolSpec:
        """This spec with a callable ``fn``: the one given, or the one its string names."""
        if fn is None and isinstance(self.fn, str):
            fn = _imported_on_first_call(self.fn, self.is_async)
        return replace(self, fn=fn) if fn is not None else self

    def schema(self) -> dict[str, Any]:
        """OpenAI function-tool format, accepted by ``bind_tools``."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def _imported_on_first_call(target: str, is_async: bool) -> Union[SyncToolFn, AsyncToolFn]:
    """The function ``module:attribute`` names, imported when the tool is first called: a turn
    that never fetches a page does not load the web tools (``paicli -p`` start-up, issue 30)."""
    module, _, attribute = target.partition(":")

    def resolve() -> Any:
        return getattr(importlib.import_module(module), attribute)

    if is_async:
        async def call_async(args: dict[str, Any], ctx: "ToolContext") -> Any:
            return await resolve()(args, ctx)

        call_async.__qualname__ = target
        return call_async

    def call(args: dict[str, Any], ctx: "ToolContext") -> Any:
        return resolve()(args, ctx)

    call.__qualname__ = target
    return call

