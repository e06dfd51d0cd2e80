"""The developer thesaurus shipped in ``memory/longterm/data/thesaurus.txt``
(``paicli.memory.longterm.thesaurus_data`` reads it).

Each group: Chinese synonyms and the English words for the same thing
(``主库 | 主数据库 | primary database``).

A member occurs in a query when all its key terms do (``paicli.memory.longterm.terms.key_terms``:
character pairs and words, so jieba's cut of the query does not matter). Each group with a
member in the query is a ``Match``: the query's own terms for it and the terms of its other
members, which the retriever weighs below the user's own words (``paicli.memory.longterm.retriever``).
A member with no such terms
("优先级": every pair holds a grammar character) occurs when jieba cuts it out of the query whole.
A member inside a longer one that also occurs
("数据库" in "数据库迁移") brings in nothing of its own: the longer phrase says what is meant.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from paicli.memory.longterm.terms import key_terms, terms
from paicli.memory.longterm.thesaurus_data import compiled_text, parse, shipped

__all__ = ["Match", "Member", "Thesaurus", "builtin", "compiled", "parse"]


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
            self._add([m for m in members if m.keys])

    @classmethod
    def from_compiled(cls, text: str) -> Thesaurus:
        """Rebuilt from ``compiled()``'s text: no jieba cut, no term extraction."""
        thesaurus = cls(())
        for group in json.loads(text)["groups"]:
            index = len(thesaurus.groups)
            thesaurus._add([Member(index, frozenset(keys), frozenset(found)) for keys, found in group])
        return thesaurus

    def compiled(self) -> str:
        """The groups' members as JSON, terms sorted so the text is stable."""
        groups = [[[sorted(m.keys), sorted(m.terms)] for m in members] for members in self.groups]
        return json.dumps({"groups": groups}, ensure_ascii=False, separators=(",", ":")) + "\n"

    def _add(self, members: list[Member]) -> None:
        if len(members) < 2:
            return
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
    """The shipped thesaurus, built once per process from its compiled form: building it from the
    text cuts every member with jieba (a fifth of a second, and jieba's dictionary load before
    that). ``tests/unit/test_thesaurus_domains.py`` checks the compiled form matches the text."""
    return Thesaurus.from_compiled(compiled_text())


def compiled() -> str:
    """The compiled form of the shipped text, as ``builtin`` reads it."""
    return Thesaurus(shipped()).compiled()


if __name__ == "__main__":  # python -m paicli.memory.longterm.thesaurus: rewrite the compiled form
    from paicli.memory.longterm.thesaurus_data import COMPILED_PATH

    COMPILED_PATH.write_text(compiled(), encoding="utf-8")
    print(f"wrote {COMPILED_PATH}")
