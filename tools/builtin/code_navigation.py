"""One symbol's graph, exact where a language server is up (issue 38 item 4 on issue 37's index):
``/graph <Symbol>`` and ``code_map(symbol=…)`` both show ``symbol_graph``'s answer.

The code index finds the symbol's definitions by name (tree-sitter knows a definition when it sees
one). Then, for each definition in a language a server serves and is up for (``tools/lsp/navigate``),
the server says where it is really used (``references``) and what its calls really reach
(``definition`` at each call the index recorded inside it); a name the project only uses (a
library's) is asked at its first use. Everything else, and all of it when no server answers
(missing, off, failed, not ready or not answering within the wait), is the index's graph by name.
Subclasses and implementations are always the index's: servers have no common request for them.
Each part says which it is: ``exact_label`` / ``APPROXIMATE_LABEL``.

A location a server gives outside the project (a library's stub) is shown as its absolute path and
never read.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paicli.tools.lsp import navigate

if TYPE_CHECKING:
    from paicli.codeindex.graph import Place, Relations
    from paicli.codeindex.store import Store

APPROXIMATE_LABEL = "近似（代码索引）"
WAIT = navigate.DEFAULT_TIMEOUT  # seconds for a server to come up and answer, then the index's answer
ANCHORS = 5  # definitions (or uses) a server is asked about
SHOWN_FILES = 30  # files the index says use the name, synced to the server before references
CALL_SITES = 20
USERS_SHOWN = 40  # a server's references listed (the index's are 20 at most)
TOTAL_WAITS = 2  # the whole exact part within this many waits (start-up included), else the index's


def exact_label(servers: list[str] | tuple[str, ...]) -> str:
    return f"精确（{'、'.join(dict.fromkeys(servers))}）"


@dataclass
class SymbolGraph:
    """``relations`` (the index's) with the server's answers where there were any.

    ``users`` and ``calls`` are the server's when ``users_by`` / ``calls_by`` name servers; then
    ``other_users`` holds the index's by-name uses in files of languages no server answered for.
    """

    relations: Relations
    definitions: list[Place]
    users: list[Place]
    calls: list[tuple[str, list[Place]]]
    users_by: list[str] = field(default_factory=list)
    calls_by: list[str] = field(default_factory=list)
    other_users: list[Place] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.relations.name

    @property
    def subclasses(self) -> list[Place]:
        return self.relations.subclasses

    @property
    def exact(self) -> bool:
        return bool(self.users_by or self.calls_by)

    @property
    def label(self) -> str:
        return exact_label([*self.users_by, *self.calls_by]) if self.exact else APPROXIMATE_LABEL

    @property
    def empty(self) -> bool:
        return not self.definitions and not self.users and not self.subclasses


async def symbol_graph(store: Store, lsp: Any, project: str, name: str, wait: float | None = None) -> SymbolGraph:
    """The graph of ``name`` (``Name`` or ``Outer.name``); ``lsp``: the session's
    ``LanguageServers`` or None. Never raises for a server's sake: no answer is the index's.
    ``wait``: seconds per wait, by default ``WAIT`` or the diagnostics bound if that is longer
    (``PAICLI_LSP_WAIT_SECONDS``: a slow machine's setting is a slow machine's for this too)."""
    from paicli.codeindex.graph import definitions, relations

    if wait is None:
        wait = max(WAIT, getattr(getattr(lsp, "options", None), "wait", 0.0))

    found = await asyncio.to_thread(relations, store, name)
    graph = SymbolGraph(found, list(found.definitions), list(found.users), list(found.calls))
    if lsp is None or graph.empty:
        return graph
    ids = [sid for sid, _place in await asyncio.to_thread(definitions, store, name)]
    anchors = [(sid, place.path, await asyncio.to_thread(_name_line, project, place, found.name))
               for sid, place in list(zip(ids, found.definitions))[:ANCHORS]]
    if not anchors and found.users:  # defined outside the project: ask where its first use leads
        anchors = [(None, found.users[0].path, found.users[0].line)]

    async def ask() -> list[_Answer | None]:
        await navigate.show(lsp, project, [u.path for u in found.users][:SHOWN_FILES], wait)
        return await asyncio.gather(*(_anchor(store, lsp, project, found.name, anchor, wait) for anchor in anchors))

    try:  # a server that is slow at every step still costs one bound, not one per request
        answers = await asyncio.wait_for(ask(), TOTAL_WAITS * wait)
    except (asyncio.TimeoutError, OSError):  # late, or a file gone meanwhile: the index's answer
        return graph
    exact_paths = {path for (_sid, path, _line), answer in zip(anchors, answers) if answer is not None}
    answered = [a for a in answers if a is not None]
    if not answered:
        return graph
    users: dict[tuple[str, int], Place] = {}
    calls: dict[str, list[Place]] = {}
    for answer in answered:
        users.update({(p.path, p.line): p for p in answer.users})
        for callee, places in answer.calls or ():
            calls.setdefault(callee, [])
            calls[callee] += [p for p in places if p not in calls[callee]]
        if answer.definitions is not None:
            graph.definitions = answer.definitions
    graph.users = [users[k] for k in sorted(users)]
    graph.users_by = list(dict.fromkeys(a.server for a in answered))
    exact_languages = {_language(path) for path in exact_paths}
    graph.other_users = [u for u in found.users if _language(u.path) not in exact_languages]
    if any(a.calls is not None for a in answered):
        # the calls of definitions no server answered for stay the index's (by name)
        exact_ids = {sid for (sid, _path, _line), a in zip(anchors, answers) if a is not None}
        rest = await asyncio.to_thread(_calls_of, store, [i for i in ids if i not in exact_ids])
        graph.calls = [*calls.items(), *((c, p) for c, p in rest if c not in calls)]
        graph.calls_by = list(dict.fromkeys(a.server for a in answered if a.calls is not None))
    return graph


@dataclass
class _Answer:
    server: str
    users: list[Place]
    calls: list[tuple[str, list[Place]]] | None  # None: not asked (a use, not a definition)
    definitions: list[Place] | None = None  # the server's, when the index had none


async def _anchor(store: Store, lsp: Any, project: str, name: str, anchor: tuple[int | None, str, int],
                  wait: float) -> _Answer | None:
    sid, path, line = anchor
    found = await navigate.references(lsp, project, path, line=line, symbol=name, include_declaration=False,
                                      timeout=wait)
    if found is None:
        return None
    users = await asyncio.to_thread(_places, store, found.locations, name)
    if sid is None:
        there = await navigate.definition(lsp, project, path, line=line, symbol=name, timeout=wait)
        defined = await asyncio.to_thread(_places, store, there.locations, name, True) if there else None
        return _Answer(found.server, users, None, defined)
    sites = await asyncio.to_thread(_call_sites, store, sid)
    targets = await asyncio.gather(*(navigate.definition(lsp, project, path, line=at, symbol=callee, timeout=wait)
                                     for callee, at in sites))
    calls: dict[str, list[Place]] = {}
    for (callee, _at), target in zip(sites, targets):
        places = await asyncio.to_thread(_places, store, target.locations, callee, True) if target else []
        calls.setdefault(callee, [])
        calls[callee] += [p for p in places if p not in calls[callee]]
    return _Answer(found.server, users, list(calls.items()))


def _name_line(project: str, place: Place, name: str) -> int:
    """The first line of a definition that names it (a decorator or an annotation may come first)."""
    try:
        with open(os.path.join(project, place.path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()[place.line - 1:place.end_line]
    except OSError:
        return place.line
    return next((place.line + i for i, text in enumerate(lines) if navigate.column_of(text, name)), place.line)


def _language(path: str) -> str | None:
    from paicli.tools.lsp.languages import language_of

    language = language_of(path)
    return language.key if language is not None else None


def _call_sites(store: Store, sid: int) -> list[tuple[str, int]]:
    rows = store.connection().execute(
        "SELECT DISTINCT name, line FROM refs WHERE symbol_id = ? AND kind IN ('call', 'new') ORDER BY line, name LIMIT ?",
        (sid, CALL_SITES)).fetchall()
    return [(callee, at) for callee, at in rows]


def _calls_of(store: Store, ids: list[int]) -> list[tuple[str, list[Place]]]:
    from paicli.codeindex.graph import calls_of

    return calls_of(store, ids, CALL_SITES)


def _places(store: Store, locations: Any, name: str, defined: bool = False) -> list[Place]:
    """A server's locations as the index's places: the symbol around (a use) or at (a
    definition) each line, and the kind of use the index recorded there (``引用`` when none)."""
    from paicli.codeindex.graph import Place

    conn = store.connection()
    places = []
    for where in locations:
        row = conn.execute(
            "SELECT s.kind, s.qualified, s.signature, s.end_line FROM symbols s JOIN files f ON f.id = s.file_id "
            "WHERE f.path = ? AND s.start_line <= ? AND s.end_line >= ? "
            "ORDER BY (s.start_line = ?) DESC, s.end_line - s.start_line LIMIT 1",
            (where.path, where.line, where.line, where.line)).fetchone()
        kind, qualified, signature, end = row if row else ("", "", "", where.line)
        if defined:
            places.append(Place(where.path, where.line, end, kind, qualified, signature))
            continue
        used = conn.execute("SELECT r.kind FROM refs r JOIN files f ON f.id = r.file_id "
                            "WHERE f.path = ? AND r.line = ? AND r.name = ? LIMIT 1",
                            (where.path, where.line, name)).fetchone()
        places.append(Place(where.path, where.line, where.line, used[0] if used else "引用", qualified, ""))
    return places


def render(graph: SymbolGraph, head: str) -> list[str]:
    """The lines ``/graph <Symbol>`` prints and ``code_map(symbol=…)`` returns: ``head`` then each
    part, every part that is the index's guess marked so when the rest is exact."""
    from paicli.codeindex.graph import APPROXIMATE

    guess = f"· {APPROXIMATE_LABEL}" if graph.exact else ""
    lines = [f"{head} · {graph.label}"]
    lines.append("  定义:" if graph.definitions else "  定义: 未在索引中找到（可能来自依赖库）")
    lines += [f"    {d.path}:{d.line}  {d.kind} {d.qualified}  {d.signature}".rstrip() for d in graph.definitions]
    lines.append(f"  使用它的地方（{len(graph.users)}）:" if graph.users else "  使用它的地方: 无")
    lines += [f"    {u.path}:{u.line}  {u.qualified or '模块顶层'} ({u.kind})" for u in graph.users[:USERS_SHOWN]]
    if len(graph.users) > USERS_SHOWN:
        lines.append(f"    …另有 {len(graph.users) - USERS_SHOWN} 处未列出")
    if graph.other_users:
        lines.append(f"  其他语言中按名称匹配的使用（{len(graph.other_users)}）{guess}:")
        lines += [f"    {u.path}:{u.line}  {u.qualified or '模块顶层'} ({u.kind})" for u in graph.other_users]
    if graph.calls:
        lines.append(f"  它调用的{guess if graph.users_by and not graph.calls_by else ''}:")
        for callee, places in graph.calls:
            at = ", ".join(f"{p.path}:{p.line}" for p in places) or ("未在项目中定义" if graph.calls_by else "未在索引中定义")
            lines.append(f"    {callee} → {at}")
    lines.append(f"  子类/实现（{len(graph.subclasses)}）{guess}:" if graph.subclasses else "  子类/实现: 无")
    lines += [f"    {s.path}:{s.line}  {s.qualified} ({'继承' if s.kind == 'extends' else '实现'})"
              for s in graph.subclasses]
    if not graph.exact or graph.other_users or graph.subclasses or (graph.calls and not graph.calls_by):
        lines.append(APPROXIMATE)
    return lines
