"""File tools: read_file, write_file, edit_file, list_dir (reference t).

Each is a sync ``(args, ctx) -> str`` run in a worker thread. Every path goes through
PathGuard first. Result texts are the reference's, byte for byte, because the model's
prompts and the tests key on them. read_file is bounded beyond the reference: a binary file
answers with its type and size, and no read loads a huge file whole (tools/builtin/reading.py).
Text in any encoding is text (issue 41, ``paicli.tools.file_text``): a result names an encoding other
than UTF-8, and edit_file and write_file keep a file's encoding, byte order mark and CRLF line
breaks, or refuse with one line saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paicli.tools.base import ToolContext, ToolText, failed
from paicli.tools.common import clamp, int_arg, str_arg
from paicli.tools.file_text import Sniffed, read_text_file, sniff_path
from paicli.tools.policy.guards import PathGuard
from paicli.tools.builtin.image_read import read_image
from paicli.tools.builtin.reading import window
from paicli.tools.builtin.writing import Planned, plan_edit, plan_write

DEFAULT_READ_LINES = 200  # reference (t): ranged read_file default limit
MAX_READ_LINES = 2000  # reference (t): ranged read_file maximum limit
# Beyond the reference (no cap there): a larger file is never read whole; the first window instead.
MAX_WHOLE_READ_BYTES = 5 * 1024 * 1024
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


def write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    return _apply(plan_write(args, ctx.root), "写入文件失败")


def edit_file(args: dict[str, Any], ctx: ToolContext) -> str:
    return _apply(plan_edit(args, ctx.root), "编辑文件失败")


def _apply(planned: Planned | str, failure: str) -> str:
    """Write what was planned; the result carries the change (``paicli.tools.diffs``) for the preview
    under the call and the audit log, never for the model."""
    if isinstance(planned, str):
        return planned
    try:
        planned.path.parent.mkdir(parents=True, exist_ok=True)
        planned.path.write_bytes(planned.data)
    except OSError as exc:
        return failed(f"{failure}: {exc}")
    return ToolText(planned.result, {"change": planned.change()})


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
