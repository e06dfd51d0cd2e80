"""Each memory's term arrays, and a copy of them on disk so a new process cuts only what changed.

The retriever (``paicli.memory.longterm.retriever``) ranks over each memory's terms
(``paicli.memory.longterm.terms``: jieba words and character pairs) as BM25 arrays
(``paicli.memory.longterm.lexical``) and the terms of the subject it opens with
(``paicli.memory.longterm.subject``). Cutting 10,000 memories takes about a second, so the first search
of a process would pay it every time. ``Rows`` holds those arrays flat, one row per distinct
memory text, keyed by a hash of the memory's content and its search terms (``row_key``).

``TermFile`` keeps them in ``long_term_memory.terms.npz`` beside the memory file (issue 30). It
is never the source of truth: a row is used only for a memory whose key it holds, so a memory
another process added, edited or enriched since is cut afresh, and a row nobody uses any more is
dropped at the next save. A file that is missing, unreadable, not ours, or made by other term
rules or another jieba (``fingerprint``) counts as empty, quietly: the next search rebuilds it.
It is written whole through a temporary file and ``os.replace`` while the memory file's locks
are held, and only when they are free at that moment: a search never waits for a writer.
Only the file store has one; memory in a LangGraph store keeps its rows in the process.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jieba
import numpy as np

from paicli.memory.longterm.enrichment import SEARCH_TERMS_KEY, search_terms
from paicli.memory.longterm.entry import Entry
from paicli.memory.longterm.file import TERMS_FILE_NAME
from paicli.memory.longterm.lexical import Doc, Vocabulary, make_doc
from paicli.memory.longterm.subject import subject_terms
from paicli.memory.longterm.terms import terms

FILE_NAME = TERMS_FILE_NAME
FORMAT = b"paicli-terms-1"
# What a row is computed with: a change to any of these makes every stored row stale.
_RULES = ("term_cache.py", "terms.py", "subject.py", "lexical.py", "data/thesaurus.txt")
_ARRAYS = {"fingerprint": np.uint8, "keys": np.uint8, "vocab": np.uint8, "offsets": np.int64, "ids": np.int64,
           "tfs": np.float64, "lengths": np.float64, "subject_offsets": np.int64, "subject_ids": np.int64}
log = logging.getLogger(__name__)


def row_key(entry: Entry) -> bytes:
    """What a memory's row depends on: its content and the search terms proposed for it (as
    stored: two spellings of the same terms only cost a second row)."""
    text = entry.content + "\0" + entry.metadata.get(SEARCH_TERMS_KEY, "")
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def row_of(vocab: Vocabulary, entry: Entry) -> tuple[Doc, np.ndarray]:
    """A memory's BM25 document and its subject's term ids, new terms added to ``vocab``."""
    extra = search_terms(entry)
    doc = make_doc(vocab, terms(entry.content), terms(" ; ".join(extra)))
    subject = np.fromiter((vocab.id(t) for t in sorted(subject_terms(entry.content))), np.int64)
    return doc, subject


@lru_cache(maxsize=1)
def fingerprint() -> bytes:
    """The term rules' source and jieba's version and dictionary, hashed."""
    digest = hashlib.blake2b(FORMAT, digest_size=16)
    here = Path(__file__).parent
    for name in _RULES:
        try:
            digest.update((here / name).read_bytes())
        except OSError:  # installed without its sources: the module names stand in
            digest.update(name.encode())
    digest.update(f"\0{jieba.__version__}\0{jieba.dt.dictionary}".encode())
    return digest.digest()


@dataclass(frozen=True, eq=False)
class Rows:
    """Term arrays of many memories end to end: row r is ``ids[offsets[r]:offsets[r + 1]]``
    (with ``tfs``), ``lengths[r]``, and its subject's ``subject_ids[subject_offsets[r]:…]``."""

    keys: list[bytes]
    offsets: np.ndarray
    ids: np.ndarray
    tfs: np.ndarray
    lengths: np.ndarray
    subject_offsets: np.ndarray
    subject_ids: np.ndarray

    @classmethod
    def empty(cls) -> Rows:
        none = np.zeros(0, np.int64)
        return cls([], np.zeros(1, np.int64), none, np.zeros(0), np.zeros(0), np.zeros(1, np.int64), none)

    def __len__(self) -> int:
        return len(self.keys)

    def extended(self, keys: list[bytes], rows: Sequence[tuple[Doc, np.ndarray]]) -> Rows:
        if not keys:
            return self
        docs = [d for d, _ in rows]
        sizes = np.fromiter((len(d.ids) for d in docs), np.int64, len(docs))
        subject_sizes = np.fromiter((len(s) for _, s in rows), np.int64, len(rows))
        return Rows(self.keys + keys,
                    np.concatenate((self.offsets, self.offsets[-1] + np.cumsum(sizes))),
                    np.concatenate([self.ids, *(d.ids for d in docs)]),
                    np.concatenate([self.tfs, *(d.tfs for d in docs)]),
                    np.concatenate((self.lengths, np.fromiter((d.length for d in docs), np.float64, len(docs)))),
                    np.concatenate((self.subject_offsets, self.subject_offsets[-1] + np.cumsum(subject_sizes))),
                    np.concatenate([self.subject_ids, *(s for _, s in rows)]))

    def terms_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ids and tfs of ``rows`` end to end, and each row's size."""
        pos, sizes = _positions(self.offsets, rows)
        return (self.ids, self.tfs, sizes) if pos is None else (self.ids[pos], self.tfs[pos], sizes)

    def subjects_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos, sizes = _positions(self.subject_offsets, rows)
        return (self.subject_ids if pos is None else self.subject_ids[pos]), sizes

    def compact(self, keep: np.ndarray, vocab: Sequence[str]) -> tuple[Rows, list[str]]:
        """Only the rows ``keep``, over a vocabulary of only the terms they hold (in the order of
        ``vocab``): what a process that cut just those memories would have."""
        ids, tfs, sizes = self.terms_of(keep)
        subject_ids, subject_sizes = self.subjects_of(keep)
        used = np.zeros(len(vocab), bool)
        used[ids], used[subject_ids] = True, True
        used = np.flatnonzero(used)  # (np.unique would import numpy.ma: tens of ms in a new process)
        rows = Rows([self.keys[r] for r in keep.tolist()], _offsets(sizes), np.searchsorted(used, ids), tfs,
                    self.lengths[keep], _offsets(subject_sizes), np.searchsorted(used, subject_ids))
        return rows, [vocab[t] for t in used.tolist()]


def _offsets(sizes: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def _positions(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """Where ``rows``' values lie in the flat array, and each row's size (None: all of it, in order)."""
    starts, sizes = offsets[rows], offsets[rows + 1] - offsets[rows]
    if len(rows) == len(offsets) - 1 and np.array_equal(rows, np.arange(len(rows))):
        return None, sizes
    ends = np.cumsum(sizes)
    return np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(starts - (ends - sizes), sizes), sizes


class TermFile:
    """``long_term_memory.terms.npz``: read once per retriever, written when its rows change.
    ``lock``: the memory file's locks if free now (``MemoryFile.side_lock``)."""

    def __init__(self, path: Path, lock: Callable[[], AbstractContextManager[bool]]) -> None:
        self.path = path
        self.lock = lock

    def load(self) -> tuple[Rows, list[str]] | None:
        """The rows and their vocabulary, or None when there is no usable file."""
        try:
            with open(self.path, "rb") as fh:  # ours to close: np.load leaks it on some bad files
                data = np.load(fh, allow_pickle=False)
                if not isinstance(data, np.lib.npyio.NpzFile):  # a bare .npy array: not ours
                    raise ValueError("not an npz archive")
                with data:
                    arrays = {name: data[name] for name in _ARRAYS}
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            log.debug("term cache %s unreadable (%s): rebuilt", self.path, error)
            return None
        return _checked(arrays)

    def save(self, rows: Rows, vocab: Sequence[str]) -> bool:
        """Write ``rows`` (already compact) unless the memory file's locks are busy; never raises."""
        try:
            blob = "\n".join(vocab).encode("utf-8")
            if any("\n" in t for t in vocab):
                return False
        except UnicodeEncodeError:
            return False
        arrays = {"fingerprint": np.frombuffer(fingerprint(), np.uint8),
                  "keys": np.frombuffer(b"".join(rows.keys), np.uint8).reshape(len(rows), 16),
                  "vocab": np.frombuffer(blob, np.uint8), "offsets": rows.offsets, "ids": rows.ids,
                  "tfs": rows.tfs, "lengths": rows.lengths, "subject_offsets": rows.subject_offsets,
                  "subject_ids": rows.subject_ids}
        try:
            with self.lock() as held:
                if not held:
                    return False
                fd, temp = tempfile.mkstemp(prefix=FILE_NAME, suffix=".tmp", dir=self.path.parent)
                try:
                    with os.fdopen(fd, "wb") as out:
                        np.savez(out, **arrays)
                    os.replace(temp, self.path)
                except BaseException:
                    _unlink(temp)
                    raise
        except Exception as error:  # a cache: a search goes on without it
            log.debug("term cache %s not written (%s)", self.path, error)
            return False
        return True


def _checked(a: dict[str, np.ndarray]) -> tuple[Rows, list[str]] | None:
    """The arrays as ``Rows`` when they are what ``save`` writes for these rules, else None."""
    if any(a[name].dtype != dtype for name, dtype in _ARRAYS.items()):
        return None
    if a["fingerprint"].tobytes() != fingerprint() or a["keys"].ndim != 2 or a["keys"].shape[1] != 16:
        return None
    n = len(a["keys"])
    try:
        text = a["vocab"].tobytes().decode("utf-8")
    except UnicodeDecodeError:
        return None
    vocab = text.split("\n") if text else []
    offsets, subject_offsets = a["offsets"], a["subject_offsets"]
    shapes = (a["lengths"].shape == (n,) and offsets.shape == subject_offsets.shape == (n + 1,)
              and a["ids"].shape == a["tfs"].shape and a["ids"].ndim == a["subject_ids"].ndim == 1)
    if not shapes or len(set(vocab)) != len(vocab):
        return None
    for counts in (a["tfs"], a["lengths"]):  # what save writes: finite counts, never below zero
        if len(counts) and not (np.isfinite(counts).all() and counts.min() >= 0):
            return None
    for starts, values in ((offsets, a["ids"]), (subject_offsets, a["subject_ids"])):
        if starts[0] != 0 or starts[-1] != len(values) or np.any(np.diff(starts) < 0):
            return None
        if len(values) and (values.min() < 0 or values.max() >= len(vocab)):
            return None
    keys = a["keys"].tobytes()
    return Rows([keys[i:i + 16] for i in range(0, 16 * n, 16)], offsets, a["ids"], a["tfs"], a["lengths"],
                subject_offsets, a["subject_ids"]), vocab


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as error:
        log.debug("could not remove %s (%s)", path, error)


def unique_rows(rows: np.ndarray, count: int) -> np.ndarray:
    """The distinct values of ``rows`` (each below ``count``), sorted."""
    seen = np.zeros(count, bool)
    seen[rows] = True
    return np.flatnonzero(seen)
