"""The wiring of a graph from the user's settings: the live objects every graph runs with
(``make_deps``: the chat models, the tool table, skills, snapshots, the sandbox, the audit log,
the auto reviewer), the MCP servers' tools joining that table (``attach_mcp``) and where the
ledger lives (``history_dir``). The CLI's session and the Studio server (``paicli/studio/``) both
build their graphs from here, so Studio needs none of the session's conversation or run code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paicli.memory.longterm.enrichment import Enricher, model_proposer
from paicli.nodes.core.background import Background
from paicli.nodes.core.state import Deps
from paicli.run.models import make_chat_model, make_review_model
from paicli.config.settings import Settings
from paicli.prompts import PromptSources, load_resource
from paicli.tools.base import WebOptions
from paicli.tools.builtin.code_search import code_index_specs
from paicli.tools.policy.audit import AuditLog
from paicli.tools.policy.auto_review import REVIEW_TIMEOUT, AutoReviewer
from paicli.tools.registry import BUILTIN_TOOLS
from paicli.tools.sandbox.command import CommandSandbox
from paicli.tools.skills.library import SkillLibrary
from paicli.tools.skills.load import load_skill_spec
from paicli.tools.skills.reference import save_skill_reference_spec
from paicli.tools.snapshots.revert import revert_turn_spec
from paicli.tools.snapshots.store import TurnSnapshots, snapshot_home


def search_term_enricher(settings: Settings, deps: Deps) -> Enricher:
    """Issue 16: the light model proposes search terms for memories written from now on."""
    prompt = load_resource("memory/search_terms.md", PromptSources.for_project(settings.home, None))
    return Enricher(model_proposer(deps.light_model or deps.model, prompt.strip()))


def history_dir(settings: Settings) -> Path:
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
    # issue 39: no search service, no web_search (the prompt says so: prompts/tools/no-web-search.md)
    builtin = {name: spec for name, spec in BUILTIN_TOOLS.items() if name != "web_search" or web.search is not None}
    snapshots = TurnSnapshots(snapshot_home(settings.home), settings.snapshots)
    sandbox = CommandSandbox(settings.sandbox)
    return Deps(
        model=make_chat_model(settings),
        tools={**builtin, "load_skill": load_skill_spec(skills),
               "save_skill_reference": save_skill_reference_spec(skills),
               "revert_turn": revert_turn_spec(snapshots),
               **code_index_specs(settings.home, settings.code_index)},  # issue 37
        skills=skills,
        light_model=make_chat_model(settings, settings.light_model) if settings.light_model != settings.model else None,
        prompt_home=settings.home,
        compaction=settings.compaction,
        budget=settings.budget,
        external_guard=settings.memory.external_guard,
        auto_extract=auto_extract,
        background=Background(),
        audit=AuditLog(web.audit_dir or settings.home / "audit"),  # as App.audit_dir
        web=WebOptions(searxng_url=web.searxng_url, allow_hosts=web.allow_hosts, search=web.search),
        hidden_env=settings.secret_env,
        masked=secret_values(settings),
        snapshots=snapshots,
        sandbox=sandbox,
        reviewer=make_reviewer(settings) if review else None,
        lsp=make_language_servers(settings, sandbox),
    )


def attach_browser(deps: Deps, browser: Any) -> None:
    """Issue 40: the session's browser (``paicli.tools.browser.session.BrowserSession``) and its
    ``browser_*`` tools; before ``attach_mcp``, which then watches the browser server's tools."""
    from paicli.tools.browser.tools import browser_specs

    deps.browser = browser
    deps.tools = {**deps.tools, **browser_specs(browser)}


def secret_values(settings: Settings) -> tuple[str, ...]:
    """issue 34: the values masked in tool output: the key and the database password."""
    from urllib.parse import parse_qs, urlsplit

    found = [settings.api_key or ""]
    if settings.database_url:
        try:
            parts = urlsplit(settings.database_url)
            found += [parts.password or "", *parse_qs(parts.query).get("password", [])]
        except ValueError:
            pass
    return tuple(v for v in dict.fromkeys(found) if v)


def make_language_servers(settings: Settings, sandbox: CommandSandbox) -> Any:
    """Issue 38: the session's language servers, confined like its commands and on a leash to
    this process (``tools/leash.py``); None with ``PAICLI_LSP=off``."""
    if not settings.lsp.on:
        return None
    import os

    from paicli.tools.leash import leash_command
    from paicli.tools.lsp.manager import LanguageServers

    def on_leash(argv: list[str], fds: tuple[int, ...]) -> list[str]:
        # PR_SET_PDEATHSIG fires when the *thread* that started the server ends: only the main
        # thread lives as long as the process; from any other thread the leash watches instead.
        import threading

        return leash_command(argv, os.getpid(), watch=threading.current_thread() is not threading.main_thread(),
                             fds=fds)

    return LanguageServers(settings.lsp, sandbox, launcher=on_leash, hidden_env=settings.secret_env)


def attach_mcp(deps: Deps, servers: Any) -> None:
    """The MCP servers' tools join ``deps.tools`` whenever a server is ready or gone. The table
    is replaced, never changed in place: the servers' thread calls this while a node may be
    reading the old one."""
    base = dict(deps.tools)

    def swap(specs: dict[str, Any]) -> None:
        if deps.browser is not None:  # issue 40: the browser server's calls are watched
            specs = deps.browser.wrap(specs)
        deps.tools = {**base, **specs}

    servers.on_change = swap
    swap(servers.specs())
    deps.notices = servers.unreported  # issue 41: a server that failed says so in the run
