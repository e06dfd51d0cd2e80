"""What write_file and edit_file would write, worked out before anything is written (issue 41).

``plan_write`` and ``plan_edit`` return the bytes to write with the success text, or the failure
text the model reads; the tools (``tools/builtin/files.py``) write the plan, and the approval
question shows its change first (``change_preview``), so a person sees the diff against what is
there before saying yes. An existing text file keeps its encoding, BOM and CRLF breaks
(``paicli.tools.file_text``); a new file is UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paicli.tools.base import PolicyError, failed
from paicli.tools.common import bool_arg, str_arg
from paicli.tools.diffs import change
from paicli.tools.file_text import UTF8, Sniffed, TextFile, Unencodable, encode, read_text_file, round_trips
from paicli.tools.policy.guards import PathGuard

MAX_WRITE_BYTES = 5 * 1024 * 1024  # reference (t): write_file / edit_file 5 MB cap
MAX_LISTED_MATCH_LINES = 10  # enough lines for the model to locate ambiguous matches


@dataclass(frozen=True)
class Planned:
    path: Path
    data: bytes  # what will be written
    text: str  # the same, as text
    before: tuple[bytes, TextFile] | None  # the text file that was there
    result: str  # the success text the model reads
    existed: bool = True  # False: a new file

    def change(self) -> dict[str, Any]:
        data, old = self.before if self.before else (None, None)
        return change(old.text if old else None, self.text, data, self.data, existed=self.existed)


def change_preview(preview: str | None, args: dict[str, Any], root: Path) -> dict[str, Any] | None:
    """The change a write_file or edit_file call (its ``preview`` fact: "write", "edit") would make
    (``paicli.tools.diffs.change``), for its approval question; None for another tool or a call
    that would fail."""
    plan = {"write": plan_write, "edit": plan_edit}.get(preview or "")
    if plan is None or not isinstance(args, dict):
        return None
    try:
        planned = plan(args, root)
    except (PolicyError, OSError, ValueError):
        return None
    return planned.change() if isinstance(planned, Planned) else None


def plan_write(args: dict[str, Any], root: Path) -> Planned | str:
    raw_path = str_arg(args, "path")
    path = PathGuard(root).resolve_write(raw_path)
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
    return Planned(path, data, text, found, f"文件已写入: {raw_path}{_kept_note(before, sniffed, text)}",
                   existed=path.exists())


def plan_edit(args: dict[str, Any], root: Path) -> Planned | str:
    raw_path = str_arg(args, "path")
    path = PathGuard(root).resolve_write(raw_path)
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
    suffix = f"（替换 {len(starts)} 处）" if len(starts) > 1 else ""
    return Planned(path, data, updated, (raw, found),
                   f"文件已编辑: {raw_path}{suffix}{_kept_note(found, found.sniffed, updated)}")


def existing_text(path: Path) -> tuple[bytes, TextFile] | None:
    """An existing text file's bytes and text, or None (no file, a binary one, one over the
    5 MB cap, unreadable): the new content is then written as UTF-8."""
    try:
        data = path.read_bytes() if path.is_file() and path.stat().st_size <= MAX_WRITE_BYTES else None
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
