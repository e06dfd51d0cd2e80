"""Which memories to show the model for a query, and the injected block (reference p).

Scoring follows S1's newest description (p.3) with the formula the reference suggests, a team
decision for Q15: ``score = (keyword + cosine) / 2 × decay``.
- keyword: 1.0 when the whole query occurs in the memory, else the share of the query's jieba
  tokens (p.2's tokenizer rules) that occur in it;
- cosine: of local vectors, character-bigram counts of the dedup canonical form hashed into a
  fixed number of buckets, so nothing is downloaded and Chinese needs no word segmentation;
- decay: ``max(0.5, 1 / (1 + age_days / 30))`` from the write time, gentle and without p.2's
  24-hour cliff.
Vectors are cached per (id, content) and stacked into one matrix per distinct candidate list, so
a search over 10,000 memories is one matrix-vector product plus substring tests.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

import jieba
import numpy as np

from memory.dedup import canonicalize, is_letter_or_digit
from memory.memory_entry import Entry, is_visible_in_project
from memory.staleness import DEFAULT_STALE_DAYS, Stale, staleness
from memory.tokens import estimate_text
from memory.write_result import local_date

TOP_K = 10  # reference (p.2/p.3): top 10, then the budget
MIN_TOKEN_LENGTH = 2  # reference (p.2): shorter query tokens are ignored
DECAY_FLOOR, DECAY_DAYS = 0.5, 30.0  # reference (p.3), suggested port
VECTOR_DIM = 512  # hashed bigram buckets: 20 MB of float32 at 10,000 memories
# Below this a cosine is noise: one hashed bucket shared by chance scores about 0.1 on short
# texts, while one real shared bigram in a short memory scores 0.2 or more.
MIN_COSINE = 0.15

HEADER = ("## 相关长期记忆\n\n"  # reference (p.4)
          "以下记忆是线索而不是事实；涉及版本、配置、路径等可能变化的信息，行动前先对照当前文件核实。\n\n")
PENDING_TAG, STALE_TAG = "[自动提取，待核实]", "[可能已过时]"  # reference (p.4)
# reference (p.4) for Rule 1; Rule 2 (Q13) is not in the reference, so it gets its own reason.
STALE_AGE_CLAUSE = "，已超过 {days} 天未核实，使用前必须先核实"
STALE_FILES_CLAUSE = "，关联文件在核实后已修改，使用前必须先核实"


@dataclass(frozen=True)
class Scored:
    entry: Entry
    score: float


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


class Retriever:
    """Ranks memories for a query; keeps vectors between calls (one per process is enough)."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], tuple[np.ndarray, str]] = {}
        self._matrix_key: tuple[tuple[str, str], ...] | None = None
        self._matrix = np.zeros((0, VECTOR_DIM), dtype=np.float32)
        self._lowered: list[str] = []
        self._stamps = np.zeros(0)

    def rank(self, entries: Sequence[Entry], query: str, project_key: str | None = None,
             now: datetime | None = None, limit: int = TOP_K) -> list[Scored]:
        """reference (p.1): only entries visible in the project; score > 0; best, then newest, first."""
        candidates = [e for e in entries if is_visible_in_project(e, project_key)]
        return self.rank_candidates(candidates, query, now, limit)

    def rank_candidates(self, candidates: Sequence[Entry], query: str, now: datetime | None = None,
                        limit: int = TOP_K) -> list[Scored]:
        """Ranks exactly these entries (the store's namespaces choose them, not visibility)."""
        now = now or datetime.now(UTC)
        candidates = list(candidates)
        if not candidates or not query.strip():
            return []
        cosines = self._prepare(candidates) @ vectorize(query)
        cosines[cosines < MIN_COSINE] = 0.0
        query_lower, tokens = query.lower(), tokenize(query)
        keywords = np.fromiter((keyword_score(query_lower, tokens, low) for low in self._lowered),
                               dtype=np.float64, count=len(candidates))
        scores = (keywords + cosines) / 2 * decay_for_age((now.timestamp() - self._stamps) / 86_400)
        hits = np.nonzero(scores > 0)[0]
        order = hits[np.lexsort((-self._stamps[hits], -scores[hits]))][:limit]
        return [Scored(candidates[i], float(scores[i])) for i in order]

    def _prepare(self, candidates: list[Entry]) -> np.ndarray:
        key = tuple((e.id, e.content) for e in candidates)
        if key != self._matrix_key:
            rows = [self._vector(k) for k in key]
            self._matrix = np.stack([r[0] for r in rows])
            self._lowered = [r[1] for r in rows]
            self._matrix_key = key
            self._forget_unused(set(key))
        # Timestamps are cheap and may change for the same (id, content), so they are not cached.
        self._stamps = np.fromiter((e.timestamp.timestamp() for e in candidates), dtype=np.float64,
                                   count=len(candidates))
        return self._matrix

    def _vector(self, key: tuple[str, str]) -> tuple[np.ndarray, str]:
        if key not in self._vectors:
            self._vectors[key] = (vectorize(key[1]), key[1].lower())
        return self._vectors[key]

    def _forget_unused(self, live: set[tuple[str, str]]) -> None:
        """Deleted or edited memories must not accumulate in a long-running process."""
        if len(self._vectors) > 2 * len(live) + 1_000:
            self._vectors = {k: v for k, v in self._vectors.items() if k in live}

    def build_context(self, entries: Sequence[Entry], query: str, max_tokens: int,
                      project_key: str | None = None, now: datetime | None = None,
                      stale_days: int = DEFAULT_STALE_DAYS, tz: tzinfo | None = None) -> str:
        """reference (p.4): the injected block, or "" when nothing relevant fits."""
        now = now or datetime.now(UTC)
        ranked = self.rank(entries, query, project_key, now)
        return format_block([s.entry for s in ranked], max_tokens, now, stale_days, tz)


def format_block(ranked: Sequence[Entry], max_tokens: int, now: datetime,
                 stale_days: int = DEFAULT_STALE_DAYS, tz: tzinfo | None = None) -> str:
    """reference (p.4): stop at the first entry over budget (a break, not a skip)."""
    lines, used = [], 0
    for entry in ranked:
        cost = estimate_text(entry.content)
        if used + cost > max_tokens:
            break
        used += cost
        lines.append(format_line(entry, staleness(entry, now, stale_days), stale_days, tz))
    return HEADER + "".join(lines) + "\n" if lines else ""


def format_line(entry: Entry, stale: Stale | None, stale_days: int, tz: tzinfo | None = None) -> str:
    tags = f"[{entry.type}]" + (PENDING_TAG if entry.verification_pending else "")
    tags += STALE_TAG if stale else ""
    verified = ("，尚未经用户核实" if entry.verification_pending
                else f"，最后核实 {local_date(entry.last_verified_at, tz)}")
    clause = {Stale.AGE: STALE_AGE_CLAUSE.format(days=stale_days), Stale.FILES: STALE_FILES_CLAUSE,
              None: ""}[stale]
    return f"- {tags} {entry.content}（写入 {local_date(entry.timestamp, tz)}{verified}{clause}）\n"
