"""Is a new memory the same fact as an old one? (reference k, PaiCLI's MemoryDeduplicator)

Content is compared in a canonical form that ignores width, case, whitespace and ordinary
punctuation but keeps the markers that change meaning (``C`` vs ``C++``, ``17`` vs ``21``,
``👍`` vs ``👎``). A small grammatical-variant rule lets ``使用Java17`` match ``使用的是Java17``.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from memory.longterm.entry import Entry

CANONICAL_CACHE = 65_536  # distinct memory texts kept canonicalized (a few MB at most)
MIN_APPROXIMATE_LENGTH = 8  # reference (k): the shorter canonical needs at least 8 code points
GRAMMATICAL_VARIANT_THRESHOLD = 0.82  # reference (k): len(shorter) / len(longer)
_PARTICLES = frozenset("的地得是")  # reference (k): the only code points the variant rule skips
_MARKER_CHARS = frozenset("#/@\\%_-'’!:&|^~")  # reference (k): always significant
_SYMBOL_CATEGORIES = frozenset({"Sm", "Sc", "Sk", "So"})  # reference (k): +, currency, emoji...
# Java's Character.isLetterOrDigit; str.isalnum() would also accept No and Nl.
_LETTER_OR_DIGIT = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd"})
_BETWEEN_ALNUM = frozenset(".'’")  # reference (k): kept only between letters or digits


def is_letter_or_digit(char: str) -> bool:
    return unicodedata.category(char) in _LETTER_OR_DIGIT


@lru_cache(maxsize=CANONICAL_CACHE)
def canonicalize(text: str | None) -> str:
    """reference (k): NFKC, lower-case, then keep letters, digits and meaningful markers in place.

    Cached: every write compares the new memory with every stored one (dedup, then conflicts),
    so the stored texts' canonical forms are computed once per process, not once per write."""
    chars = unicodedata.normalize("NFKC", text or "").lower()
    return "".join(c for i, c in enumerate(chars) if _keep(chars, i))


def _keep(chars: str, i: int) -> bool:
    char = chars[i]
    if is_letter_or_digit(char):
        return True
    if char in _BETWEEN_ALNUM:
        return (0 < i < len(chars) - 1 and is_letter_or_digit(chars[i - 1])
                and is_letter_or_digit(chars[i + 1]))
    return char in _MARKER_CHARS or unicodedata.category(char) in _SYMBOL_CATEGORIES


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
    ``equivalent_content`` only if these are equal (``memory.longterm.write_index``)."""
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
