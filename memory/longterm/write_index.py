"""Which stored memories a new one could duplicate or conflict with, without reading them all.

A write checks the new memory against the whole file (``paicli.memory.longterm.dedup`` and
``paicli.memory.longterm.conflict``); at 10,000 memories the scan is most of a write's time. This index
narrows it to a superset of the entries either check can accept, and the checks then run on that
short list exactly as they would on the whole file, so no answer changes:

- a duplicate has the same domain and the same canonical text once the particles the variant rule
  may skip (``的地得是``) are taken out of both;
- a numeric variant has the same domain and the same number-masked canonical text;
- a text with a bigram Dice score of at least ``t`` against one of ``n`` bigrams must share at
  least ``t·n / (2 − t)`` of them (its own length is at least ``t·n / (2 − t)`` too), so it holds
  one of the new text's rarest bigrams: the fewest rarest ones whose counts leave less than that
  for the rest (the prefix filter of set-similarity joins).

``MemoryFile`` keeps one index with its loaded entries and updates it by identity after each write
or re-read (unchanged entries stay the same objects across a re-read), so a write never rebuilds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import compress

from paicli.memory.longterm.conflict import bigram_counts, masked, number_masked
from paicli.memory.longterm.dedup import canonicalize, without_particles
from paicli.memory.longterm.entry import Entry

_MARGIN = 1e-9  # keeps one more bigram in the prefix rather than risk a float tie


class WriteIndex:
    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._keys: dict[int, tuple[tuple, ...]] = {}  # id(entry) -> its buckets
        self._buckets: dict[tuple, dict[int, Entry]] = {}
        for entry in entries:
            self._add(entry)

    def __len__(self) -> int:
        return len(self._keys)

    def update(self, before: Sequence[Entry], after: Sequence[Entry]) -> None:
        """``before`` was indexed; now ``after`` is: index what came, forget what went.
        (Set operations on ids run in C: a write changes one entry of thousands.)"""
        now = dict(zip(map(id, after), after))
        for gone in set(map(id, before)) - now.keys():
            self._remove(gone)
        for came in now.keys() - self._keys.keys():
            self._add(now[came])

    def candidates(self, entries: Sequence[Entry], incoming: Entry, threshold: float) -> list[Entry]:
        """The entries of ``entries`` (in their order) that may duplicate or conflict with
        ``incoming`` at ``threshold``, and any this index does not hold (written earlier in the
        same mutation): the checks see them all."""
        domain = incoming.domain
        if domain is None:
            return []
        canonical = canonicalize(incoming.content)
        found: set[int] = set()
        for key in _keys(domain, canonical, include_grams=False):
            found.update(self._buckets.get(key, ()))
        for gram in self._rare_grams(domain, canonical, threshold):
            found.update(self._buckets.get(("gram", domain, gram), ()))
        ids = list(map(id, entries))
        found.update(set(ids) - self._keys.keys())
        return list(compress(entries, map(found.__contains__, ids)))

    # -- internals ---------------------------------------------------------------------------------
    def _rare_grams(self, domain: tuple, canonical: str, threshold: float) -> list[str]:
        counts = bigram_counts(canonical)
        total = len(canonical) - 1
        if total <= 0:
            return []
        needed = threshold * total / (2.0 - threshold) - _MARGIN
        rarest = sorted(counts, key=lambda g: len(self._buckets.get(("gram", domain, g), ())))
        prefix, rest = [], total
        for gram in rarest:
            if rest < needed:
                break
            prefix.append(gram)
            rest -= counts[gram]
        return prefix

    def _add(self, entry: Entry) -> None:
        domain = entry.domain
        keys = () if domain is None else tuple(_keys(domain, canonicalize(entry.content), include_grams=True))
        self._keys[id(entry)] = keys
        for key in keys:
            self._buckets.setdefault(key, {})[id(entry)] = entry

    def _remove(self, ident: int) -> None:
        for key in self._keys.pop(ident, ()):
            bucket = self._buckets[key]
            bucket.pop(ident, None)
            if not bucket:
                del self._buckets[key]


def _keys(domain: tuple, canonical: str, *, include_grams: bool) -> list[tuple]:
    keys: list[tuple] = [("same", domain, without_particles(canonical))]
    masked_text = masked(canonical)
    if number_masked(masked_text):
        keys.append(("numbers", domain, masked_text))
    if include_grams:
        keys += [("gram", domain, gram) for gram in bigram_counts(canonical)]
    return keys
