"""Bounded reads for read_file: what a file is, and a window of its lines without loading it.

Memory stays at one chunk plus the requested lines whatever the file's size: lines are split
as ``tools.common.split_lines`` splits them (``\\r\\n``, ``\\r``, ``\\n``), streamed in chunks,
and a line longer than MAX_LINE_BYTES keeps only its start (a gigabyte-long "line" of a log or
a minified bundle would otherwise be read whole).
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

import filetype

SNIFF_BYTES = 8192  # what git and ripgrep look at to call a file binary
MAX_UNDECODABLE_SHARE = 0.1  # a stray Latin-1 byte is text; compressed or encrypted data is not
CHUNK_BYTES = 1024 * 1024
MAX_LINE_BYTES = 16 * 1024  # per shown line; the rest is replaced by a note


def binary_type(path: Path, head: bytes) -> str | None:
    """The file's MIME type when its first bytes are not text, else None."""
    undecodable = head.decode("utf-8", errors="replace").count("\ufffd")  # may count a char cut at the end
    if b"\0" not in head and undecodable <= max(1, len(head) * MAX_UNDECODABLE_SHARE):
        return None
    # Magic numbers first (a .dat may be a PNG), the extension second.
    return filetype.guess_mime(head) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def count_lines(fh: BinaryIO, chunk_bytes: int = CHUNK_BYTES) -> int:
    """``len(split_lines(text))`` for the whole file, one chunk at a time."""
    total, last = 0, b""
    for chunk in _chunks(fh, chunk_bytes):
        total += _breaks(chunk)
        last = chunk[-1:] or last
    return total + (1 if last and last not in b"\r\n" else 0)


def iter_lines(fh: BinaryIO, start: int = 1, chunk_bytes: int = CHUNK_BYTES) -> Iterator[str]:
    """Lines from number ``start`` on, each cut to MAX_LINE_BYTES with a note naming its full size.

    Chunks that end before ``start`` are only counted, not split: reaching the end of a file of
    short lines costs C-speed counting, not a Python step per line."""
    number, current, size = 1, bytearray(), 0  # the line being read, its kept bytes, its full size
    for chunk in _chunks(fh, chunk_bytes):
        breaks = _breaks(chunk)
        if number + breaks < start:
            number += breaks
            continue
        for piece in chunk.splitlines(keepends=True):  # bytes split on \r\n, \r, \n only, as split_lines
            body = piece.rstrip(b"\r\n")
            if number >= start:
                current += body[: max(0, MAX_LINE_BYTES - len(current))]
                size += len(body)
            if len(body) < len(piece):
                if number >= start:
                    yield _text(current, size)
                number, current, size = number + 1, bytearray(), 0
    if size and number >= start:
        yield _text(current, size)


def pick_lines(path: Path, wanted: Iterable[int]) -> dict[int, str]:
    """The text of the wanted line numbers (cut as iter_lines cuts); numbers past the end are absent."""
    numbers = set(wanted)
    if not numbers:
        return {}
    first, last = min(numbers), max(numbers)
    picked: dict[int, str] = {}
    with path.open("rb") as fh:
        for number, line in enumerate(iter_lines(fh, first), first):
            if number in numbers:
                picked[number] = line
            if number >= last:
                break
    return picked


def _chunks(fh: BinaryIO, chunk_bytes: int) -> Iterator[bytes]:
    """The file's bytes; a \r\n split across two chunks loses its \n, so it stays one break."""
    previous_cr = False
    while chunk := fh.read(chunk_bytes):
        if previous_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        previous_cr = chunk.endswith(b"\r")
        yield chunk


def _breaks(chunk: bytes) -> int:
    if b"\r" not in chunk:  # the common case; `in` is a memchr, count is slower
        return chunk.count(b"\n")
    return chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")


def _text(kept: bytes, size: int) -> str:
    text = bytes(kept).decode("utf-8", errors="replace")
    return text if size <= len(kept) else f"{text}…(该行共 {size} 字节，仅显示前 {MAX_LINE_BYTES} 字节)"


def window(path: Path, start: int, count: int) -> tuple[list[str], int]:
    """Lines start..start+count-1 (1-based) and the file's line count."""
    with path.open("rb") as fh:
        total = count_lines(fh)
        lines: list[str] = []
        if start > total:
            return lines, total
        fh.seek(0)
        for line in iter_lines(fh, start):
            lines.append(line)
            if len(lines) == count:
                break
    return lines, total
