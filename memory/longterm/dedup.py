"""Is a new memory the same fact as an old one? (reference k, PaiCLI's MemoryDeduplicator)

Content is compared in a canonical form that ignores width, case, whitespace and ordinary
punctuation but keeps the markers that change meaning (``C`` vs ``C++``, ``17`` vs ``21``,
``👍`` vs ``👎``). A small grammatical-variant rule lets ``使用Java17`` match ``使用的是Java17``.
"""

from __future__ import annotations

from functools import lru_cache

from paicli.memory.longterm.canonical import CANONICAL_CACHE, canonicalize, is_letter_or_digit  # noqa: F401 (re-exported)
from paicli.memory.longterm.entry import Entry

MIN_APPROXIMATE_LENGTH = 8  # reference (k): the shorter canonical needs at least 8 code points
GRAMMATICAL_VARIANT_THRESHOLD = 0.82  # reference (k): len(shorter) / len(longer)
_PARTICLES = frozenset("的地得是")  # reference (k): the only code points the variant rule skips


def same_domain(a: Entry, b: Entry) -> bool:
    """Same type and scope; project entries also need the same non-blank project key."""
    return a.domain is not None and a.domain == b.domain


def is_duplicate(a: Entry, b: Entry) -> bool:
    return same_domain(a, b) and equivalent_content(canonicalize(a.content), canonicalize(b.content))


def equivalent_content(ca: str, cb: str) -> bool:
    """reference (k): equal canonicals, or a grammatical variant of a long-enough text."""
    if ca == cb:
        return True  # two empty canonicals count as equal
    if not ca or not cb:
        return False
    shorter, longer = (ca, cb) if len(ca) <= len(cb) else (cb, ca)  # a tie keeps the first
    if len(shorter) < MIN_APPROXIMATE_LENGTH or len(shorter) / len(longer) < GRAMMATICAL_VARIANT_THRESHOLD:
        return False
    return _skips_only_particles(shorter, longer)


@lru_cache(maxsize=CANONICAL_CACHE)
def without_particles(canonical: str) -> str:
    """The canonical text minus the code points the variant rule may skip: two texts are
    ``equivalent_content`` only if these are equal (``paicli.memory.longterm.write_index``)."""
    return "".join(c for c in canonical if c not in _PARTICLES)


def _skips_only_particles(shorter: str, longer: str) -> bool:
    cursor = 0
    for char in longer:
        if cursor < len(shorter) and char == shorter[cursor]:
            cursor += 1
        elif char not in _PARTICLES:
            return False
    return cursor == len(shorter)


def find_duplicate(entries: list[Entry], incoming: Entry) -> Entry | None:
    """The first existing entry that duplicates ``incoming`` (compare its canonical once)."""
    canonical, domain = canonicalize(incoming.content), incoming.domain
    if domain is None:
        return None
    for entry in entries:
        if entry.domain == domain and equivalent_content(canonicalize(entry.content), canonical):
            return entry
    return None
