"""Skills on disk (reference s.6): where they are, how one ``SKILL.md`` is read.

A skill is a directory holding ``SKILL.md``: YAML front matter with ``name`` and ``description``,
then a Markdown body, and optionally ``references/``, ``scripts/`` and other files. Three
sources: the built-in skills shipped in this package, the user's (``$PAICLI_HOME/skills/<name>/``)
and the project's (``<project>/.paicli/skills/<name>/``). A user skill replaces a built-in one of
the same name, as prompt overrides go (reference q.1); a project skill never replaces either
(paicli issue 23, item 7): a cloned repository must not swap the instructions behind a name the
user already relies on. It is listed as broken instead, with that reason. A skill that cannot be
read is kept as a broken entry whose ``problem`` says why, so one bad file never stops the others.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"  # resolved once (paicli/tools is a symlink in a checkout)
SKILL_FILE = "SKILL.md"
SOURCES = ("builtin", "user", "project")  # lowest priority first
MAX_SKILL_BYTES = 1024 * 1024  # a SKILL.md is instructions, not data; a bigger one is a mistake
MAX_DESCRIPTION = 1024  # the common SKILL.md format's limit
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Skill:
    name: str
    source: str  # builtin | user | project
    directory: Path  # absolute, as found (a user may link a skill directory from elsewhere)
    description: str = ""
    body: str = ""
    digest: str = ""  # SHA-256 of SKILL.md's bytes: what trusting a project skill pins
    problem: str | None = None  # why the skill cannot be used; None when it can

    @property
    def path(self) -> Path:
        return self.directory / SKILL_FILE


def source_dirs(home: Path | None, project: Path | None, builtin: Path = BUILTIN_DIR) -> dict[str, Path]:
    dirs = {"builtin": builtin}
    if home is not None:
        dirs["user"] = home / "skills"
    if project is not None:
        dirs["project"] = project / ".paicli" / "skills"
    return dirs


SHADOWS = "与{source} Skill '{name}' 同名：项目 Skill 不能覆盖内置或用户的 Skill，请改名"
_SOURCE_NAMES = {"builtin": "内置", "user": "用户"}
LOOKUP_ORDER = ("user", "builtin", "project")  # who owns a name: the user, then paicli, then a project


def scan(dirs: dict[str, Path]) -> dict[str, Skill]:
    """Every skill by name, the one that owns it (``LOOKUP_ORDER``)."""
    return _scan(dirs)[0]


def scan_all(dirs: dict[str, Path]) -> list[Skill]:
    """``scan``'s skills, plus each project skill that tried to take a built-in or user skill's
    name, as a broken entry saying so (listed after the owner); sorted by name."""
    owners, shadowing = _scan(dirs)
    return sorted([*owners.values(), *shadowing], key=lambda skill: (skill.name, skill.source == "project"))


def _scan(dirs: dict[str, Path]) -> tuple[dict[str, Skill], list[Skill]]:
    found: dict[str, Skill] = {}
    shadowing: list[Skill] = []
    for source in SOURCES:
        root = dirs.get(source)
        if root is None or not root.is_dir():
            continue
        for entry in sorted(root.iterdir()):
            if not entry.is_dir() or entry.name.startswith("."):
                continue
            owner = found.get(entry.name)
            if source == "project" and owner is not None:
                shown = _SOURCE_NAMES.get(owner.source, owner.source)
                shadowing.append(Skill(entry.name, source, entry.absolute(),
                                       problem=SHADOWS.format(source=shown, name=entry.name)))
            else:
                found[entry.name] = read_skill(entry, source, _fence(dirs, source))
    return dict(sorted(found.items())), shadowing


def _fence(dirs: dict[str, Path], source: str) -> Path | None:
    """A project skill must really be inside the project (``<project>/.paicli/skills`` → the
    project): a repository's ``.paicli/skills/x -> ~/somewhere`` is not the project's to offer."""
    root = dirs.get(source)
    return root.parents[1] if source == "project" and root is not None else None


def find(dirs: dict[str, Path], name: str) -> Skill | None:
    """The skill ``name`` as it is on disk now (its owner, ``LOOKUP_ORDER``)."""
    if not NAME.fullmatch(name):
        return None
    for source in LOOKUP_ORDER:
        root = dirs.get(source)
        if root is not None and (root / name).is_dir():
            return read_skill(root / name, source, _fence(dirs, source))
    return None


def read_skill(directory: Path, source: str, fence: Path | None = None) -> Skill:
    """``fence``: the directory the skill must really be inside (the project, for a project skill)."""
    directory = directory.absolute()
    broken = lambda problem, digest="": Skill(directory.name, source, directory, digest=digest,  # noqa: E731
                                               problem=problem)
    if fence is not None and not directory.resolve().is_relative_to(fence.resolve()):
        return broken(f"Skill 目录是指向项目之外的链接（{directory.resolve()}）")
    path = directory / SKILL_FILE
    if not path.is_file():
        return broken(f"缺少 {SKILL_FILE}")
    if not path.resolve().is_relative_to(directory.resolve()):
        return broken(f"{SKILL_FILE} 是指向 Skill 目录之外的链接")
    try:
        data = path.read_bytes()[:MAX_SKILL_BYTES + 1]
    except OSError as exc:
        return broken(f"无法读取 {SKILL_FILE}: {exc.strerror or exc}")
    if len(data) > MAX_SKILL_BYTES:
        return broken(f"{SKILL_FILE} 超过 1 MB")
    digest = hashlib.sha256(data).hexdigest()
    try:
        name, description, body = parse(data.decode("utf-8"))
    except ValueError as exc:
        return broken(str(exc), digest)
    if name != directory.name:
        return broken(f"name '{name}' 与目录名 '{directory.name}' 不一致", digest)
    return Skill(name, source, directory, description, body, digest)


def parse(text: str) -> tuple[str, str, str]:
    """(name, description, body) of a SKILL.md; ValueError names what is wrong."""
    text = text.removeprefix("\ufeff")
    match = _FRONT.match(text)
    if match is None:
        raise ValueError("缺少 YAML front matter（文件须以 --- 开头，并以 --- 结束）")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter 不是合法的 YAML: {_yaml_problem(exc)}") from None
    if not isinstance(meta, dict):
        raise ValueError("front matter 必须是 键: 值 形式")
    name, description = meta.get("name"), meta.get("description")
    if name is not None and not isinstance(name, str):  # YAML reads on/off/yes/no/2024 as values
        raise ValueError(f"name 必须是文本，YAML 把它读成了 {name!r}；请给它加引号")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("front matter 缺少 name")
    if not NAME.fullmatch(name.strip()):
        raise ValueError(f"name '{name.strip()[:80]}' 只能包含字母、数字、.、_、-（最多 64 个字符）")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("front matter 缺少 description")
    return name.strip(), one_line(description)[:MAX_DESCRIPTION], text[match.end():].strip("\r\n")


def one_line(text: str) -> str:
    """A description goes into the system prompt's index: one line, no control characters."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem}（第 {mark.line + 2} 行）" if mark is not None else problem
