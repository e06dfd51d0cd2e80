"""Where grep_code finds its hits: ripgrep, else the Python scan in a child process.

ripgrep comes with paicli (the ``ripgrep`` wheel puts ``rg`` beside the interpreter), and its
regex engine runs in linear time, so no pattern can hang it. The Python scan is the fallback for
a missing binary and for patterns ripgrep's syntax refuses (look-around, back-references); it
backtracks, so it runs in a child process that is killed at a deadline (tools/builtin/grep_python.py).

Both engines return only (file, line) hits; search.py reads context lines itself, so the
output format does not depend on which engine ran.

Both find what read_file reads (issue 41): a hit counts only in a file ``paicli.tools.file_text`` calls
text (ripgrep runs with ``--text`` so that a stray NUL does not hide a file, and its hits in
binary files are dropped), and a pattern beyond ASCII is also looked for in files in the legacy
encodings it can be written in (GBK, Big5, Shift-JIS, Windows-1252/1251), one ripgrep pass each,
kept only in files of that encoding.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

from paicli.tools.builtin.grep_python import EXCLUDED_DIRS, child_command, glob_accepts, walk_files
from paicli.tools.file_text import Sniffed, sniff_path

__all__ = ["Hits", "Query", "find_rg", "glob_accepts", "search", "search_python", "search_rg", "walk_files"]

RG_TIMEOUT_SECONDS = 30.0  # a runaway search must not hold the tool batch
PYTHON_TIMEOUT_SECONDS = 10.0  # the backtracking fallback: long enough for a big tree, short for a model
Engine = Literal["auto", "ripgrep", "python"]
# ripgrep's --encoding label -> the Python codec that writes the pattern, the sniffed encodings it reads
LEGACY_PASSES = {"gb18030": ("gb18030", frozenset({"gbk", "gb18030"})), "big5": ("big5", frozenset({"big5"})),
                 "shift_jis": ("cp932", frozenset({"cp932"})),
                 "windows-1252": ("cp1252", frozenset({"cp1252", "latin_1"})),
                 "windows-1251": ("cp1251", frozenset({"cp1251"}))}


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
    timed_out: float | None = None  # the deadline in seconds, when the engine was stopped at it


@functools.cache
def find_rg() -> str | None:
    """The ``rg`` binary: the wheel's copy beside our interpreter, else one on PATH.

    A venv, a pipx venv or ``pip install --user`` puts the wheel's ``rg`` in the scripts
    directory of the interpreter running paicli, which need not be on PATH (pipx exposes only
    paicli's own command), so ``shutil.which`` alone would miss it.
    """
    from paicli.tools.sandbox.own import program  # issue 34 item 5: never from a directory a command can write

    name = "rg.exe" if os.name == "nt" else "rg"
    folders = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable),
               sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user"))]
    return program(name, *(f for f in folders if f))


def search(base: Path, query: Query, engine: Engine = "auto",
           python_timeout: float = PYTHON_TIMEOUT_SECONDS) -> Hits:
    rg = find_rg() if engine != "python" else None
    if rg is None:
        if engine == "ripgrep":
            raise ValueError("未找到 ripgrep (rg)，请安装 ripgrep")
        return search_python(base, query, python_timeout)
    try:
        return search_rg(rg, base, query)
    except ValueError:
        if engine == "ripgrep":
            raise
        # Look-around or a back-reference: Python's syntax accepts them; the deadline still holds.
        return search_python(base, query, python_timeout)


def search_python(base: Path, query: Query, timeout: float = PYTHON_TIMEOUT_SECONDS) -> Hits:
    flags = 0 if query.case_sensitive else re.IGNORECASE
    try:
        re.compile(query.pattern if query.regex else re.escape(query.pattern), flags)
    except re.error as exc:
        raise ValueError(f"正则表达式无效: {exc}") from None
    job = {"base": str(base), "pattern": query.pattern, "regex": query.regex, "case_sensitive": query.case_sensitive,
           "glob": query.glob.pattern if query.glob is not None else None, "head_limit": query.head_limit}
    hits = Hits(engine="python")
    _run(child_command() + [json.dumps(job)], timeout, hits, query.max_results, _python_hit)
    return hits


def _python_hit(raw: str) -> tuple[Path, int] | None:
    path, number = json.loads(raw)
    return Path(path), number


def search_rg(rg: str, base: Path, query: Query) -> Hits:
    hits, sniffed = Hits(engine="ripgrep"), _SniffCache()
    accept = functools.partial(_rg_hit, base=base, glob=query.glob, sniffed=sniffed, readings=None)
    returncode, stderr = _run(_rg_command(rg, base, query), RG_TIMEOUT_SECONDS, hits, query.max_results, accept)
    if returncode == 2 and not hits.found:
        raise ValueError(f"ripgrep 失败: {stderr.strip()}")
    for label, readings in legacy_passes(query.pattern):
        more = Hits(engine="ripgrep")
        accept = functools.partial(_rg_hit, base=base, glob=query.glob, sniffed=sniffed, readings=readings)
        _run(_rg_command(rg, base, query, label), RG_TIMEOUT_SECONDS, more, query.max_results, accept)
        hits.found = sorted({*hits.found, *more.found}, key=lambda hit: (hit[0].parts, hit[1]))[:query.max_results]
        hits.partial = hits.partial or more.partial
    return hits


def legacy_passes(pattern: str) -> list[tuple[str, frozenset[str]]]:
    """The extra passes for a pattern beyond ASCII: each encoding that can write it."""
    if pattern.isascii():
        return []
    passes = []
    for label, (codec, readings) in LEGACY_PASSES.items():
        try:
            pattern.encode(codec)
        except UnicodeEncodeError:
            continue
        passes.append((label, readings))
    return passes


class _SniffCache(dict):
    """Each hit file sniffed once per search."""

    def __missing__(self, path: Path) -> Sniffed | None:
        try:
            self[path] = sniff_path(path)
        except OSError:
            self[path] = None
        return self[path]


def _rg_command(rg: str, base: Path, query: Query, encoding: str | None = None) -> list[str]:
    # --sort path: same order on every run (and as the fallback), at the cost of rg's parallel walk.
    # --hidden: the fallback searches dotfiles too; .git and .paicli are excluded below anyway.
    # --text: whether a file is binary is paicli.tools.file_text's call (_rg_hit), not one NUL byte's.
    cmd = [rg, "--json", "--no-messages", "--hidden", "--text", "--sort", "path", "--max-count", str(query.head_limit)]
    cmd += ["--encoding", encoding] if encoding else []
    cmd += [] if query.regex else ["--fixed-strings"]
    cmd += [] if query.case_sensitive else ["--ignore-case"]
    for name in sorted(EXCLUDED_DIRS):
        cmd += ["--glob", f"!{name}"]
    return cmd + ["-e", query.pattern, "--", str(base)]


def _rg_hit(raw: str, base: Path, glob: re.Pattern[str] | None, sniffed: _SniffCache,
            readings: frozenset[str] | None) -> tuple[Path, int] | None:
    """A match in a text file (of one of ``readings``, for a legacy pass), else None."""
    event = json.loads(raw)
    if event.get("type") != "match":
        return None
    data = event["data"]
    if "text" not in data["path"]:
        return None  # non-UTF-8 file names arrive base64-encoded; read_file could not open them
    path = Path(data["path"]["text"])
    if not glob_accepts(glob, path, base):
        return None
    found = sniffed[path]
    if found is None or found.binary or (readings is not None and found.encoding not in readings):
        return None
    return path, data["line_number"]


def _run(cmd: list[str], timeout: float, hits: Hits, max_results: int,
         parse: Callable[[str], tuple[Path, int] | None]) -> tuple[int | None, str]:
    """Run one engine process, collecting its hits until it ends, max_results, or the deadline.

    The process is killed in every case: at max_results it must not keep walking, and on
    KeyboardInterrupt (Ctrl-C while this runs in the main thread) it must not outlive us.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, encoding="utf-8", errors="replace")
    timed_out = threading.Event()
    timer = threading.Timer(timeout, lambda: (timed_out.set(), proc.kill()))
    timer.start()
    try:
        _collect(proc, hits, max_results, parse)
    finally:
        timer.cancel()
        proc.kill()
        stderr = proc.communicate()[1]
    if timed_out.is_set() and hits.partial is None:
        hits.partial = f"{hits.engine} 引擎超时（{timeout:g}秒）"
        hits.timed_out = timeout
    return proc.returncode, stderr


def _collect(proc: subprocess.Popen[str], hits: Hits, max_results: int,
             parse: Callable[[str], tuple[Path, int] | None]) -> None:
    assert proc.stdout is not None
    for raw in proc.stdout:
        hit = parse(raw)
        if hit is None:
            continue
        if len(hits.found) == max_results:
            hits.partial = f"已达到 max_results={max_results}"
            return
        hits.found.append(hit)
