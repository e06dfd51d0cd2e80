"""Project memory: the PAI.md files, concatenated into one prompt block (reference i).

It is read on every system prompt build and nothing is cached, so a user's edit shows up on the
next turn. To keep that cheap, each of the five sources costs one ``stat`` when it is absent.

Decisions where the reference is silent:
- Bytes that are not UTF-8 become U+FFFD instead of dropping the file; a leading BOM is dropped.
- The import-root check resolves symlinks, so ``@link.md`` pointing outside the root is refused.
- The five top-level sources are held to their root too (paicli issue 23, item 3): a cloned
  repository's ``PAI.md -> ~/.ssh/id_rsa`` or ``.paicli/PAI.local.md -> ../../secret`` would
  otherwise go into the system prompt. Their real path must stay inside the project (or inside
  ``$PAICLI_HOME`` for the user's file), so a ``~/.paicli/PAI.md`` linked into a dotfiles
  repository is skipped too; linking the whole ``$PAICLI_HOME`` directory still works. Every
  link out is reported in ``ProjectContext.skipped`` for the user (one line each, never to the model).
- Cycles are detected on resolved paths, with a stack: a file imported by two siblings is
  inlined twice (as in the reference), only a file importing one of its ancestors is skipped.
- Lengths are Python characters (code points); Java counts UTF-16 units.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

MAX_TOTAL_CHARS = 24_000  # reference (i): budget for the body
MAX_IMPORT_DEPTH = 3  # reference (i): the top file is depth 0; depth > 3 is skipped
TRUNCATION_SLACK = 80  # reference (i): a truncated body keeps MAX_TOTAL_CHARS - 80 chars
HEADER = "## PAI.md 项目记忆\n\n"  # reference (i)
TRUNCATED_MARKER = f"[PAI.md 内容已按 {MAX_TOTAL_CHARS} 字符预算截断]"  # reference (i)
FILE_NAME = "PAI.md"
LOCAL_FILE_NAME = "PAI.local.md"

# Java's readAllLines splits on these three only (str.splitlines would also split on \f, \v, ...).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def memory_sources(project_root: Path, home: Path | None) -> list[tuple[Path, Path]]:
    """reference (i): the five ``(file, import root)`` pairs, in prompt order; without a
    ``home`` ($PAICLI_HOME, which only paicli.config.settings resolves) the user-level file is left out."""
    project = _absolute(project_root)
    config = project / ".paicli"
    user = [(_absolute(home) / FILE_NAME, _absolute(home))] if home is not None else []
    return [
        *user,
        (project / FILE_NAME, project),
        (config / FILE_NAME, project),
        (project / LOCAL_FILE_NAME, project),
        (config / LOCAL_FILE_NAME, project),
    ]


@dataclass
class ProjectContext:
    text: str = ""  # the ``## PAI.md 项目记忆`` block, or ""
    skipped: list[str] = field(default_factory=list)  # one line per link out of its root, for the user


def load_project_context(project_root: Path, home: Path | None) -> str:
    """The ``## PAI.md 项目记忆`` block, or "" when no source has content."""
    return read_project_context(project_root, home).text


def read_project_context(project_root: Path, home: Path | None) -> ProjectContext:
    """The block, and the files skipped because they link out of their root."""
    memory, body = ProjectContext(), ""
    for path, root in memory_sources(project_root, home):
        if not path.is_file():
            continue
        content = _expand(path, root.resolve(), [], 0, memory.skipped).strip()
        if not content:
            continue
        body += ("\n\n" if body else "") + f"### {path}\n\n{content}"
        if len(body) >= MAX_TOTAL_CHARS:
            memory.text = _truncated(body)
            return memory
    memory.text = HEADER + body if body else ""
    return memory


def link_out(path: Path, real: Path, root: Path) -> str:
    """The line the user sees for a prompt file skipped because it links out of ``root``."""
    return f"⚠️ 已跳过 {path}：它链接到 {real}，在 {root} 之外，内容不会发给模型"


def parse_import(line: str) -> str | None:
    """reference (i): the path of an ``@path`` line, or None when the line is literal text."""
    trimmed = line.strip()
    if not trimmed.startswith("@") or len(trimmed) < 2 or " " in trimmed:
        return None
    target = trimmed[1:].strip()
    if target.startswith("/") or ".." in target:
        return None
    return target


def _expand(path: Path, root: Path, stack: list[Path], depth: int, skipped: list[str]) -> str:
    """The file's lines with imports inlined; "" (and a warning) when it must be skipped."""
    if depth > MAX_IMPORT_DEPTH:
        log.warning("Skipping PAI.md import beyond depth %d: %r", MAX_IMPORT_DEPTH, str(path))
        return ""
    real = path.resolve()
    if not real.is_relative_to(root):  # the user is told through ``skipped``, not the log
        skipped.append(link_out(path, real, root))
        return ""
    if depth > 0 and not real.is_file():
        log.warning("Skipping PAI.md import that is not a regular file: %r", str(path))
        return ""
    if real in stack:
        log.warning("Skipping cyclic PAI.md import: %r", str(path))
        return ""
    text = _read(real)
    stack.append(real)
    try:
        return "".join(_expand_line(line, path.parent, root, stack, depth, skipped) for line in _lines(text))
    finally:
        stack.pop()


def _expand_line(line: str, folder: Path, root: Path, stack: list[Path], depth: int, skipped: list[str]) -> str:
    target = parse_import(line)
    if target is None:
        return line + "\n"
    imported = _expand(_absolute(folder / target), root, stack, depth + 1, skipped).strip()
    return imported + "\n" if imported else ""


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError as exc:
        log.warning("Failed to read PAI.md file %r: %r", str(path), str(exc))
        return ""


def _lines(text: str) -> list[str]:
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _truncated(body: str) -> str:
    cut = body[: MAX_TOTAL_CHARS - TRUNCATION_SLACK].rstrip()
    return f"{HEADER}{cut}\n\n{TRUNCATED_MARKER}"


def _absolute(path: Path) -> Path:
    """Absolute and normalized without resolving symlinks, like Java's toAbsolutePath().normalize()."""
    return Path(os.path.abspath(path))
