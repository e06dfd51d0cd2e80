"""The canonical form of a memory's text (reference k): what "the same fact" is compared on.

Apart from ``paicli.memory.longterm.dedup`` so the entry module can derive an entry's key from it
(``paicli.memory.longterm.entry.content_id``) without importing the comparison code back.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

CANONICAL_CACHE = 65_536  # distinct memory texts kept canonicalized (a few MB at most)
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
