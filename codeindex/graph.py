"""What the index knows about one symbol: where it is defined, who uses it, what it calls, and
what extends or implements it (``/graph <Symbol>``).

tree-sitter sees syntax, not types, so every link is by name: a call ``x.save()`` is a use of
every ``save`` there is, and Go's implicit interfaces are not seen at all. ``APPROXIMATE`` says so
wherever these are shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from paicli.codeindex.store import Store

APPROXIMATE = "（按名称匹配：tree-sitter 只看语法，不看类型，同名符号会混在一起，结果仅供参考）"
USE_KINDS = ("call", "new", "annotation", "import", "type")
CLASS_KINDS = ("extends", "implements")


@dataclass(frozen=True)
class Place:
    path: str
    line: int
    end_line: int
    kind: str
    qualified: str  # the symbol, or "" at module level
    signature: str = ""


@dataclass
class Relations:
    name: str
    definitions: list[Place] = field(default_factory=list)
    users: list[Place] = field(default_factory=list)  # where the name is used (the using symbol)
    calls: list[tuple[str, list[Place]]] = field(default_factory=list)  # names it calls, with their definitions
    subclasses: list[Place] = field(default_factory=list)  # classes that extend or implement it


_DEFINITIONS = ("SELECT s.id, f.path, s.start_line, s.end_line, s.kind, s.qualified, s.signature FROM symbols s "
                "JOIN files f ON f.id = s.file_id WHERE {where} ORDER BY f.path, s.start_line LIMIT ?")


def definitions(store: Store, symbol: str, limit: int = 20) -> list[tuple[int, Place]]:
    """``Name`` or ``Outer.name`` (a qualified name may leave out its outer parts); the exact
    case first, then any case."""
    conn = store.connection()
    if "." in symbol:
        tries = [("s.qualified = ?", symbol), ("s.qualified LIKE ?", "%." + symbol),
                 ("s.qualified = ? COLLATE NOCASE", symbol)]
    else:
        tries = [("s.name = ?", symbol), ("s.name = ? COLLATE NOCASE", symbol)]
    for where, value in tries:
        rows = conn.execute(_DEFINITIONS.format(where=where), (value, limit)).fetchall()
        if rows:
            return [(sid, Place(path, start, end, kind, qualified, signature))
                    for sid, path, start, end, kind, qualified, signature in rows]
    return []


def relations(store: Store, symbol: str, limit: int = 20) -> Relations:
    found = definitions(store, symbol, limit)
    name = found[0][1].qualified.rsplit(".", 1)[-1] if found else symbol.rsplit(".", 1)[-1]
    result = Relations(name, [place for _sid, place in found])
    result.users = _uses(store, name, USE_KINDS, limit)
    result.subclasses = _uses(store, name, CLASS_KINDS, limit)
    result.calls = calls_of(store, [sid for sid, _place in found], limit)
    return result


def _uses(store: Store, name: str, kinds: tuple[str, ...], limit: int) -> list[Place]:
    marks = ",".join("?" * len(kinds))
    rows = store.connection().execute(
        "SELECT f.path, r.line, coalesce(s.end_line, r.line), r.kind, coalesce(s.qualified, ''), coalesce(s.signature, '') "
        f"FROM refs r JOIN files f ON f.id = r.file_id LEFT JOIN symbols s ON s.id = r.symbol_id "
        f"WHERE r.name = ? AND r.kind IN ({marks}) ORDER BY f.path, r.line LIMIT ?", (name, *kinds, limit)).fetchall()
    return [Place(*row) for row in rows]


def calls_of(store: Store, ids: list[int], limit: int) -> list[tuple[str, list[Place]]]:
    if not ids:
        return []
    conn = store.connection()
    marks = ",".join("?" * len(ids))
    names = [n for (n,) in conn.execute(
        f"SELECT DISTINCT name FROM refs WHERE symbol_id IN ({marks}) AND kind IN ('call', 'new') ORDER BY line LIMIT ?",
        (*ids, limit))]
    calls = []
    for callee in names:
        rows = conn.execute("SELECT f.path, s.start_line, s.end_line, s.kind, s.qualified, s.signature FROM symbols s "
                            "JOIN files f ON f.id = s.file_id WHERE s.name = ? ORDER BY f.path LIMIT 3", (callee,))
        calls.append((callee, [Place(*row) for row in rows]))
    return calls
