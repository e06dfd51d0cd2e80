"""System prompt assembly (reference q).

Sections go from most to least stable so the provider's prefix cache keeps hitting:
base → personality → mode → approvals → context management → handoff → skills →
runtime context (changes daily) → project context (PAI.md; changes when the files do). The
long-term memories of a turn are not part of it: they travel with the turn as an internal
message (``nodes/core/request.py``), so the conversation after the system prompt keeps
matching the provider's cache. Each prompt file can be
overridden by ``~/.paicli/prompts/<relpath>`` and then by ``<project>/.paicli/prompts/<relpath>``.
An override is read only when its real path stays inside its owner, the project or
``$PAICLI_HOME`` (paicli issue 23, item 3): a repository's ``.paicli/prompts`` linked to the
user's files is skipped, and ``outside_links`` names each such link for the user.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath

BUILTIN_DIR = Path(__file__).resolve().parent  # resolved once (paicli/prompts is a symlink in a checkout)
_VAR = re.compile(r"\{\{\s*(\w+)\s*\}\}")

# reference q.3 approvals: `auto` or `never`, otherwise `suggest`.
APPROVAL_FILES = {"yes": "approvals/auto.md", "ask": "approvals/never.md"}
MODE_FILES = {
    "agent": "modes/agent.md",
    "plan": "modes/plan.md",
    "team-planner": "modes/team-planner.md",
    "team-worker": "modes/team-worker.md",
    "team-reviewer": "modes/team-reviewer.md",
}
# A mode's name (RunContext.mode, paicli.modes) -> the MODE_FILES key of its agent loop's prompt;
# a mode not listed gets the agent's. Team: only its workers run the loop.
LOOP_PROMPTS = {"plan": "plan", "team": "team-worker"}


def loop_prompt(mode: str) -> str:
    """The ``MODE_FILES`` key of the agent loop's prompt in ``mode``."""
    return LOOP_PROMPTS.get(mode, "agent")


class PromptError(Exception):
    """A prompt resource is missing, blank, escapes its root, or uses an unknown variable."""


@dataclass(frozen=True)
class PromptSources:
    """Where prompt files are looked up, lowest priority first; ``fences[i]`` is the directory
    whose inside ``roots[i]``'s files must really be in (the root itself when not given)."""

    roots: tuple[Path, ...] = (BUILTIN_DIR,)
    fences: tuple[Path, ...] = ()

    @classmethod
    def for_project(cls, home: Path | None, project: Path | None) -> "PromptSources":
        owners = [(home / "prompts", home) for home in (home,) if home]
        owners += [(project / ".paicli" / "prompts", project) for project in (project,) if project]
        return cls((BUILTIN_DIR, *(r for r, _ in owners)), (BUILTIN_DIR, *(f for _, f in owners)))

    def fence(self, index: int) -> Path:
        return (self.fences[index] if index < len(self.fences) else self.roots[index]).resolve()


def outside_links(sources: PromptSources) -> list[str]:
    """One line per override file (or folder) that links out of its owner: skipped, shown to the user."""
    found = []
    for index, root in enumerate(sources.roots[1:], start=1):
        fence = sources.fence(index)
        for path in _entries(root):
            real = path.resolve()
            if not real.is_relative_to(fence):
                found.append(f"⚠️ 已跳过 {path}：它链接到 {real}，在 {fence} 之外，内容不会发给模型")
    return found


def _entries(root: Path) -> list[Path]:
    """The override folder itself when it is a link, else the links inside it (not followed)."""
    if root.is_symlink() or not root.is_dir():
        return [root] if root.is_symlink() else []
    links = []
    for folder, dirs, files in os.walk(root):
        links += [Path(folder) / name for name in (*dirs, *files) if os.path.islink(os.path.join(folder, name))]
    return sorted(links)


def load_resource(relpath: str, sources: PromptSources) -> str:
    rel = PurePosixPath(relpath)
    if rel.is_absolute() or ".." in rel.parts:
        raise PromptError(f"Prompt resource path not allowed: {relpath}")
    text = None
    for index, root in enumerate(sources.roots):
        candidate = (root / rel).resolve()
        if candidate.is_file() and candidate.is_relative_to(sources.fence(index)):
            text = candidate.read_text(encoding="utf-8")
    if text is None or not text.strip():
        raise PromptError(f"Prompt resource missing: {relpath}")
    return text


def render(template: str, variables: dict[str, str]) -> str:
    """``{{name}}`` substitution that refuses unknown names instead of leaving them in."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise PromptError(f"Prompt variable '{name}' has no value")
        return variables[name]

    return _VAR.sub(substitute, template)


NO_WEB_SEARCH = "tools/no-web-search.md"  # issue 39: a session without a search service


def without_tool_line(text: str, tool: str) -> str:
    """``text`` without the ``## Tools`` bullet of ``tool`` (the session does not offer it)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith(f"- `{tool}`"))


@lru_cache(maxsize=32)
def stable_prefix(mode: str, approval: str, sources: PromptSources = PromptSources(), web_search: bool = True) -> str:
    """The part of the system prompt that only changes with mode, approval level or whether the
    session has web search (decided once per session, so it stays cache-stable)."""
    files = [
        "base.md",
        "personalities/calm.md",
        MODE_FILES[mode],
        APPROVAL_FILES.get(approval, "approvals/suggest.md"),
        "context/context-management.md",
        "handoff.md",
    ]
    sections = [render(load_resource(f, sources), {}).strip() for f in files]
    if "## Language" not in sections[0]:
        raise PromptError("base.md must contain a '## Language' section")
    if not web_search:
        sections[0] = without_tool_line(sections[0], "web_search")
        sections.insert(1, render(load_resource(NO_WEB_SEARCH, sources), {}).strip())
    return "\n\n".join(s for s in sections if s)


def runtime_section(now: datetime) -> str:
    zone = now.tzname() or "UTC"
    return f"## Runtime Context\n\n- 当前日期: {now:%Y-%m-%d}\n- 当前时区: {zone}"


def assemble_system_prompt(
    *,
    mode: str,
    approval: str,
    now: datetime,
    skills: str = "",
    project_context: str = "",
    sources: PromptSources = PromptSources(),
    web_search: bool = True,
) -> str:
    sections = [stable_prefix(mode, approval, sources, web_search)]
    if skills.strip():
        sections.append("## Skills\n\n" + skills.strip())
    sections.append(runtime_section(now))
    if project_context.strip():
        sections.append("## Project Context\n\n" + project_context.strip())
    prompt = "\n\n".join(sections)
    if "## Language" not in prompt:
        raise PromptError("the assembled system prompt lost its '## Language' section")
    return prompt


def assemble_planner_prompt(*, project_context: str = "", sources: PromptSources = PromptSources()) -> str:
    """reference (s.4): the planner's system prompt, the Plan Builder text and PAI.md only."""
    sections = [render(load_resource("modes/planner.md", sources), {}).strip()]
    if project_context.strip():
        sections.append("## Project Context\n\n" + project_context.strip())
    return "\n\n".join(sections)
