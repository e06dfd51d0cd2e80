"""Bounded reads for read_file: what a file is, and a window of its lines without loading it.

Memory stays at one chunk plus the requested lines whatever the file's size: lines are split
as ``paicli.tools.common.split_lines`` splits them (``\\r\\n``, ``\\r``, ``\\n``), streamed in chunks,
and a line longer than MAX_LINE_BYTES keeps only its start (a gigabyte-long "line" of a log or
a minified bundle would otherwise be read whole). Lines are decoded in the file's own encoding
(``paicli.tools.file_text``); a UTF-16 or UTF-32 file, whose line breaks are not single bytes, is read
through a text decoder instead, with the same bounds.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from paicli.tools.file_text import UTF8, Sniffed

CHUNK_BYTES = 1024 * 1024
MAX_LINE_BYTES = 16 * 1024  # per shown line; the rest is replaced by a note


def count_lines(fh: BinaryIO, chunk_bytes: int = CHUNK_BYTES, encoding: Sniffed = UTF8) -> int:
    """``len(split_lines(text))`` for the whole file, one chunk at a time."""
    if not encoding.byte_lines:
        return sum(1 for _ in _decoded_lines(fh, 1, encoding))
    total, last = 0, b""
    for chunk in _chunks(fh, chunk_bytes):
        total += _breaks(chunk)
        last = chunk[-1:] or last
    return total + (1 if last and last not in b"\r\n" else 0)


def iter_lines(fh: BinaryIO, start: int = 1, chunk_bytes: int = CHUNK_BYTES,
               encoding: Sniffed = UTF8) -> Iterator[str]:
    """Lines from number ``start`` on, each cut to MAX_LINE_BYTES with a note naming its full size.

    Chunks that end before ``start`` are only counted, not split: reaching the end of a file of
    short lines costs C-speed counting, not a Python step per line."""
    if not encoding.byte_lines:
        yield from _decoded_lines(fh, start, encoding)
        return
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
                    yield _text(current, size, encoding)
                number, current, size = number + 1, bytearray(), 0
    if size and number >= start:
        yield _text(current, size, encoding)


def _decoded_lines(fh: BinaryIO, start: int, encoding: Sniffed) -> Iterator[str]:
    """``iter_lines`` for a file whose breaks are not bytes (UTF-16, UTF-32): one bounded
    ``readline`` at a time, the rest of an over-long line skipped (its size counted in characters)."""
    text = io.TextIOWrapper(fh, encoding=encoding.encoding, errors="replace", newline="")
    try:
        number = 1
        while piece := text.readline(MAX_LINE_BYTES):
            shown = piece.rstrip("\r\n")
            size = len(shown)
            while not piece.endswith(("\n", "\r")) and (piece := text.readline(MAX_LINE_BYTES)):
                size += len(piece.rstrip("\r\n"))
            if number >= start:
                shown = shown.removeprefix("\ufeff") if number == 1 else shown
                yield shown if size <= MAX_LINE_BYTES else f"{shown}…(该行共 {size} 字符，仅显示前 {MAX_LINE_BYTES} 字符)"
            number += 1
    finally:
        text.detach()


def pick_lines(path: Path, wanted: Iterable[int], encoding: Sniffed = UTF8) -> dict[int, str]:
    """The text of the wanted line numbers (cut as iter_lines cuts); numbers past the end are absent."""
    numbers = set(wanted)
    if not numbers:
        return {}
    first, last = min(numbers), max(numbers)
    picked: dict[int, str] = {}
    with path.open("rb") as fh:
        for number, line in enumerate(iter_lines(fh, first, encoding=encoding), first):
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


def _text(kept: bytes, size: int, encoding: Sniffed) -> str:
    text = encoding.decode(bytes(kept))
    return text if size <= len(kept) else f"{text}…(该行共 {size} 字节，仅显示前 {MAX_LINE_BYTES} 字节)"


def window(path: Path, start: int, count: int, encoding: Sniffed = UTF8) -> tuple[list[str], int]:
    """Lines start..start+count-1 (1-based) and the file's line count."""
    with path.open("rb") as fh:
        total = count_lines(fh, encoding=encoding)
        lines: list[str] = []
        if start > total:
            return lines, total
        fh.seek(0)
        for line in iter_lines(fh, start, encoding=encoding):
            lines.append(line)
            if len(lines) == count:
                break
    return lines, total
