"""File tools: read_file, write_file, edit_file, list_dir (reference t).

Each is a sync ``(args, ctx) -> str`` run in a worker thread. Every path goes through
PathGuard first. Result texts are the reference's, byte for byte, because the model's
prompts and the tests key on them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.base import PolicyError, ToolContext
from tools.common import bool_arg, clamp, int_arg, read_text, split_lines, str_arg
from tools.guards import PathGuard

MAX_WRITE_BYTES = 5 * 1024 * 1024  # reference (t): write_file / edit_file 5 MB cap
DEFAULT_READ_LINES = 200  # reference (t): ranged read_file default limit
MAX_READ_LINES = 2000  # reference (t): ranged read_file maximum limit
MAX_LISTED_MATCH_LINES = 10  # enough lines for the model to locate ambiguous matches


def read_file(args: dict[str, Any], ctx: ToolContext) -> str:
    path = PathGuard(ctx.root).resolve(str_arg(args, "path"))
    if not path.exists():
        return f"读取文件失败: 文件不存在: {str_arg(args, 'path')}"
    if not path.is_file():
        return "读取文件失败: 不是普通文件"
    try:
        text = read_text(path)
    except OSError as exc:
        return f"读取文件失败: {exc}"
    offset, limit = int_arg(args, "offset"), int_arg(args, "limit")
    if offset is None and limit is None:
        return f"文件内容:\n{text}"
    return _ranged(path.name, split_lines(text), offset, limit)


def _ranged(name: str, lines: list[str], offset: int | None, limit: int | None) -> str:
    total = len(lines)
    start = max(1, offset or 1)
    count = clamp(limit or DEFAULT_READ_LINES, 1, MAX_READ_LINES)
    if start > total:
        return f"文件内容: {name} 共 {total} 行，offset 超出范围"
    end = min(total, start + count - 1)
    body = "".join(f"{n:5d} | {lines[n - 1]}\n" for n in range(start, end + 1))
    more = f"...(已截断，可用 offset={end + 1} 继续读取)" if end < total else ""
    return f"文件内容: {name} (lines {start}-{end} of {total})\n{body}{more}"


def write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    raw_path = str_arg(args, "path")
    path = PathGuard(ctx.root).resolve_write(raw_path)
    content = str_arg(args, "content")
    if content is None:
        return "写入文件失败: 缺少 content 参数"
    data = content.encode("utf-8")
    if len(data) > MAX_WRITE_BYTES:
        raise PolicyError(f"写入内容 {len(data)} 字节超过 5MB 上限")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        return f"写入文件失败: {exc}"
    return f"文件已写入: {raw_path}"


def edit_file(args: dict[str, Any], ctx: ToolContext) -> str:
    raw_path = str_arg(args, "path")
    path = PathGuard(ctx.root).resolve_write(raw_path)
    old, new = str_arg(args, "old_text"), str_arg(args, "new_text")
    if not old or new is None:
        return "old_text 必须非空，new_text 必须提供"
    if not path.is_file():
        return f"目标不是已有的普通文件: {raw_path}"
    # Bytes in, bytes out: keeps CRLF endings and avoids platform newline translation.
    text = path.read_bytes().decode("utf-8")
    starts = _match_starts(text, old)
    replace_all = bool_arg(args, "replace_all", False)
    problem = _match_problem(text, starts, replace_all, raw_path)
    if problem:
        return problem
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if updated == text:
        return f"替换前后内容相同，文件未修改: {raw_path}"
    data = updated.encode("utf-8")
    if len(data) > MAX_WRITE_BYTES:
        raise PolicyError(f"编辑后文件 {len(data)} 字节超过 5MB 上限")
    path.write_bytes(data)
    suffix = f"（替换 {len(starts)} 处）" if len(starts) > 1 else ""
    return f"文件已编辑: {raw_path}{suffix}"


def _match_starts(text: str, needle: str) -> list[int]:
    """Start offsets of non-overlapping matches, the same ones str.replace would touch."""
    starts, index = [], text.find(needle)
    while index != -1:
        starts.append(index)
        index = text.find(needle, index + len(needle))
    return starts


def _match_problem(text: str, starts: list[int], replace_all: bool, raw_path: str) -> str | None:
    if not starts:
        return f"old_text 未在文件中找到: {raw_path}（请先用 read_file 确认原文，空白和缩进须完全一致）"
    if len(starts) == 1 or replace_all:
        return None
    numbers = [text.count("\n", 0, s) + 1 for s in starts]
    shown = ", ".join(str(n) for n in numbers[:MAX_LISTED_MATCH_LINES])
    if len(numbers) > MAX_LISTED_MATCH_LINES:
        shown += ", …"
    return (
        f"old_text 匹配到 {len(starts)} 处（第 {shown} 行），"
        "请提供更长的上下文使其唯一，或设置 replace_all=true"
    )


def list_dir(args: dict[str, Any], ctx: ToolContext) -> str:
    path = PathGuard(ctx.root).resolve(str_arg(args, "path"))
    try:
        entries = [_entry_line(p) for p in path.iterdir()]
    except OSError:
        entries = []
    if not entries:
        return "目录为空或不存在"
    return "目录内容:\n" + "\n".join(entries)


def _entry_line(path: Path) -> str:
    return f"[D] {path.name}" if path.is_dir() else f"[F] {path.name}"
