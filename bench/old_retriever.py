"""The retriever as it was before issue 16 (BM25 + thesaurus), frozen for ``bench/memory.py``.

A verbatim copy of ``memory/longterm/retriever.py`` at 3f62e8b minus the block formatting, so the
bench can print the old ranking beside the new one. Not used by paicli.

Original docstring:

Scoring follows S1's newest description (p.3) with the formula the reference suggests, a team
decision for Q15: ``score = (keyword + cosine) / 2 × decay``.
- keyword: 1.0 when the whole query occurs in the memory, else the share of the query's jieba
  tokens (p.2's tokenizer rules) that occur in it;
- cosine: of local vectors, character-bigram counts of the dedup canonical form hashed into a
  fixed number of buckets, so nothing is downloaded and Chinese needs no word segmentation;
- decay: ``max(0.7, 1 / (1 + age_days / 30))`` from the write time, gentle and without p.2's
  24-hour cliff. The reference suggests a floor of 0.5; at 10,000 memories that let fresh
  look-alikes bury an older right answer (recall@5 0.72 in ``bench/memory.py``, 0.87 with 0.7),
  and a fact told once months ago must still be found, so newer only breaks near-ties.
Vectors are cached per (id, content) and stacked, with the lowered texts, write times and
scopes, into arrays per distinct candidate list; a search over 10,000 memories then reads the
matrix rows of the query's own buckets and scans the joined text once per query token.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import jieba
import numpy as np

from paicli.memory.longterm.dedup import canonicalize, is_letter_or_digit
from paicli.memory.longterm.entry import SCOPE_GLOBAL, Entry

jieba.setLogLevel(logging.WARNING)  # its "Building prefix dict" lines are not for the user

TOP_K = 10  # reference (p.2/p.3): top 10, then the budget
MIN_TOKEN_LENGTH = 2  # reference (p.2): shorter query tokens are ignored
DECAY_FLOOR, DECAY_DAYS = 0.7, 30.0  # reference (p.3) suggests 0.5; see the module docstring
VECTOR_DIM = 512  # hashed bigram buckets: 20 MB of float32 at 10,000 memories
# Below this a cosine is noise: one hashed bucket shared by chance scores about 0.1 on short
# texts, while one real shared bigram in a short memory scores 0.2 or more.
MIN_COSINE = 0.15


@dataclass(frozen=True)
class Scored:
    entry: Entry
    score: float


def use_cache_dir(directory: Path | None) -> None:
    """Where jieba keeps its parsed dictionary. Its default is a fixed name in the shared /tmp,
    which another user could plant first; paicli passes ``$PAICLI_HOME/cache``. Takes effect
    before jieba's first use; None keeps jieba's default."""
    if directory is not None:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        jieba.dt.tmp_dir = str(directory)


def warm(cache_dir: Path | None = None) -> None:
    """Load jieba's dictionary now rather than on the first search."""
    use_cache_dir(cache_dir)
    jieba.initialize()


def tokenize(query: str) -> list[str]:
    """reference (p.2): jieba with HMM on the lower-cased query; ≥ 2 chars, not pure punctuation."""
    tokens = (t.strip() for t in jieba.lcut(query.lower(), HMM=True))
    return list(dict.fromkeys(t for t in tokens if len(t) >= MIN_TOKEN_LENGTH and _has_word_char(t)))


def _has_word_char(token: str) -> bool:
    # Han characters are letters (category Lo), so "letter or digit" covers p.2's Han-script test.
    return any(is_letter_or_digit(c) for c in token)


def keyword_score(query_lower: str, tokens: Sequence[str], content_lower: str) -> float:
    if query_lower and query_lower in content_lower:
        return 1.0
    if not tokens:
        return 0.0
    return sum(1 for t in tokens if t in content_lower) / len(tokens)


def decay(written: datetime, now: datetime) -> float:
    return float(decay_for_age((now - written).total_seconds() / 86_400))


def decay_for_age(age_days: float | np.ndarray) -> np.ndarray:
    """Works on a number or a numpy array of ages in days; a future time counts as age 0."""
    return np.maximum(DECAY_FLOOR, 1.0 / (1.0 + np.maximum(0.0, age_days) / DECAY_DAYS))


def vectorize(text: str) -> np.ndarray:
    """Unit-length hashed bigram counts of the canonical form (a single char counts as itself)."""
    canonical = canonicalize(text)
    grams = [canonical[i:i + 2] for i in range(len(canonical) - 1)] or ([canonical] if canonical else [])
    vector = np.zeros(VECTOR_DIM, dtype=np.float32)
    for gram in grams:
        vector[zlib.crc32(gram.encode()) % VECTOR_DIM] += 1.0  # crc32: the same buckets in every process
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


@dataclass(frozen=True, eq=False)
class _Prepared:
    """One candidate list as arrays, built once and reused while the list stays equal."""
    entries: list[Entry]
    columns: np.ndarray  # (VECTOR_DIM, n): a query reads only the rows of its own buckets
    lowered: list[str]
    text: str  # the lowered contents joined by SEPARATOR: one substring scan per token
    starts: np.ndarray  # where each entry's text begins in ``text``
    stamps: np.ndarray  # write times, epoch seconds
    is_global: np.ndarray
    projects: np.ndarray  # object array of project keys (None for global entries)


SEPARATOR = "\0"  # joins the lowered contents; a query containing it is scored row by row


class Retriever:
    """Ranks memories for a query; keeps vectors between calls (one per process is enough)."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        use_cache_dir(cache_dir)
        self._vectors: dict[tuple[str, str], tuple[np.ndarray, str]] = {}
        self._prepared: _Prepared | None = None

    def rank(self, entries: Sequence[Entry], query: str, project_key: str | None = None,
             now: datetime | None = None, limit: int = TOP_K) -> list[Scored]:
        """reference (p.1): only entries visible in the project; score > 0; best, then newest, first."""
        if not entries or not query.strip():
            return []
        # The whole list is prepared, not the visible part: it is the same list on every turn.
        prepared = self._prepare(list(entries))
        visible = prepared.is_global  # is_visible_in_project, on the whole list at once
        if project_key and project_key.strip():
            visible = visible | (prepared.projects == project_key)
        return _ranked(prepared, visible, query, now or datetime.now(UTC), limit)

    def rank_candidates(self, candidates: Sequence[Entry], query: str, now: datetime | None = None,
                        limit: int = TOP_K) -> list[Scored]:
        """Ranks exactly these entries (the store's namespaces choose them, not visibility)."""
        if not candidates or not query.strip():
            return []
        prepared = self._prepare(list(candidates))
        return _ranked(prepared, np.ones(len(candidates), dtype=bool), query, now or datetime.now(UTC), limit)

    def _prepare(self, entries: list[Entry]) -> _Prepared:
        # ``==`` on lists tests identity first: the file hands back the same entry objects until it
        # changes, so an unchanged list costs microseconds, not a pass over every entry.
        current = self._prepared
        if current is not None and current.entries == entries:
            return current
        rows = [self._vector(e.id, e.content) for e in entries]
        lowered = [r[1] for r in rows]
        starts = np.cumsum([0] + [len(t) + 1 for t in lowered[:-1]], dtype=np.int64)
        stamps, is_global, projects = zip(*((e.timestamp.timestamp(), e.scope == SCOPE_GLOBAL, e.project)
                                            for e in entries))
        self._prepared = _Prepared(entries, np.stack([r[0] for r in rows], axis=1), lowered,
                                   SEPARATOR.join(lowered), starts, np.array(stamps, dtype=np.float64),
                                   np.array(is_global, dtype=bool), np.array(projects, dtype=object))
        self._forget_unused({(e.id, e.content) for e in entries})
        return self._prepared

    def _vector(self, entry_id: str, content: str) -> tuple[np.ndarray, str]:
        key = (entry_id, content)
        if key not in self._vectors:
            self._vectors[key] = (vectorize(content), content.lower())
        return self._vectors[key]

    def _forget_unused(self, live: set[tuple[str, str]]) -> None:
        """Deleted or edited memories must not accumulate in a long-running process."""
        if len(self._vectors) > 2 * len(live) + 1_000:
            self._vectors = {k: v for k, v in self._vectors.items() if k in live}



def _ranked(p: _Prepared, visible: np.ndarray, query: str, now: datetime, limit: int) -> list[Scored]:
    vector = vectorize(query)
    buckets = np.flatnonzero(vector)
    cosines = (vector[buckets] @ p.columns[buckets]).astype(np.float64)
    cosines[cosines < MIN_COSINE] = 0.0
    scores = (_keyword_scores(p, query.lower(), tokenize(query)) + cosines) / 2
    scores *= decay_for_age((now.timestamp() - p.stamps) / 86_400)
    scores[~visible] = 0.0
    hits = np.flatnonzero(scores > 0)
    if 0 < limit < len(hits):  # only the top ``limit`` scores (and ties with the last) get sorted
        cut = np.partition(scores[hits], len(hits) - limit)[len(hits) - limit]
        hits = hits[scores[hits] >= cut]
    order = hits[np.lexsort((-p.stamps[hits], -scores[hits]))][:limit]
    return [Scored(p.entries[i], float(scores[i])) for i in order]


def _keyword_scores(p: _Prepared, query_lower: str, tokens: Sequence[str]) -> np.ndarray:
    """``keyword_score`` of every entry, with one scan of the joined text per token."""
    if SEPARATOR in query_lower:
        return np.fromiter((keyword_score(query_lower, tokens, low) for low in p.lowered),
                           dtype=np.float64, count=len(p.lowered))
    scores = np.zeros(len(p.lowered))
    for token in tokens:
        scores[_rows_containing(p, token)] += 1.0
    if tokens:
        scores /= len(tokens)
    if query_lower:
        scores[_rows_containing(p, query_lower)] = 1.0
    return scores


def _rows_containing(p: _Prepared, needle: str) -> np.ndarray:
    found = np.fromiter((m.start() for m in re.finditer(re.escape(needle), p.text)), dtype=np.int64)
    return np.unique(np.searchsorted(p.starts, found, side="right") - 1)
