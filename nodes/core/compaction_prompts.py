"""The summarizer's prompts: markdown under prompts/compaction/, rendered with strict variables.

memory/ holds the compaction logic but cannot read prompts/ (same layer), so the node layer
loads the templates and hands memory/ ready-made prompt builders.
"""

from __future__ import annotations

from paicli.memory.context.session_memory import SessionMemoryPrompts
from paicli.memory.context.summary import SummaryPrompts
from paicli.prompts import PromptSources, load_resource, render


def _templates(names: tuple[str, ...], sources: PromptSources) -> dict[str, str]:
    return {name: load_resource(f"compaction/{name}.md", sources).strip() for name in names}


def summary_prompts(sources: PromptSources = PromptSources()) -> SummaryPrompts:
    t = _templates(("system", "summary", "chunk", "merge", "repair"), sources)
    return SummaryPrompts(
        system=t["system"],
        summary=lambda conversation: render(t["summary"], {"conversation": conversation}),
        chunk=lambda i, n, fragment: render(t["chunk"], {"index": str(i), "total": str(n), "fragment": fragment}),
        merge=lambda partials: render(t["merge"], {"partials": partials}),
        repair=lambda draft: render(t["repair"], {"draft": draft}),
    )


def session_prompts(sources: PromptSources = PromptSources()) -> SessionMemoryPrompts:
    t = _templates(("session-system", "session-initial", "session-update"), sources)
    return SessionMemoryPrompts(
        system=t["session-system"],
        initial=lambda delta: render(t["session-initial"], {"delta": delta}),
        update=lambda memory, delta: render(t["session-update"], {"memory": memory, "delta": delta}),
    )
