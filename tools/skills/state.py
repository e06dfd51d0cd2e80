"""``$PAICLI_HOME/skills.json``: which skills are off, which project skills the user trusts (s.6).

``{"disabled": ["name", ...], "trustedProjectSkills": [{"path": ".../SKILL.md", "sha256": "..."}]}``.
Trust pins the file's content: an edited project skill is untrusted again until trusted anew.
Every change re-reads the file under its lock and replaces it atomically, so two terminals
never lose each other's changes. A file that is not valid JSON is never overwritten: reading
treats it as "nothing trusted, nothing off" (the safe side) and a change names the file to fix.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock

from paicli.memory.errors import PaicliError

STATE_FILE = "skills.json"


class SkillStateError(PaicliError):
    """skills.json cannot be read as paicli wrote it; the message names the file."""


@dataclass(frozen=True)
class SkillState:
    disabled: frozenset[str] = frozenset()
    trusted: frozenset[tuple[str, str]] = frozenset()  # (SKILL.md path, sha256)
    problem: str | None = None  # why the file was not read; changes are refused while set

    def is_trusted(self, path: Path, digest: str) -> bool:
        return (str(path), digest) in self.trusted


@dataclass
class StateFile:
    home: Path
    _cache: tuple[tuple[int, int], SkillState] | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return self.home / STATE_FILE

    def read(self) -> SkillState:
        try:
            stat = self.path.stat()
        except OSError:
            return SkillState()
        key = (stat.st_mtime_ns, stat.st_size)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._parse())
        return self._cache[1]

    def set_enabled(self, name: str, enabled: bool) -> None:
        def change(doc: dict) -> None:
            disabled = [n for n in doc.get("disabled", []) if n != name]
            doc["disabled"] = disabled if enabled else [*disabled, name]
        self._update(change)

    def trust(self, path: Path, digest: str) -> None:
        def change(doc: dict) -> None:
            kept = [t for t in doc.get("trustedProjectSkills", []) if t.get("path") != str(path)]
            doc["trustedProjectSkills"] = [*kept, {"path": str(path), "sha256": digest}]
        self._update(change)

    def _parse(self) -> SkillState:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            disabled = frozenset(str(n) for n in doc.get("disabled", []))
            trusted = frozenset((str(t["path"]), str(t["sha256"])) for t in doc.get("trustedProjectSkills", []))
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            return SkillState(problem=f"{self.path} 无法读取（{type(exc).__name__}），请修复或删除它")
        return SkillState(disabled, trusted)

    def _update(self, change: Callable[[dict], None]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            self._cache = None
            state = self.read()
            if state.problem:
                raise SkillStateError(state.problem)
            doc = json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}
            change(doc)
            fd, tmp = tempfile.mkstemp(dir=self.home, prefix=".skills.", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, ensure_ascii=False, indent=2)
            os.replace(tmp, self.path)
            self._cache = None
