"""File tools: read_file, write_file, edit_file, list_dir (reference t).

Each is a sync ``(args, ctx) -> str`` run in a worker thread. Every path goes through
PathGuard first. Result texts are the reference's, byte for byte, because the model's
prompts and the tests key on them. read_file is bounded beyond the reference: a binary file
answers with its type and size, and no read loads a huge file whole (tools/builtin/reading.py).
Text in any encoding is text (issue 41, ``tools.file_text``): a result names an encoding other
than UTF-8, and edit_file and write_file keep a file's encoding, byte order mark and CRLF line
breaks, or refuse with one line saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.base import PolicyError, ToolContext, failed
from tools.common import bool_arg, clamp, int_arg, str_arg
from tools.file_text import UTF8, Sniffed, TextFile, Unencodable, encode, read_text_file, round_trips, sniff_path
from tools.policy.guards import PathGuard
from tools.builtin.reading import window

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
        return _read(path, offset, limit)
    except OSError as exc:
        return failed(f"读取文件失败: {exc}")


def _read(path: Path, offset: int | None, limit: int | None) -> str:
    size = path.stat().st_size
    if offset is None and limit is None and size <= MAX_WHOLE_READ_BYTES:
        found = read_text_file(path.read_bytes(), path)
        if isinstance(found, Sniffed):
            return _binary(path, found, size)
        return f"文件内容{encoding_note(found.sniffed, '（编码: {}）')}:\n{found.text}"
    sniffed = sniff_path(path)
    if sniffed.binary:
        return _binary(path, sniffed, size)
    if offset is not None or limit is not None:
        return _ranged(path, offset, limit, sniffed)
    note = (f"文件过大（{size} 字节，超过 {MAX_WHOLE_READ_BYTES // (1024 * 1024)}MB），未返回全文；"
            f"以下为前 {DEFAULT_READ_LINES} 行，请用 offset/limit 分段读取\n")
    return note + _ranged(path, 1, DEFAULT_READ_LINES, sniffed)


def _binary(path: Path, sniffed: Sniffed, size: int) -> str:
    return failed(f"读取文件失败: {path.name} 是二进制文件（类型: {sniffed.kind}，大小: {size} 字节），不返回原始内容")


def encoding_note(sniffed: Sniffed, form: str) -> str:
    """The encoding in ``form`` when it is not plain UTF-8; "" for plain UTF-8."""
    if sniffed.plain_utf8:
        return ""
    return form.format("UTF-8，含无法按 UTF-8 解码的字节（显示为 �）" if sniffed.lossy else sniffed.label)


def _ranged(path: Path, offset: int | None, limit: int | None, sniffed: Sniffed) -> str:
    start = max(1, offset or 1)
    lines, total = window(path, start, clamp(limit or DEFAULT_READ_LINES, 1, MAX_READ_LINES), sniffed)
    if start > total:
        return f"文件内容: {path.name} 共 {total} 行，offset 超出范围"
    end = start + len(lines) - 1
    body = "".join(f"{n:5d} | {line}\n" for n, line in enumerate(lines, start))
    more = f"...(已截断，可用 offset={end + 1} 继续读取)" if end < total else ""
    return f"文件内容: {path.name} (lines {start}-{end} of {total}{encoding_note(sniffed, ', 编码 {}')})\n{body}{more}"


def existing_text(path: Path) -> tuple[bytes, TextFile] | None:
    """An existing text file's bytes and text, or None (no file, a binary one, unreadable)."""
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError:
        return None
    found = read_text_file(data, path) if data is not None else None
    return (data, found) if isinstance(found, TextFile) else None


def kept_format(text: str, before: TextFile | None) -> tuple[str, Sniffed]:
    """``text`` in the form the file had: CRLF breaks when all of its breaks were (and ``text``
    has none of its own), and its encoding, unless it was UTF-8 with stray bytes."""
    if before is None:
        return text, UTF8
    if before.newline == "\r\n" and "\r" not in text:
        text = text.replace("\n", "\r\n")
    return text, UTF8 if before.sniffed.lossy else before.sniffed


def _kept_note(before: TextFile | None, sniffed: Sniffed, text: str) -> str:
    kept = [] if sniffed.plain_utf8 else [f"{sniffed.label} 编码"]
    kept += ["CRLF 换行"] if before is not None and before.newline == "\r\n" and "\r\n" in text else []
    return f"（保留 {'、'.join(kept)}）" if kept else ""


def _encoded(text: str, sniffed: Sniffed, arg: str, value: str) -> bytes:
    """``text`` as the file's bytes; ValueError with the one-line reason when it cannot be."""
    if sniffed.encoding == "utf_8" and not sniffed.bom:
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(unencodable(arg, value)) from None
    try:
        return encode(text, sniffed)
    except Unencodable as exc:
        raise ValueError(f"{exc}（文件原为 {sniffed.label} 编码，写入时保留）") from None


def write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    raw_path = str_arg(args, "path")
    path = PathGuard(ctx.root).resolve_write(raw_path)
    content = str_arg(args, "content")
    if content is None:
        return failed("写入文件失败: 缺少 content 参数")
    found = existing_text(path)
    before = found[1] if found else None
    text, sniffed = kept_format(content, before)
    try:
        data = _encoded(text, sniffed, "content", content)
    except ValueError as exc:
        return failed(f"写入文件失败: {exc}，文件未写入: {raw_path}")
    if len(data) > MAX_WRITE_BYTES:
        raise PolicyError(f"写入内容 {len(data)} 字节超过 5MB 上限")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        return failed(f"写入文件失败: {exc}")
    return f"文件已写入: {raw_path}{_kept_note(before, sniffed, text)}"


def edit_file(args: dict[str, Any], ctx: ToolContext) -> str:
    raw_path = str_arg(args, "path")
    path = PathGuard(ctx.root).resolve_write(raw_path)
    old, new = str_arg(args, "old_text"), str_arg(args, "new_text")
    if not old or new is None:
        return failed("old_text 必须非空，new_text 必须提供")
    if not path.is_file():
        return failed(f"目标不是已有的普通文件: {raw_path}")
    # Bytes in, bytes out: keeps the encoding and CRLF endings, no platform newline translation.
    raw = path.read_bytes()
    found = read_text_file(raw, path)
    problem = _unwritable(raw, found, raw_path)
    if problem:
        return failed(problem)
    assert isinstance(found, TextFile)
    crlf = found.newline == "\r\n" and "\r" not in old + new  # the model's text has \n breaks
    text = found.text.replace("\r\n", "\n") if crlf else found.text
    starts = _match_starts(text, old)
    replace_all = bool_arg(args, "replace_all", False)
    problem = _match_problem(text, starts, replace_all, raw_path)
    if problem:
        return failed(problem)
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if updated == text:
        return f"替换前后内容相同，文件未修改: {raw_path}"
    updated = updated.replace("\n", "\r\n") if crlf else updated
    try:
        data = _encoded(updated, found.sniffed, "new_text", new)
    except ValueError as exc:
        return failed(f"编辑文件失败: {exc}，文件未修改: {raw_path}")
    if len(data) > MAX_WRITE_BYTES:
        raise PolicyError(f"编辑后文件 {len(data)} 字节超过 5MB 上限")
    path.write_bytes(data)
    suffix = f"（替换 {len(starts)} 处）" if len(starts) > 1 else ""
    return f"文件已编辑: {raw_path}{suffix}{_kept_note(found, found.sniffed, updated)}"


def _unwritable(raw: bytes, found: TextFile | Sniffed, raw_path: str) -> str | None:
    """Why the file cannot be edited as text without damage, or None."""
    if isinstance(found, Sniffed):
        return f"编辑文件失败: {raw_path} 是二进制文件（类型: {found.kind}），文件未修改"
    if round_trips(raw, found):
        return None
    if found.sniffed.encoding == "utf_8":  # a replacement character written back would corrupt it
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"编辑文件失败: {raw_path} 不是有效的 UTF-8 文本（{undecodable(raw, exc)}），文件未修改"
    return f"编辑文件失败: {raw_path} 按 {found.sniffed.label} 编码读出后无法原样写回（原文件有该编码之外的字节），文件未修改"


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
