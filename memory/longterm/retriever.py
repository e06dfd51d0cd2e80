"""Which memories to show the model for a query, and the injected block (reference p).

Scoring (p.3's two parts, a team decision for Q15, reworked for issue 16):
``score = relevance × decay``.
- relevance: BM25 (``paicli.memory.longterm.lexical``) of the query's terms (``paicli.memory.longterm.terms``:
  Chinese character pairs and jieba words, English words, identifiers, versions) plus, at
  ``SYNONYM_WEIGHT``, the terms the developer thesaurus (``paicli.memory.longterm.thesaurus``) adds,
  against each memory's content and the search terms the light model proposed for it; divided
  by what a memory holding each query term once would score, so 1.0 means "all of it";
- a relevance under ``MIN_RELEVANCE`` is no match: one shared common word is not a reason to
  show a memory;
- decay: ``max(0.7, 1 / (1 + age_days / 30))`` from the write time, gentle and without p.2's
  24-hour cliff. The reference suggests a floor of 0.5; at 10,000 memories that let fresh
  look-alikes bury an older right answer, and a fact told once months ago must still be found,
  so newer only breaks near-ties.
Each memory's term arrays are kept per (content, search terms), in the process and, for the file
store, beside the file for the next process (``paicli.memory.longterm.term_cache``); the index over a
candidate list is rebuilt only when the list changes. Nothing here touches the network.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path

import jieba
import numpy as np

from paicli.memory.longterm.config import MEMORY_HEADING
from paicli.memory.longterm.entry import SCOPE_GLOBAL, Entry
from paicli.memory.longterm.lexical import Index, Vocabulary
from paicli.memory.longterm.staleness import DEFAULT_STALE_DAYS, Stale, staleness
from paicli.memory.longterm.term_cache import Rows, TermFile, row_key, row_of, unique_rows
from paicli.memory.longterm.terms import known_pairs, terms
from paicli.memory.longterm.thesaurus import Thesaurus, builtin
from paicli.memory.tokens import estimate_text
from paicli.memory.longterm.write_result import local_date

TOP_K = 10  # reference (p.2/p.3): top 10, then the budget
DECAY_FLOOR, DECAY_DAYS = 0.7, 30.0  # reference (p.3) suggests 0.5; see the module docstring
SYNONYM_WEIGHT = 0.7  # a thesaurus word against the user's own (0.6–0.8 score alike on the tune part)
MIN_RELEVANCE = 0.15  # less is one common word shared: no match (0.05–0.25 score alike on the tune part)
OTHER_SUBJECT = 0.35  # a memory about a subject the query does not name (``paicli.memory.longterm.subject``)

HEADER = (f"{MEMORY_HEADING}\n\n"  # reference (p.4)
          "以下记忆是线索而不是事实；涉及版本、配置、路径等可能变化的信息，行动前先对照当前文件核实。\n\n")
PENDING_TAG, STALE_TAG = "[自动提取，待核实]", "[可能已过时]"  # reference (p.4)
# reference (p.4) for Rule 1; Rule 2 (Q13) is not in the reference, so it gets its own reason.
STALE_AGE_CLAUSE = "，已超过 {days} 天未核实，使用前必须先核实"
STALE_FILES_CLAUSE = "，关联文件在核实后已修改，使用前必须先核实"


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
    """Load jieba's dictionary and the thesaurus now rather than on the first search."""
    use_cache_dir(cache_dir)
    jieba.initialize()
    builtin()
    known_pairs()


def decay(written: datetime, now: datetime) -> float:
    return float(decay_for_age((now - written).total_seconds() / 86_400))


def decay_for_age(age_days: float | np.ndarray) -> np.ndarray:
    """Works on a number or a numpy array of ages in days; a future time counts as age 0."""
    return np.maximum(DECAY_FLOOR, 1.0 / (1.0 + np.maximum(0.0, age_days) / DECAY_DAYS))


@dataclass(frozen=True, eq=False)
class _Prepared:
    """One candidate list as an index and arrays, built once and reused while the list stays equal."""
    entries: list[Entry]
    index: Index
    stamps: np.ndarray  # write times, epoch seconds
    is_global: np.ndarray
    projects: np.ndarray  # object array of project keys (None for global entries)
    subject_owner: np.ndarray  # (subject_owner[i], subject_ids[i]): memory i opens with term i
    subject_ids: np.ndarray
    has_subject: np.ndarray


class Retriever:
    """Ranks memories for a query; keeps term arrays between calls (one per process is enough).
    ``terms_file``: where they are kept between processes (``paicli.memory.longterm.term_cache``)."""

    def __init__(self, cache_dir: Path | None = None, thesaurus: Thesaurus | None = None,
                 terms_file: TermFile | None = None) -> None:
        use_cache_dir(cache_dir)
        self._thesaurus = thesaurus
        self._file = terms_file
        self.cut = 0  # memories whose terms this retriever computed rather than found (tests, bench)
        self._reset()

    def _reset(self) -> None:
        self._vocab = Vocabulary()
        self._rows = Rows.empty()  # every distinct memory text seen, by row_key
        self._row_by_key: dict[bytes, int] = {}
        self._slots: dict[int, tuple[Entry, int]] = {}  # id(entry) -> (entry, its row)
        self._prepared: _Prepared | None = None
        self._loaded = False  # terms_file read (or found unusable)
        self._on_disk: frozenset[bytes] | None = None  # the row keys terms_file holds, as far as we know

    @property
    def thesaurus(self) -> Thesaurus:
        if self._thesaurus is None:
            self._thesaurus = builtin()
        return self._thesaurus

    def rank(self, entries: Sequence[Entry], query: str, project_key: str | None = None,
             now: datetime | None = None, limit: int = TOP_K) -> list[Scored]:
        """reference (p.1): only entries visible in the project; a match; best, then newest, first."""
        if not entries or not query.strip():
            return []
        # The whole list is prepared, not the visible part: it is the same list on every turn.
        prepared = self._prepare(list(entries), save=True)
        visible = prepared.is_global  # is_visible_in_project, on the whole list at once
        if project_key and project_key.strip():
            visible = visible | (prepared.projects == project_key)
        return self._ranked(prepared, visible, query, now or datetime.now(UTC), limit)

    def rank_candidates(self, candidates: Sequence[Entry], query: str, now: datetime | None = None,
                        limit: int = TOP_K) -> list[Scored]:
        """Ranks exactly these entries (the store's namespaces choose them, not visibility)."""
        if not candidates or not query.strip():
            return []
        prepared = self._prepare(list(candidates), save=False)  # a part: not what terms_file keeps
        return self._ranked(prepared, np.ones(len(candidates), dtype=bool), query, now or datetime.now(UTC), limit)

    def forget_saved(self) -> None:
        """``terms_file`` was removed (a delete or a clear): write it again at the next search."""
        self._on_disk = None

    def _prepare(self, entries: list[Entry], save: bool) -> _Prepared:
        # ``==`` on lists tests identity first: the file hands back the same entry objects until it
        # changes, so an unchanged list costs microseconds, not a pass over every entry.
        current = self._prepared
        if current is not None and current.entries == entries:
            return current
        self._forget_unused(len(entries))
        rows = self._rows_for(entries)
        ids, tfs, sizes = self._rows.terms_of(rows)
        subject_ids, subject_sizes = self._rows.subjects_of(rows)
        n = len(entries)
        self._prepared = _Prepared(entries, Index(ids, tfs, sizes, self._rows.lengths[rows], len(self._vocab)),
                                   np.fromiter((e.timestamp.timestamp() for e in entries), np.float64, n),
                                   np.fromiter((e.scope == SCOPE_GLOBAL for e in entries), bool, n),
                                   np.array([e.project for e in entries], dtype=object),
                                   np.repeat(np.arange(n), subject_sizes), subject_ids, subject_sizes > 0)
        if save:
            self._save(rows)
        return self._prepared

    def _rows_for(self, entries: list[Entry]) -> np.ndarray:
        """Each entry's row. Kept per entry object (the file hands back the same objects until one
        changes), so a write costs the new entry's terms and the index, not a hash of every entry."""
        slots = self._slots
        found = [s[1] if (s := slots.get(id(e))) is not None and s[0] is e else -1 for e in entries]
        missing = [i for i, row in enumerate(found) if row < 0]
        if missing:
            fresh = [entries[i] for i in missing]
            keys = [row_key(e) for e in fresh]
            if not self._loaded:
                self._load(keys)
            by_key, new_keys, new_rows = self._row_by_key, [], []
            rows = [by_key.get(key, -1) for key in keys]
            for j in [j for j, row in enumerate(rows) if row < 0]:  # not seen (or saved) before
                row = by_key.get(keys[j], -1)  # the same text twice in this list
                if row < 0:
                    row = by_key[keys[j]] = len(self._rows) + len(new_keys)
                    new_keys.append(keys[j])
                    new_rows.append(row_of(self._vocab, fresh[j]))
                rows[j] = row
            for i, row in zip(missing, rows):
                found[i] = row
            slots.update(zip(map(id, fresh), zip(fresh, rows)))  # a slot holds its entry: the id is not reused
            self._rows = self._rows.extended(new_keys, new_rows)
            self.cut += len(new_keys)
        return np.array(found, np.int64)

    def _load(self, keys: list[bytes]) -> None:
        """The rows ``terms_file`` holds for these keys (the first list this retriever prepares)."""
        self._loaded = True
        stored = self._file.load() if self._file is not None else None
        if stored is None:
            return
        rows, vocab = stored
        wanted = set(keys)
        keep = np.array([r for r, key in enumerate(rows.keys) if key in wanted], np.int64)
        if len(keep) < len(rows):  # rows of memories gone since: their terms must not join the vocabulary
            rows, vocab = rows.compact(keep, vocab)
        self._rows, self._row_by_key = rows, {key: r for r, key in enumerate(rows.keys)}
        self._vocab.ids = dict(zip(vocab, range(len(vocab))))
        self._on_disk = frozenset(stored[0].keys)

    def _save(self, rows: np.ndarray) -> None:
        """Keep ``terms_file`` to the rows of the current list, when they changed."""
        if self._file is None:
            return
        live = unique_rows(rows, len(self._rows))
        keys = frozenset(self._rows.keys[r] for r in live.tolist())
        if keys == self._on_disk:
            return
        compact, vocab = self._rows.compact(live, list(self._vocab.ids))
        if self._file.save(compact, vocab):
            self._on_disk = keys

    def _forget_unused(self, live: int) -> None:
        """Deleted or edited memories must not accumulate in a long-running process: start over
        (term ids with them) when the cache holds far more than the list."""
        if len(self._rows) > 2 * live + 1_000 or len(self._slots) > 2 * live + 1_000:
            self._reset()

    def _relevance(self, p: _Prepared, query: str) -> np.ndarray:
        """BM25 of the user's words, plus, per thesaurus group the query touches, the BM25 of the
        group's other words at ``SYNONYM_WEIGHT``, capped at that share of what the user's own
        words for it are worth: other words can find a memory, not outweigh the user's."""
        index, own = p.index, terms(query)
        ids = self._vocab.ids
        exact = {ids[t]: 1.0 for t in own if t in ids}
        named = set(exact)
        ideal = index.ideal(exact)
        total = index.scores(exact)
        for match in self.thesaurus.matches(own):
            others = {ids[t]: 1.0 for t in match.others if t in ids}
            named.update(others)
            if others:
                cap = sum(index.term_idf(ids.get(t)) for t in match.own)
                total += SYNONYM_WEIGHT * np.minimum(index.scores(others), cap)
                ideal = ideal or cap
        if not ideal:
            return np.zeros(index.size)
        relevance = total / ideal
        relevance[relevance < MIN_RELEVANCE] = 0.0
        return relevance * self._subject_factor(p, named)

    @staticmethod
    def _subject_factor(p: _Prepared, named: set[int]) -> np.ndarray:
        """``OTHER_SUBJECT`` for a memory that opens with a subject none of whose terms the query
        or its thesaurus words hold, else 1."""
        mentioned = np.zeros(len(p.entries), dtype=bool)
        hits = np.isin(p.subject_ids, np.fromiter(named, np.int64, len(named)))
        mentioned[p.subject_owner[hits]] = True
        return np.where(p.has_subject & ~mentioned, OTHER_SUBJECT, 1.0)

    def _ranked(self, p: _Prepared, visible: np.ndarray, query: str, now: datetime, limit: int) -> list[Scored]:
        scores = self._relevance(p, query) * decay_for_age((now.timestamp() - p.stamps) / 86_400)
        scores[~visible] = 0.0
        hits = np.flatnonzero(scores > 0)
        if 0 < limit < len(hits):  # only the top ``limit`` scores (and ties with the last) get sorted
            cut = np.partition(scores[hits], len(hits) - limit)[len(hits) - limit]
            hits = hits[scores[hits] >= cut]
        order = hits[np.lexsort((-p.stamps[hits], -scores[hits]))][:limit]
        return [Scored(p.entries[i], float(scores[i])) for i in order]

    def build_context(self, entries: Sequence[Entry], query: str, max_tokens: int,
                      project_key: str | None = None, now: datetime | None = None,
                      stale_days: int = DEFAULT_STALE_DAYS, tz: tzinfo | None = None,
                      shown: Collection[str] = frozenset()) -> str:
        """reference (p.4): the injected block, or "" when nothing relevant fits. ``shown``: lines
        the conversation already carries (``format_block``)."""
        now = now or datetime.now(UTC)
        ranked = self.rank(entries, query, project_key, now)
        return format_block([s.entry for s in ranked], max_tokens, now, stale_days, tz, shown)


def format_block(ranked: Sequence[Entry], max_tokens: int, now: datetime,
                 stale_days: int = DEFAULT_STALE_DAYS, tz: tzinfo | None = None,
                 shown: Collection[str] = frozenset()) -> str:
    """reference (p.4): stop at the first entry over budget (a break, not a skip).

    A line in ``shown`` (already in the visible conversation, the same words and marks) is left
    out and costs nothing: the budget is for what this block adds. A memory whose staleness or
    verification changed renders a different line, so it comes again with its new marks."""
    lines, used = [], 0
    for entry in ranked:
        line = format_line(entry, staleness(entry, now, stale_days), stale_days, tz)
        if line.rstrip("\n") in shown:
            continue
        cost = estimate_text(entry.content)
        if used + cost > max_tokens:
            break
        used += cost
        lines.append(line)
    return HEADER + "".join(lines) + "\n" if lines else ""


def format_line(entry: Entry, stale: Stale | None, stale_days: int, tz: tzinfo | None = None) -> str:
    tags = f"[{entry.type}]" + (PENDING_TAG if entry.verification_pending else "")
    tags += STALE_TAG if stale else ""
    verified = ("，尚未经用户核实" if entry.verification_pending
                else f"，最后核实 {local_date(entry.last_verified_at, tz)}")
    clause = {Stale.AGE: STALE_AGE_CLAUSE.format(days=stale_days), Stale.FILES: STALE_FILES_CLAUSE,
              None: ""}[stale]
    return f"- {tags} {entry.content}（写入 {local_date(entry.timestamp, tz)}{verified}{clause}）\n"
