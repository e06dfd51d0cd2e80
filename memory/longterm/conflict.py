"""Does a new memory look like a newer version of an old one? (reference l, MemoryConflictDetector)

Explicit writes stop and show both entries so the user decides; auto extraction skips silently.
The check is purely literal: a changed number (``Java 17`` → ``Java 21``) or a very similar text.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from functools import lru_cache

from paicli.memory.longterm.dedup import CANONICAL_CACHE, canonicalize, equivalent_content, same_domain
from paicli.memory.longterm.config import DEFAULT_THRESHOLD
from paicli.memory.longterm.entry import Entry

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)*")  # reference (l): ASCII digits only
SIGNATURE_BITS = 1024  # bigram signature width for the conflict scan's first filter
_NUMBER_MASK = "\ue000"  # reference (l): a private-use char no canonical text contains


def is_numeric_variant(ca: str, cb: str) -> bool:
    """The same text with different numbers: ``服务端口是8080`` vs ``服务端口是9090``."""
    masked_a = _masked(ca)
    return _NUMBER_MASK in masked_a and masked_a == _masked(cb)


def bigram_dice(ca: str, cb: str) -> float:
    """Dice coefficient over the multisets of consecutive code-point pairs."""
    a, b = _bigrams(ca), _bigrams(cb)
    total_a, total_b = len(ca) - 1, len(cb) - 1
    if total_a <= 0 or total_b <= 0:
        return 0.0
    # Counter's `&` is pure Python; a key-set intersection runs in C and is usually tiny.
    shared = sum(min(a[g], b[g]) for g in a.keys() & b.keys())
    return 2.0 * shared / (total_a + total_b)


def dice_bound(ca: str, cb: str) -> float:
    """The largest Dice score two texts of these lengths can reach: the shorter one's bigrams
    all shared. A cheap test that rules most stored memories out before counting bigrams."""
    total_a, total_b = len(ca) - 1, len(cb) - 1
    return 2.0 * min(total_a, total_b) / (total_a + total_b) if total_a > 0 and total_b > 0 else 0.0


def dice_at_least(ca: str, cb: str, threshold: float) -> bool:
    """``bigram_dice(ca, cb) >= threshold``, answered by cheap upper bounds when they suffice.

    Shared bigrams are at most the shorter text's count minus its distinct bigrams the other
    lacks; with the key intersection done in C, most stored memories are ruled out without
    counting anything."""
    if dice_bound(ca, cb) < threshold:
        return False
    short, other = (ca, cb) if len(ca) <= len(cb) else (cb, ca)
    keys_short = _gram_keys(short)
    missing = len(keys_short) - len(keys_short & _gram_keys(other))
    if 2.0 * (len(short) - 1 - missing) / (len(ca) + len(cb) - 2) < threshold:
        return False
    return bigram_dice(ca, cb) >= threshold


def masked(canonical: str) -> str:
    """The canonical text with each number replaced by one marker (cached)."""
    return _masked(canonical)


def number_masked(masked_text: str) -> bool:
    """Did masking replace a number? Only then can the text be a numeric variant."""
    return _NUMBER_MASK in masked_text


def bigram_counts(canonical: str) -> Counter[str]:
    """The text's bigram multiset (cached and shared: never mutate it)."""
    return _bigrams(canonical)


# Cached per text, like dedup.canonicalize: each write checks every stored memory.
@lru_cache(maxsize=CANONICAL_CACHE)
def _masked(text: str) -> str:
    return _NUMBER.sub(_NUMBER_MASK, text)


@lru_cache(maxsize=CANONICAL_CACHE)
def _gram_keys(text: str) -> frozenset[str]:
    return frozenset(_bigrams(text))


@lru_cache(maxsize=CANONICAL_CACHE)
def _bigrams(text: str) -> Counter[str]:
    return Counter(text[i:i + 2] for i in range(len(text) - 1))  # shared: never mutate it


def is_conflict(existing: Entry, incoming: Entry, threshold: float = DEFAULT_THRESHOLD) -> bool:
    if not same_domain(existing, incoming):
        return False
    return canonical_conflict(canonicalize(existing.content), canonicalize(incoming.content), threshold)


def canonical_conflict(ca: str, cb: str, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """reference (l) on canonical texts already known to be in the same domain."""
    if not ca or not cb or equivalent_content(ca, cb):
        return False
    if is_numeric_variant(ca, cb):
        return True
    return dice_at_least(ca, cb, threshold)


def find_conflicts(entries: list[Entry], incoming: Entry,
                   threshold: float = DEFAULT_THRESHOLD) -> list[Entry]:
    """Conflicting entries, oldest first (reference j.4: sorted by timestamp ascending).

    ``canonical_conflict`` for every entry of the incoming one's domain, with its cheap tests
    inlined on cached per-text profiles: every write runs this over the whole file."""
    canonical, domain = canonicalize(incoming.content), incoming.domain
    if domain is None or not canonical:
        return []
    _, masked, signature = _profile(incoming.content)
    numbers, grams = _NUMBER_MASK in masked, len(canonical) - 1
    found = []
    for entry in entries:
        if entry.domain != domain:
            continue
        other, other_masked, other_signature = _profile(entry.content)
        if not (numbers and other_masked == masked):
            count = len(other) - 1
            if count <= 0 or grams <= 0 or 2 * min(count, grams) < threshold * (count + grams):
                continue  # dice_bound
            # Bits of the shorter text's bigrams the other lacks: at most its missing bigrams.
            gap = ((other_signature & ~signature) if count <= grams else (signature & ~other_signature)).bit_count()
            if 2 * (min(count, grams) - gap) < threshold * (count + grams) or not dice_at_least(other, canonical, threshold):
                continue
        if not equivalent_content(other, canonical):
            found.append(entry)
    return sorted(found, key=lambda e: e.timestamp)


@lru_cache(maxsize=CANONICAL_CACHE)
def _profile(content: str) -> tuple[str, str, int]:
    """A stored text's canonical form, its number-masked form and a bit signature of its
    bigrams (one bit per bigram, hashed into SIGNATURE_BITS with crc32 so it is stable)."""
    canonical = canonicalize(content)
    signature = 0
    for gram in _bigrams(canonical):
        signature |= 1 << (zlib.crc32(gram.encode()) % SIGNATURE_BITS)
    return canonical, _masked(canonical), signature
