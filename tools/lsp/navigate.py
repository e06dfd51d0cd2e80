"""Exact definitions and references from a language server (issue 38 item 4), for the code
index's ``/graph`` and the model's code tools (issue 37): where a server serves the language and
is up, they use these answers and say "exact"; otherwise they keep their approximate graph.

    found = await definition(lsp, project, "pkg/calc.py", line=12, symbol="add")
    found = await references(lsp, project, "pkg/calc.py", line=3, symbol="add")
    if found is None: ...            # no server for the language (missing, off, failed, not up in time)
    found.server, found.locations    # which server said so; Location(path, line, column, ...) 1-based

A position is given as a 1-based line and either a 1-based ``column`` or the ``symbol`` written
on that line (its first occurrence as a whole word: what the index knows). The file is read from
disk and synced to the server first, so an edit the server has not seen yet cannot mislead it.
``show(lsp, project, paths)`` syncs more files first (the files the index says use a name), so a
server that has not scanned the workspace yet still finds their references.

None also when the server did not answer in time or answered with an error: the caller falls
back, it never waits twice. Only files inside the project are read: a location elsewhere (a
library's stub, a path a server made up) is given as its absolute path with no text.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paicli.tools.lsp.report import utf16_column, utf16_units

_UNANSWERED = object()
DEFAULT_TIMEOUT = 10.0  # seconds a person waits for /graph's answer (a cold server included)


@dataclass(frozen=True)
class Location:
    path: str  # project-relative; absolute when outside the project (a library's stub)
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    text: str  # the line, stripped ("" when it cannot be read)


@dataclass(frozen=True)
class Found:
    server: str
    locations: tuple[Location, ...]
    exact: bool = True  # always: the code index's own answers are the approximate ones


async def definition(lsp: Any, project: str, path: str, *, line: int, column: int | None = None,
                     symbol: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> Found | None:
    return await _ask(lsp, project, path, "textDocument/definition", line, column, symbol, timeout)


async def references(lsp: Any, project: str, path: str, *, line: int, column: int | None = None,
                     symbol: str | None = None, include_declaration: bool = True,
                     timeout: float = DEFAULT_TIMEOUT) -> Found | None:
    return await _ask(lsp, project, path, "textDocument/references", line, column, symbol, timeout,
                      include_declaration)


async def _ask(lsp: Any, project: str, path: str, method: str, line: int, column: int | None, symbol: str | None,
               timeout: float, include: bool = True) -> Found | None:
    from lsprotocol import types as t

    full = _inside(project, path)
    server = lsp.server_for(full, project) if lsp is not None and full is not None else None
    if server is None or not await server.ready(timeout):
        return None
    text = await asyncio.to_thread(Path(full).read_text, encoding="utf-8", errors="replace")
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    column = column or column_of(lines[line - 1], symbol or "")
    if column is None:
        return None
    uri, _ = server.sync(full, text)
    position = t.Position(line - 1, utf16_units(lines[line - 1], column))
    document = t.TextDocumentIdentifier(uri)
    params = (t.ReferenceParams(text_document=document, position=position,
                                context=t.ReferenceContext(include_declaration=include))
              if method.endswith("references") else t.DefinitionParams(text_document=document, position=position))
    answer = await server.request(method, params, timeout, unanswered=_UNANSWERED)
    if answer is _UNANSWERED:
        return None
    if answer is None:
        return Found(server.name, ())
    items = answer if isinstance(answer, (list, tuple)) else [answer]
    found = [await asyncio.to_thread(_location, item, project) for item in items]
    return Found(server.name, tuple(sorted({f for f in found if f is not None}, key=lambda f: (f.path, f.line, f.column))))


async def show(lsp: Any, project: str, paths: list[str], timeout: float = DEFAULT_TIMEOUT) -> int:
    """Sync ``paths`` (project-relative) to their servers that are up; how many were sent."""
    sent, deadline = 0, time.monotonic() + timeout
    for path in dict.fromkeys(paths):
        full = _inside(project, path)
        server = lsp.server_for(full, project) if lsp is not None and full is not None else None
        if server is None or not await server.ready(max(0.0, deadline - time.monotonic())):
            continue
        try:
            text = await asyncio.to_thread(Path(full).read_text, encoding="utf-8", errors="replace")
        except OSError:
            continue
        server.sync(full, text)
        sent += 1
    return sent


def _inside(project: str, path: str) -> str | None:
    """The real path of ``path`` when it is a file inside the project, else None."""
    root = os.path.realpath(project)
    full = os.path.realpath(os.path.join(root, path))
    return full if full.startswith(root.rstrip("/") + "/") and os.path.isfile(full) else None


def column_of(line_text: str, symbol: str) -> int | None:
    match = re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", line_text) if symbol else None
    return match.start() + 1 if match else None


def _location(item: Any, project: str) -> Location | None:
    """A ``Location`` or a ``LocationLink`` (its target) as ours; the file is read for its line."""
    uri = getattr(item, "uri", None) or getattr(item, "target_uri", None)
    where = getattr(item, "range", None) or getattr(item, "target_selection_range", None)
    if not uri or where is None or not uri.startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse

    full = os.path.normpath(unquote(urlparse(uri).path))
    root = os.path.realpath(project).rstrip("/") + "/"
    inside = os.path.realpath(full).startswith(root)
    try:  # never a file outside the project: a server's answer does not choose what paicli reads
        lines = Path(full).read_text(encoding="utf-8", errors="replace").splitlines() if inside else []
    except OSError:
        lines = []

    def at(position: Any) -> tuple[int, int]:
        if position.line >= len(lines):  # not read: the server's own count stands
            return position.line + 1, position.character + 1
        return position.line + 1, utf16_column(lines[position.line], position.character)

    (line, column), (end_line, end_column) = at(where.start), at(where.end)
    shown = os.path.relpath(os.path.realpath(full), root) if inside else full
    return Location(shown, line, column, end_line, end_column, lines[line - 1].strip() if line <= len(lines) else "")
