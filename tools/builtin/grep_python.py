"""The pure-Python grep scan, run in a child process that can be killed.

Python's ``re`` backtracks: a pattern like ``(a+)+$`` on a line of ``aaaa…b`` runs for
ages inside one C call that holds the GIL, so neither a thread nor Ctrl-C can stop it. In a
child process a timeout is a kill, and SIGINT keeps its default action (the kernel ends the
child at once), so a terminal Ctrl-C stops it like any other foreground process.

The child is started as ``python -I -c BOOT <package root>``: it imports only this module,
``paicli.tools.common`` and ``paicli.tools.file_text`` (which decides, as for read_file, whether a file is text
and in which encoding), whatever way paicli was installed. It takes the query as a JSON
argument and writes one JSON ``[path, line]`` per hit on stdout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any, Iterator

from paicli.tools.common import split_lines
from paicli.tools.file_text import Sniffed, read_text_file

# reference (t): glob_files and grep_code skip these directories.
EXCLUDED_DIRS = frozenset({".git", ".paicli", "target", "node_modules", "dist", "build", "coverage", ".idea", ".gradle"})
MAX_SCAN_BYTES = 10 * 1024 * 1024  # the fallback reads whole files; skip giant artifacts
PACKAGE_ROOT = str(Path(__file__).parents[3])  # the directory holding the `paicli` package
BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from paicli.tools.builtin.grep_python import main; main()"


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


def child_command() -> list[str]:
    # -I: no PYTHONPATH, user site or cwd on sys.path; the package root is passed explicitly.
    return [sys.executable, "-I", "-c", BOOT, PACKAGE_ROOT]


def scan(job: dict[str, Any]) -> Iterator[tuple[str, int]]:
    """(file, line) hits for the job the parent sent; at most head_limit per file."""
    flags = 0 if job["case_sensitive"] else re.IGNORECASE
    matcher = re.compile(job["pattern"] if job["regex"] else re.escape(job["pattern"]), flags)
    glob = re.compile(job["glob"]) if job["glob"] is not None else None
    base = Path(job["base"])
    for path in walk_files(base):
        if glob_accepts(glob, path, base):
            for number in file_hits(path, matcher, job["head_limit"]):
                yield str(path), number


def file_hits(path: Path, matcher: re.Pattern[str], head_limit: int) -> list[int]:
    try:
        if path.stat().st_size > MAX_SCAN_BYTES:
            return []
        found = read_text_file(path.read_bytes(), path)
    except OSError:
        return []
    if isinstance(found, Sniffed):
        return []  # binary, as read_file says
    lines = split_lines(found.text)
    found: list[int] = []
    for number, line in enumerate(lines, 1):
        if matcher.search(line):
            found.append(number)
            if len(found) == head_limit:
                break
    return found


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C must not wait for a match to end
    job = json.loads(sys.argv[2])  # argv: ["-c", package root, job]
    for path, number in scan(job):
        print(json.dumps([path, number]), flush=True)  # ASCII JSON: no locale trouble
