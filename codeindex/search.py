"""Searching the index: BM25 over the chunks, re-ranked by how well a symbol's name fits, and
fused with vector similarity when the index has vectors (reciprocal rank fusion).

The query is cut into terms by ``paicli.codeindex.words.query_terms`` (identifier words, Chinese pairs,
the glossary's English for Chinese terms) and matched with OR, so a question in words finds code
that has most of them. The first ``CANDIDATES`` chunks by BM25 (column weights in
``paicli.codeindex.store.FTS_WEIGHTS``) are re-scored: a chunk whose symbol is named by the query
(``parseHttpDate`` for "parse http date", or the identifier itself in a query of one or two
words) moves up, a plain text window moves down. With vectors, the re-scored list and the nearest chunks by cosine similarity
are fused by rank (``RRF_K``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.codeindex.store import FTS_WEIGHTS, Store
from paicli.codeindex.words import fts_query, identifier_words, query_terms

if TYPE_CHECKING:
    from paicli.codeindex.vectors import Vectors

CANDIDATES = 200
RRF_K = 60
WINDOW_WEIGHT = 0.5  # a text window (no symbol) against a definition
EXACT_NAME, NAME_WORDS = 2.0, 1.5  # re-ranking boosts (see ``_rescored``)
IMPL_WEIGHT = 0.8  # Rust's ``impl X`` block below the type ``X`` it belongs to


@dataclass(frozen=True)
class Hit:
    chunk: int
    path: str
    start_line: int
    end_line: int
    kind: str  # "" for a text window
    name: str
    qualified: str
    signature: str
    doc: str
    score: float


@dataclass(frozen=True)
class Result:
    hits: list[Hit]
    mode: str  # "lexical" | "hybrid"


def search(store: Store, query: str, top_k: int, vectors: Vectors | None = None) -> Result:
    terms, words = query_terms(query)
    lexical = _lexical(store, terms, words, query) if terms else []
    if vectors is None:
        return Result(lexical[:top_k], "lexical")
    nearest = vectors.nearest(store, query, CANDIDATES)
    if nearest is None:
        return Result(lexical[:top_k], "lexical")
    return Result(_fused(store, lexical, nearest)[:top_k], "hybrid")


def _lexical(store: Store, terms: list[str], words: list[str], query: str) -> list[Hit]:
    conn = store.connection()
    weights = ", ".join(str(w) for w in FTS_WEIGHTS)
    rows = conn.execute(f"SELECT rowid, bm25(chunks_fts, {weights}) AS r FROM chunks_fts WHERE chunks_fts MATCH ? "
                        f"ORDER BY r LIMIT {CANDIDATES}", (fts_query(terms),)).fetchall()
    scores = {rowid: -rank for rowid, rank in rows}
    hits = [_rescored(h, words, query) for h in _hits(conn, scores)]
    return sorted(hits, key=lambda h: -h.score)


def _hits(conn, scores: dict[int, float]) -> list[Hit]:
    if not scores:
        return []
    marks = ",".join("?" * len(scores))
    rows = conn.execute(
        "SELECT c.id, f.path, c.start_line, c.end_line, s.kind, s.name, s.qualified, s.signature, s.doc "
        f"FROM chunks c JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol_id WHERE c.id IN ({marks})",
        list(scores)).fetchall()
    return [Hit(cid, path, start, end, kind or "", name or "", qualified or "", signature or "", doc or "", scores[cid])
            for cid, path, start, end, kind, name, qualified, signature, doc in rows]


def _rescored(hit: Hit, words: list[str], query: str) -> Hit:
    if not hit.kind:
        return _with(hit, hit.score * WINDOW_WEIGHT)
    tokens = query.split()
    name_words = set(identifier_words(hit.name))
    shared = name_words & set(words)
    fit = len(shared) / len(set(words)) if words else 0.0  # how much of the query the name says
    exact = len(tokens) <= 2 and any(t.lower().replace("_", "") in (hit.name.lower().replace("_", ""),
                                                                     hit.qualified.lower()) for t in tokens)
    prior = IMPL_WEIGHT if hit.kind == "impl" else 1.0
    return _with(hit, hit.score * prior * (1.0 + EXACT_NAME * exact + NAME_WORDS * fit))


def _with(hit: Hit, score: float) -> Hit:
    return Hit(hit.chunk, hit.path, hit.start_line, hit.end_line, hit.kind, hit.name, hit.qualified, hit.signature,
               hit.doc, score)


def _fused(store: Store, lexical: list[Hit], nearest: list[tuple[int, float]]) -> list[Hit]:
    fused: dict[int, float] = {}
    for rank, hit in enumerate(lexical, 1):
        fused[hit.chunk] = 1.0 / (RRF_K + rank)
    for rank, (chunk, _similarity) in enumerate(nearest, 1):
        fused[chunk] = fused.get(chunk, 0.0) + 1.0 / (RRF_K + rank)
    known = {h.chunk: h for h in lexical}
    missing = {c: 0.0 for c in fused if c not in known}
    known.update({h.chunk: h for h in _hits(store.connection(), missing)})
    return sorted((_with(known[c], s) for c, s in fused.items() if c in known), key=lambda h: -h.score)


def snippet(root: Path, hit: Hit, max_lines: int, max_chars: int) -> tuple[list[tuple[int, str]], bool]:
    """The hit's first lines as (number, text), and whether it was cut. A file that changed or
    vanished since it was indexed gives what is there now (the caller refreshes first)."""
    lines: list[tuple[int, str]] = []
    used = 0
    try:
        with open(root / hit.path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                if number < hit.start_line:
                    continue
                if number > hit.end_line or len(lines) >= max_lines:
                    break
                text = raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
                text = text if len(text) <= 200 else text[:200] + "…"
                if used + len(text) > max_chars and lines:
                    break
                lines.append((number, text))
                used += len(text) + 8
    except OSError:
        return [], False
    return lines, hit.start_line + len(lines) - 1 < hit.end_line
