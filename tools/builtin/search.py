"""Search tools: glob_files and grep_code (reference t)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from paicli.tools.base import ToolContext, failed
from paicli.tools.common import bool_arg, clamp, display_path, int_arg, required_str, str_arg
from paicli.tools.builtin.grep_engines import PYTHON_TIMEOUT_SECONDS, Engine, Hits, Query, glob_accepts, search, walk_files
from paicli.tools.policy.guards import PathGuard
from paicli.tools.builtin.reading import pick_lines
from paicli.tools.file_text import sniff_path

SUGGESTED_READS = 3  # reference (t): up to 3 distinct files
SUGGESTED_BACKOFF, SUGGESTED_LIMIT = 20, 80  # reference (t): offset=max(1,line-20), limit=80
MAX_SHOWN_LINE_CHARS = 500  # one minified line must not eat the whole max_chars budget


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Glob → regex: `*` and `?` stay within one path segment, `**/` spans zero or more."""
    if "/" not in pattern and not pattern.startswith("**"):
        pattern = "**/" + pattern  # reference (t): a bare name matches at any depth
    return re.compile(_translate(pattern))


def _translate(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        piece, i = _translate_at(pattern, i)
        out.append(piece)
    return "".join(out)


def _translate_at(p: str, i: int) -> tuple[str, int]:
    if p.startswith("**/", i):
        return "(?:.*/)?", i + 3
    if p.startswith("**", i):
        return ".*", i + 2
    if p[i] == "*":
        return "[^/]*", i + 1
    if p[i] == "?":
        return "[^/]", i + 1
    close = p.find("}" if p[i] == "{" else "]", i + 1)
    if p[i] == "{" and close != -1:  # {ts,tsx}: models use brace alternatives often
        return "(?:" + "|".join(_translate(alt) for alt in p[i + 1 : close].split(",")) + ")", close + 1
    if p[i] == "[" and close != -1:
        body = p[i + 1 : close]
        body = "^" + body[1:] if body.startswith("!") else body
        return "[" + body.replace("\\", "\\\\") + "]", close + 1
    return re.escape(p[i]), i + 1


def glob_files(args: dict[str, Any], ctx: ToolContext) -> str:
    pattern = required_str(args, "pattern")
    base = PathGuard(ctx.root).resolve(str_arg(args, "path", "."))
    limit = clamp(int_arg(args, "max_results", 50), 1, 200)  # reference (t)
    matcher = compile_glob(pattern)
    found: list[str] = []
    for path in walk_files(base):
        if glob_accepts(matcher, path, base):
            found.append(display_path(path, ctx.root))
            if len(found) == limit:
                break
    if not found:
        return f"未找到匹配文件: {pattern}"
    capped = f"（已达到上限 {limit}）" if len(found) == limit else ""
    listing = "\n".join(f"{n}. {rel}" for n, rel in enumerate(found, 1))
    return f"匹配文件 {len(found)} 个{capped}:\n{listing}"


def grep_code(args: dict[str, Any], ctx: ToolContext, *, engine: Engine = "auto",
              python_timeout: float = PYTHON_TIMEOUT_SECONDS) -> str:
    """``engine`` and ``python_timeout`` are for tests: the model cannot choose them."""
    pattern = required_str(args, "pattern")
    base = PathGuard(ctx.root).resolve(str_arg(args, "path", "."))
    glob = str_arg(args, "glob")
    query = Query(
        pattern=pattern,
        regex=bool_arg(args, "regex", False),
        case_sensitive=bool_arg(args, "case_sensitive", True),
        glob=compile_glob(glob) if glob and glob.strip() else None,
        head_limit=clamp(int_arg(args, "head_limit", 20), 1, 50),  # reference (t)
        max_results=clamp(int_arg(args, "max_results", 50), 1, 200),  # reference (t)
    )
    hits = search(base, query, engine, python_timeout)
    if not hits.found:
        if hits.timed_out:
            return failed(_timed_out(hits, query))
        return f"未找到匹配内容: {pattern}"
    context = clamp(int_arg(args, "context_lines", 0), 0, 5)  # reference (t)
    max_chars = clamp(int_arg(args, "max_chars", 24_000), 1_000, 60_000)  # reference (t)
    return render(hits, ctx.root, context, max_chars)


def _timed_out(hits: Hits, query: Query) -> str:
    # Names the ways out for the model.
    hint = "正则可能存在灾难性回溯（如 (a+)+ 这类嵌套重复）：请简化 pattern，或改用 regex=false 按字面搜索，" if query.regex else ""
    return (
        f"工具执行超时: grep_code 搜索 {query.pattern!r} 超过 {hits.timed_out:g} 秒未完成（engine={hits.engine}），已停止。"
        f"{hint}或用 path/glob 缩小搜索范围后重试"
    )


def render(hits: Hits, root: Path, context: int, max_chars: int) -> str:
    partial = f"（partial: {hits.partial}）" if hits.partial else ""
    text = f"匹配结果 {len(hits.found)} 条 (engine={hits.engine}){partial}:"
    cache: dict[Path, dict[int, str]] = {}
    shown: list[tuple[Path, int]] = []
    for number, (path, line) in enumerate(hits.found, 1):
        if path not in cache:
            cache[path] = _shown_lines(path, hits.found, context)
        block = _match_block(number, path, line, root, context, cache[path])
        if len(text) + 1 + len(block) > max_chars:
            text += f"\npartial: true（已达到 max_chars={max_chars}，请缩小 path/glob/pattern 或提高 offset 后 read_file）"
            break
        text += "\n" + block
        shown.append((path, line))
    if hits.partial:
        text += f"\npartial: true（{hits.partial}，请缩小 path/glob/pattern 继续搜索）"
    return text + _suggested_reads(shown or hits.found, root)


def _shown_lines(path: Path, found: list[tuple[Path, int]], context: int) -> dict[int, str]:
    """Every line the blocks of this file show, in one streamed pass: a hit in a huge file
    must not load the whole file."""
    wanted = {n for hit_path, line in found if hit_path == path for n in range(max(1, line - context), line + context + 1)}
    try:
        return pick_lines(path, wanted, sniff_path(path))  # in the file's encoding, as read_file shows it
    except OSError:
        return {}


def _match_block(number: int, path: Path, line: int, root: Path, context: int, lines: dict[int, str]) -> str:
    rows = [f"{number}. {display_path(path, root)}:{line}"]
    for n in range(max(1, line - context), line + context + 1):
        if n in lines:
            mark = ">" if n == line else " "
            rows.append(f"   {mark}{n:5d} | {_clip(lines[n])}")
    return "\n".join(rows)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SHOWN_LINE_CHARS else text[:MAX_SHOWN_LINE_CHARS] + "…"


def _suggested_reads(found: list[tuple[Path, int]], root: Path) -> str:
    first_line: dict[Path, int] = {}
    for path, line in found:
        first_line.setdefault(path, line)
    rows = []
    for path, line in list(first_line.items())[:SUGGESTED_READS]:
        call = {"path": display_path(path, root), "offset": max(1, line - SUGGESTED_BACKOFF), "limit": SUGGESTED_LIMIT}
        rows.append("- read_file " + json.dumps(call, ensure_ascii=False, separators=(",", ":")))
    return "\nsuggested_reads:\n" + "\n".join(rows)
