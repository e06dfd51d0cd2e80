"""The wiring of a graph from the user's settings: the live objects every graph runs with
(``make_deps``: the chat models, the tool table, skills, snapshots, the sandbox, the audit log,
the auto reviewer), the MCP servers' tools joining that table (``attach_mcp``) and where the
ledger lives (``history_dir``). The CLI's session and the Studio server (``paicli/studio/``) both
build their graphs from here, so Studio needs none of the session's conversation or run code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.longterm.enrichment import Enricher, model_proposer
from nodes.core.background import Background
from nodes.core.state import Deps
from paicli.models import make_chat_model, make_review_model
from paicli.settings import Settings
from prompts import PromptSources, load_resource
from tools.base import WebOptions
from tools.policy.audit import AuditLog
from tools.policy.auto_review import REVIEW_TIMEOUT, AutoReviewer
from tools.registry import BUILTIN_TOOLS
from tools.sandbox.command import CommandSandbox
from tools.skills.library import SkillLibrary
from tools.skills.load import load_skill_spec
from tools.skills.reference import save_skill_reference_spec
from tools.snapshots.revert import revert_turn_spec
from tools.snapshots.store import TurnSnapshots, snapshot_home


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
        web=WebOptions(searxng_url=web.searxng_url, allow_hosts=web.allow_hosts),
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
    deps.notices = servers.unreported  # issue 41: a server that failed says so in the run
