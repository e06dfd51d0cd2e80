"""File tools: read_file, write_file, edit_file, list_dir (reference t).

Each is a sync ``(args, ctx) -> str`` run in a worker thread. Every path goes through
PathGuard first. Result texts are the reference's, byte for byte, because the model's
prompts and the tests key on them. read_file is bounded beyond the reference: a binary file
answers with its type and size, and no read loads a huge file whole (tools/builtin/reading.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.base import PolicyError, ToolContext, failed
from tools.common import bool_arg, clamp, int_arg, read_text, str_arg
from tools.policy.guards import PathGuard
from tools.builtin.image_read import read_image
from tools.builtin.reading import SNIFF_BYTES, binary_type, window

MAX_WRITE_BYTES = 5 * 1024 * 1024  # reference (t): write_file / edit_file 5 MB cap
DEFAULT_READ_LINES = 200  # reference (t): ranged read_file default limit
MAX_READ_LINES = 2000  # reference (t): ranged read_file maximum limit
# Beyond the reference (no cap there): a larger file is never read whole; the first window instead.
MAX_WHOLE_READ_BYTES = 5 * 1024 * 1024
MAX_LISTED_MATCH_LINES = 10  # enough lines for the model to locate ambiguous matches
EMPTY_OR_MISSING = "目录为空或不存在"  # reference (t): list_dir says the same for both


def read_file(args: dict[str, Any], ctx: ToolContext) -> str:
    path = PathGuard(ctx.root).resolve(str_arg(args, "path"))
    if not path.exists():
        return failed(f"读取文件失败: 文件不存在: {str_arg(args, 'path')}")
    if not path.is_file():
        return failed("读取文件失败: 不是普通文件")
    offset, limit = int_arg(args, "offset"), int_arg(args, "limit")
    try:
        if (image := read_image(path, str_arg(args, "path"), ctx)) is not None:  # issue 39
            return image
        return _read(path, offset, limit)
    except OSError as exc:
        return failed(f"读取文件失败: {exc}")


def _read(path: Path, offset: int | None, limit: int | None) -> str:
    size = path.stat().st_size
    with path.open("rb") as fh:
        kind = binary_type(path, fh.read(SNIFF_BYTES))
    if kind:
        return failed(f"读取文件失败: {path.name} 是二进制文件（类型: {kind}，大小: {size} 字节），不返回原始内容")
    if offset is not None or limit is not None:
        return _ranged(path, offset, limit)
    if size <= MAX_WHOLE_READ_BYTES:
        return f"文件内容:\n{read_text(path)}"
    note = (f"文件过大（{size} 字节，超过 {MAX_WHOLE_READ_BYTES // (1024 * 1024)}MB），未返回全文；"
            f"以下为前 {DEFAULT_READ_LINES} 行，请用 offset/limit 分段读取\n")
    return note + _ranged(path, 1, DEFAULT_READ_LINES)


def _ranged(path: Path, offset: int | None, limit: int | None) -> str:
    start = max(1, offset or 1)
    lines, total = window(path, start, clamp(limit or DEFAULT_READ_LINES, 1, MAX_READ_LINES))
    if start > total:
        return f"文件内容: {path.name} 共 {total} 行，offset 超出范围"
    end = start + len(lines) - 1
    body = "".join(f"{n:5d} | {line}\n" for n, line in enumerate(lines, start))
    more = f"...(已截断，可用 offset={end + 1} 继续读取)" if end < total else ""
    return f"文件内容: {path.name} (lines {start}-{end} of {total})\n{body}{more}"


def write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    raw_path = str_arg(args, "path")
    path = PathGuard(ctx.root).resolve_write(raw_path)
    content = str_arg(args, "content")
    if content is None:
        return failed("写入文件失败: 缺少 content 参数")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        return failed(f"写入文件失败: {unencodable('content', content)}，文件未写入: {raw_path}")
    if len(data) > MAX_WRITE_BYTES:
        raise PolicyError(f"写入内容 {len(data)} 字节超过 5MB 上限")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        return failed(f"写入文件失败: {exc}")
    return f"文件已写入: {raw_path}"


def edit_file(args: dict[str, Any], ctx: ToolContext) -> str:
    raw_path = str_arg(args, "path")
    path = PathGuard(ctx.root).resolve_write(raw_path)
    old, new = str_arg(args, "old_text"), str_arg(args, "new_text")
    if not old or new is None:
        return failed("old_text 必须非空，new_text 必须提供")
    if not path.is_file():
        return failed(f"目标不是已有的普通文件: {raw_path}")
    # Bytes in, bytes out: keeps CRLF endings and avoids platform newline translation.
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:  # a replacement character written back would corrupt it
        return failed(f"编辑文件失败: {raw_path} 不是有效的 UTF-8 文本（{undecodable(raw, exc)}），文件未修改")
    starts = _match_starts(text, old)
    replace_all = bool_arg(args, "replace_all", False)
    problem = _match_problem(text, starts, replace_all, raw_path)
    if problem:
        return failed(problem)
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if updated == text:
        return f"替换前后内容相同，文件未修改: {raw_path}"
    try:
        data = updated.encode("utf-8")
    except UnicodeEncodeError:
        return failed(f"编辑文件失败: {unencodable('new_text', new)}，文件未修改: {raw_path}")
    if len(data) > MAX_WRITE_BYTES:
        raise PolicyError(f"编辑后文件 {len(data)} 字节超过 5MB 上限")
    path.write_bytes(data)
    suffix = f"（替换 {len(starts)} 处）" if len(starts) > 1 else ""
    return f"文件已编辑: {raw_path}{suffix}"


def undecodable(data: bytes, exc: UnicodeDecodeError) -> str:
    """Where a file stops being UTF-8, on one line: line, byte offset, the bytes and why."""
    line = data.count(b"\n", 0, exc.start) + 1
    shown = data[exc.start:min(exc.end, exc.start + 4)].hex(" ")
    return f"第 {line} 行、第 {exc.start + 1} 字节起的 {shown} 无法按 UTF-8 解码: {exc.reason}"


def unencodable(name: str, text: str) -> str:
    """A model-written argument holding characters UTF-8 cannot store (lone surrogates)."""
    start = next((i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF), None)
    if start is None:
        return f"参数 {name} 含有无法编码为 UTF-8 的字符"
    return f"参数 {name} 第 {start + 1} 个字符 U+{ord(text[start]):04X} 无法编码为 UTF-8（孤立的代理字符）"


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
    except OSError:  # missing, not a directory, unreadable: the reference's one text, but failed
        return failed(EMPTY_OR_MISSING)
    if not entries:
        return EMPTY_OR_MISSING
    return "目录内容:\n" + "\n".join(entries)


def _entry_line(path: Path) -> str:
    return f"[D] {path.name}" if path.is_dir() else f"[F] {path.name}"
