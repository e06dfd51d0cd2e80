"""The skills a session can use: the catalog per project, on/off, trust, and the prompt's index.

The index goes into the system prompt's stable part (reference q.2 item 7), so it is built from
a catalog scanned once per project and kept until ``/skill on|off|trust|reload`` changes it;
editing a skill's files does not move the prompt. ``load_skill`` and ``/skill show`` read the
skill fresh from disk instead, so what is injected is what is there now, and trust is checked
against the file's current content.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from paicli.prompts import PromptSources, load_resource
from paicli.tools.skills.catalog import BUILTIN_DIR, Skill, find, scan_all, source_dirs
from paicli.tools.skills.limits import DEFAULT_BUDGET
from paicli.tools.skills.state import SkillState, StateFile


@dataclass(frozen=True)
class Listed:
    skill: Skill
    enabled: bool
    trusted: bool  # only a project skill can be untrusted

    @property
    def usable(self) -> bool:
        return self.skill.problem is None and self.enabled


def judge(skill: Skill, state: SkillState) -> Listed:
    trusted = skill.source != "project" or state.is_trusted(skill.path, skill.digest)
    return Listed(skill, skill.name not in state.disabled, trusted)


class SkillLibrary:
    """One per process; the CLI's commands and the graph's tool share it."""

    def __init__(self, home: Path | None, budget: int = DEFAULT_BUDGET, builtin: Path = BUILTIN_DIR):
        self.home, self.budget, self.builtin = home, budget, builtin
        self.state = StateFile(home) if home is not None else None
        self._catalogs: dict[Path, tuple[Listed, ...]] = {}
        self._indexes: dict[tuple[Path, PromptSources], str] = {}
        self._lock = threading.Lock()  # tools run in worker threads

    def current_state(self) -> SkillState:
        return self.state.read() if self.state is not None else SkillState()

    def dirs(self, project: Path | None) -> dict[str, Path]:
        return source_dirs(self.home, project, self.builtin)

    def listing(self, project: Path) -> tuple[Listed, ...]:
        """Every skill of ``project`` (broken ones too), as of the last scan."""
        with self._lock:
            if project not in self._catalogs:
                state = self.current_state()
                self._catalogs[project] = tuple(judge(s, state) for s in scan_all(self.dirs(project)))
            return self._catalogs[project]

    def reload(self) -> None:
        with self._lock:
            self._catalogs.clear()
            self._indexes.clear()

    def lookup(self, project: Path, name: str) -> Listed | None:
        """The skill as it is on disk now, judged against the current skills.json."""
        skill = find(self.dirs(project), name)
        return judge(skill, self.current_state()) if skill is not None else None

    def set_enabled(self, name: str, enabled: bool) -> None:
        self._require_state().set_enabled(name, enabled)
        self.reload()

    def trust(self, skill: Skill) -> None:
        self._require_state().trust(skill.path, skill.digest)
        self.reload()

    def index(self, project: Path, sources: PromptSources = PromptSources()) -> str:
        """The ``## Skills`` body: a header, then one line per usable skill; "" when none.
        Built once per scan, since every model call asks for it."""
        key = (project, sources)
        if key not in self._indexes:
            lines = [index_line(listed) for listed in self.listing(project) if listed.usable]
            header = load_resource("skills/index.md", sources).strip() if lines else ""
            self._indexes[key] = header + "\n\n" + "\n".join(lines) if lines else ""
        return self._indexes[key]

    def _require_state(self) -> StateFile:
        if self.state is None:
            raise RuntimeError("技能没有保存状态的目录（$PAICLI_HOME）")
        return self.state


def index_line(listed: Listed) -> str:
    skill = listed.skill
    if not listed.trusted:  # a stranger's description would be an instruction in the system prompt
        return (f"- {skill.name}（project，未信任）：用户运行 /skill trust {skill.name} 之前，"
                "load_skill 只会把它的正文作为不可信数据返回")
    return f"- {skill.name}（{skill.source}）：{skill.description}"
