"""Does a new memory look like a newer version of an old one? (reference l, MemoryConflictDetector)

Explicit writes stop and show both entries so the user decides; auto extraction skips silently.
The check is purely literal: a changed number (``Java 17`` → ``Java 21``) or a very similar text.
"""

from __future__ import annotations

import re
from collections import Counter

from memory.dedup import canonicalize, equivalent_content, same_domain
from memory.memory_config import DEFAULT_THRESHOLD
from memory.memory_entry import Entry

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)*")  # reference (l): ASCII digits only
_NUMBER_MASK = "\ue000"  # reference (l): a private-use char no canonical text contains


def is_numeric_variant(ca: str, cb: str) -> bool:
    """The same text with different numbers: ``服务端口是8080`` vs ``服务端口是9090``."""
    masked_a = _NUMBER.sub(_NUMBER_MASK, ca)
    return _NUMBER_MASK in masked_a and masked_a == _NUMBER.sub(_NUMBER_MASK, cb)


def bigram_dice(ca: str, cb: str) -> float:
    """Dice coefficient over the multisets of consecutive code-point pairs."""
    a, b = _bigrams(ca), _bigrams(cb)
    total_a, total_b = sum(a.values()), sum(b.values())
    if not total_a or not total_b:
        return 0.0
    return 2.0 * sum((a & b).values()) / (total_a + total_b)


def _bigrams(text: str) -> Counter[str]:
    return Counter(text[i:i + 2] for i in range(len(text) - 1))


def is_conflict(existing: Entry, incoming: Entry, threshold: float = DEFAULT_THRESHOLD) -> bool:
    if not same_domain(existing, incoming):
        return False
    return canonical_conflict(canonicalize(existing.content), canonicalize(incoming.content), threshold)


def canonical_conflict(ca: str, cb: str, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """reference (l) on canonical texts already known to be in the same domain."""
    if not ca or not cb or equivalent_content(ca, cb):
        return False
    return is_numeric_variant(ca, cb) or bigram_dice(ca, cb) >= threshold


def find_conflicts(entries: list[Entry], incoming: Entry,
                   threshold: float = DEFAULT_THRESHOLD) -> list[Entry]:
    """Conflicting entries, oldest first (reference j.4: sorted by timestamp ascending)."""
    canonical = canonicalize(incoming.content)
    found = [e for e in entries
             if same_domain(e, incoming) and canonical_conflict(canonicalize(e.content), canonical, threshold)]
    return sorted(found, key=lambda e: e.timestamp)
