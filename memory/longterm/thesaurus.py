"""The developer thesaurus shipped in ``memory/longterm/data/thesaurus.txt``
(``memory.longterm.thesaurus_data`` reads it).

Each group: Chinese synonyms and the English words for the same thing
(``主库 | 主数据库 | primary database``).

A member occurs in a query when all its key terms do (``memory.longterm.terms.key_terms``:
character pairs and words, so jieba's cut of the query does not matter). Each group with a
member in the query is a ``Match``: the query's own terms for it and the terms of its other
members, which the retriever weighs below the user's own words (``memory.longterm.retriever``).
A member with no such terms
("优先级": every pair holds a grammar character) occurs when jieba cuts it out of the query whole.
A member inside a longer one that also occurs
("数据库" in "数据库迁移") brings in nothing of its own: the longer phrase says what is meant.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from memory.longterm.terms import key_terms, terms
from memory.longterm.thesaurus_data import parse, shipped

__all__ = ["Match", "Member", "Thesaurus", "builtin", "parse"]


@dataclass(frozen=True)
class Member:
    group: int
    keys: frozenset[str]
    terms: frozenset[str]


@dataclass(frozen=True)
class Match:
    own: frozenset[str]  # the query's terms for the group's meaning
    others: frozenset[str]  # the terms of the group's other wordings


class Thesaurus:
    def __init__(self, groups: Iterable[Iterable[str]]) -> None:
        self.groups: list[list[Member]] = []
        self._by_key: dict[str, list[Member]] = {}
        for words in groups:
            members = [_member(len(self.groups), w) for w in words if w.strip()]
            members = [m for m in members if m.keys]
            if len(members) < 2:
                continue
            self.groups.append(members)
            for member in members:
                self._by_key.setdefault(min(member.keys), []).append(member)  # any one key finds it

    def matches(self, query_terms: Iterable[str]) -> list[Match]:
        """Each group with a member in ``query_terms``: the query's terms for it and the rest."""
        present = set(query_terms)
        found = [m for t in present for m in self._by_key.get(t, ()) if m.keys <= present]
        found = [m for m in found if not any(m.keys < other.keys for other in found)]  # longest wins
        own: dict[int, set[str]] = {}
        for member in found:
            own.setdefault(member.group, set()).update(member.terms & present)
        return [Match(frozenset(words), frozenset().union(*(m.terms for m in self.groups[g])) - present)
                for g, words in own.items()]

    def expand(self, query_terms: Iterable[str]) -> set[str]:
        """Every term the query's groups bring in that the query does not hold itself."""
        return set().union(*(m.others for m in self.matches(query_terms)))


def _member(group: int, words: str) -> Member:
    """A word whose character pairs all hold a grammar character ("优先级", "端到端") has no key
    terms; jieba's whole word, when jieba cuts it out of the query too, is the only way it occurs."""
    found = frozenset(terms(words))
    return Member(group, key_terms(words) or found, found)


@lru_cache(maxsize=1)
def builtin() -> Thesaurus:
    """The shipped thesaurus, built once per process."""
    return Thesaurus(shipped())
