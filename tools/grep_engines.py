"""Where grep_code finds its hits: ripgrep when installed, else a pure-Python walk.

Both engines return only (file, line) hits; search.py reads context lines itself, so the
output format does not depend on which engine ran.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from tools.common import read_text, split_lines

# reference (t): glob_files and grep_code skip these directories.
EXCLUDED_DIRS = frozenset({".git", ".paicli", "target", "node_modules", "dist", "build", "coverage", ".idea", ".gradle"})
RG_TIMEOUT_SECONDS = 30  # a runaway search must not hold the tool batch
MAX_SCAN_BYTES = 10 * 1024 * 1024  # the fallback reads whole files; skip giant artifacts
BINARY_SNIFF_BYTES = 8192


@dataclass
class Query:
    pattern: str
    regex: bool
    case_sensitive: bool
    glob: re.Pattern[str] | None  # matcher from search.compile_glob, or None for all files
    head_limit: int  # hits per file
    max_results: int


@dataclass
class Hits:
    engine: str
    found: list[tuple[Path, int]] = field(default_factory=list)
    partial: str | None = None  # engine-side reason the list is incomplete


def walk_files(base: Path) -> Iterator[Path]:
    """Regular files under base in path order (ripgrep's --sort path order).

    Symlinks are skipped, as ripgrep does by default: one pointing outside the project
    would otherwise let a search read what PathGuard refuses to read_file.
    """
    if base.is_file():
        yield base
        return
    try:
        entries = sorted(os.scandir(base), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and entry.name not in EXCLUDED_DIRS:
            yield from walk_files(Path(entry.path))
        elif entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


def glob_accepts(glob: re.Pattern[str] | None, path: Path, base: Path) -> bool:
    if glob is None:
        return True
    rel = path.relative_to(base).as_posix() if path != base else path.name
    return bool(glob.fullmatch(rel) or glob.fullmatch(path.name))


def search(base: Path, query: Query) -> Hits:
    rg = shutil.which("rg")
    return search_rg(rg, base, query) if rg else search_python(base, query)


def search_python(base: Path, query: Query) -> Hits:
    flags = 0 if query.case_sensitive else re.IGNORECASE
    try:
        matcher = re.compile(query.pattern if query.regex else re.escape(query.pattern), flags)
    except re.error as exc:
        raise ValueError(f"正则表达式无效: {exc}") from None
    hits = Hits(engine="python")
    for path in walk_files(base):
        if not glob_accepts(query.glob, path, base):
            continue
        for number in _file_hits(path, matcher, query.head_limit):
            if len(hits.found) == query.max_results:
                hits.partial = f"已达到 max_results={query.max_results}"
                return hits
            hits.found.append((path, number))
    return hits


def _file_hits(path: Path, matcher: re.Pattern[str], head_limit: int) -> list[int]:
    try:
        if path.stat().st_size > MAX_SCAN_BYTES:
            return []
        with path.open("rb") as fh:
            if b"\0" in fh.read(BINARY_SNIFF_BYTES):
                return []  # binary, like ripgrep's default
        lines = split_lines(read_text(path))
    except OSError:
        return []
    found = [n for n, line in enumerate(lines, 1) if matcher.search(line)]
    return found[:head_limit]


def search_rg(rg: str, base: Path, query: Query) -> Hits:
    proc = subprocess.Popen(
        _rg_command(rg, base, query), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, text=True, encoding="utf-8", errors="replace",
    )
    timed_out = threading.Event()
    timer = threading.Timer(RG_TIMEOUT_SECONDS, lambda: (timed_out.set(), proc.kill()))
    timer.start()
    try:
        hits = _read_rg(proc, base, query)
    finally:
        timer.cancel()
        proc.kill()  # we may stop reading at max_results; rg must not keep walking
        stderr = proc.communicate()[1]
    if timed_out.is_set() and hits.partial is None:
        hits.partial = f"ripgrep 超时（{RG_TIMEOUT_SECONDS}秒）"
    if proc.returncode == 2 and not hits.found:
        raise ValueError(f"ripgrep 失败: {stderr.strip()}")
    return hits


def _rg_command(rg: str, base: Path, query: Query) -> list[str]:
    # --sort path: same order on every run (and as the fallback), at the cost of rg's parallel walk.
    # --hidden: the fallback searches dotfiles too; .git and .paicli are excluded below anyway.
    cmd = [rg, "--json", "--no-messages", "--hidden", "--sort", "path", "--max-count", str(query.head_limit)]
    cmd += [] if query.regex else ["--fixed-strings"]
    cmd += [] if query.case_sensitive else ["--ignore-case"]
    for name in sorted(EXCLUDED_DIRS):
        cmd += ["--glob", f"!{name}"]
    return cmd + ["-e", query.pattern, "--", str(base)]


def _read_rg(proc: subprocess.Popen[str], base: Path, query: Query) -> Hits:
    hits = Hits(engine="ripgrep")
    assert proc.stdout is not None
    for raw in proc.stdout:
        event = json.loads(raw)
        if event.get("type") != "match":
            continue
        data = event["data"]
        path = Path(data["path"].get("text", ""))
        if "text" not in data["path"] or not glob_accepts(query.glob, path, base):
            continue  # non-UTF-8 file names arrive base64-encoded; read_file could not open them
        if len(hits.found) == query.max_results:
            hits.partial = f"已达到 max_results={query.max_results}"
            break
        hits.found.append((path, data["line_number"]))
    return hits
