"""BM25 over memory terms: words that occur in many memories count little (reference p.3, Q15).

A memory is a bag of ``paicli.memory.longterm.terms`` terms. Its content counts in full; the search
terms the light model proposed for it (``paicli.memory.longterm.enrichment``) count as
``ENRICHED_WEIGHT`` of an occurrence each and do not lengthen it, so they can bridge words the
content lacks but never outweigh the content itself.

Hand-written rather than ``bm25s``: the candidate list changes with every write, and rebuilding
a ``bm25s`` index over 10,000 memories from token ids takes about 0.3 s, where this one reuses
each memory's cached arrays and rebuilds in a few tens of milliseconds; a query also needs a
weight per term (a thesaurus word counts less than the user's own), which ``bm25s`` lacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

K1, B = 1.2, 0.75  # the usual BM25 constants (Lucene's defaults)
ENRICHED_WEIGHT = 0.5  # one proposed search term: half an occurrence in the content


class Vocabulary:
    """Term → id, shared by every index a retriever builds, so cached documents stay valid."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def id(self, term: str) -> int:
        return self.ids.setdefault(term, len(self.ids))

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, eq=False)
class Doc:
    ids: np.ndarray  # int64 term ids, each once
    tfs: np.ndarray  # float64 weighted counts
    length: float  # content terms only


def make_doc(vocab: Vocabulary, content: Mapping[str, int], enriched: Mapping[str, int] | None = None) -> Doc:
    counts: dict[int, float] = {}
    for term, n in content.items():
        counts[vocab.id(term)] = float(n)
    for term, n in (enriched or {}).items():
        key = vocab.id(term)
        counts[key] = counts.get(key, 0.0) + ENRICHED_WEIGHT * n
    return Doc(np.fromiter(counts.keys(), np.int64, len(counts)), np.fromiter(counts.values(), np.float64, len(counts)),
               float(sum(content.values())))


class Index:
    """Postings sorted by term: a query reads only its own terms' slices."""

    def __init__(self, ids: np.ndarray, tfs: np.ndarray, sizes: np.ndarray, lengths: np.ndarray,
                 n_terms: int) -> None:
        """Document i holds the next ``sizes[i]`` of the flat ``ids`` (each once) and ``tfs``, and
        ``lengths[i]`` content terms (``Doc`` laid end to end; ``of_docs``)."""
        self.size = len(sizes)
        owner = np.repeat(np.arange(self.size), sizes)
        df = np.bincount(ids, minlength=n_terms).astype(np.float64)
        self.offsets = np.concatenate(([0], np.cumsum(df).astype(np.int64)))
        self.idf = np.log1p((self.size - df + 0.5) / (df + 0.5))
        norm = K1 * (1 - B + B * lengths / max(float(lengths.mean()) if self.size else 1.0, 1.0))
        weights = self.idf[ids] * tfs * (K1 + 1) / (tfs + norm[owner])
        order = _stable_order(ids, n_terms)
        self.docs, self.weights = owner[order], weights[order]

    @classmethod
    def of_docs(cls, docs: list[Doc], n_terms: int) -> Index:
        sizes = np.fromiter((len(d.ids) for d in docs), np.int64, len(docs))
        ids = np.concatenate([d.ids for d in docs]) if docs else np.zeros(0, np.int64)
        tfs = np.concatenate([d.tfs for d in docs]) if docs else np.zeros(0)
        return cls(ids, tfs, sizes, np.fromiter((d.length for d in docs), np.float64, len(docs)), n_terms)

    def scores(self, query: Mapping[int, float]) -> np.ndarray:
        """Σ weight × BM25 of each query term id, per document."""
        out = np.zeros(self.size)
        for term, weight in query.items():
            if 0 <= term < len(self.offsets) - 1:
                a, b = self.offsets[term], self.offsets[term + 1]
                out[self.docs[a:b]] += weight * self.weights[a:b]  # one posting per document: no repeats
        return out

    def ideal(self, query: Mapping[int, float]) -> float:
        """What a memory holding each known query term once, at average length, scores."""
        return float(sum(w * self.idf[t] for t, w in query.items() if 0 <= t < len(self.idf)))

    def term_idf(self, term: int | None) -> float:
        """A term no memory holds is as rare as a term can be."""
        if term is not None and 0 <= term < len(self.idf) and self.offsets[term + 1] > self.offsets[term]:
            return float(self.idf[term])
        return float(np.log1p((self.size + 0.5) / 0.5))


def _stable_order(ids: np.ndarray, n_terms: int) -> np.ndarray:
    """``np.argsort(ids, kind="stable")``, as one or two radix passes over 16-bit keys (numpy
    sorts those by radix: ten times faster than its merge sort of 64-bit ones)."""
    if n_terms <= 1 << 16:
        return np.argsort(ids.astype(np.uint16), kind="stable")
    if n_terms > 1 << 32:
        return np.argsort(ids, kind="stable")
    low = np.argsort((ids & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((ids[low] >> 16).astype(np.uint16), kind="stable")]
