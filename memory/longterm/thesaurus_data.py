"""The developer thesaurus's data file, ``memory/longterm/data/thesaurus.txt``, read and split
once per process: ``paicli.memory.longterm.thesaurus`` builds its groups from it, and
``paicli.memory.longterm.terms`` takes from it the two-character words it must keep as terms.

One group per line, its members separated by ``|``; a line starting with ``#`` is a comment.
``data/thesaurus.compiled.json`` holds each group's members already cut into terms
(``paicli.memory.longterm.thesaurus``; rewrite it with ``python -m paicli.memory.longterm.thesaurus`` after
editing the text).
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path

DATA = ("paicli.memory.longterm", "data/thesaurus.txt")
COMPILED = ("paicli.memory.longterm", "data/thesaurus.compiled.json")
COMPILED_PATH = Path(__file__).parent / "data" / "thesaurus.compiled.json"  # where the source tree keeps it


def parse(text: str) -> list[list[str]]:
    lines = (line for line in text.splitlines() if not line.lstrip().startswith("#"))  # "C#" is a word
    return [[w.strip() for w in line.split("|")] for line in lines if "|" in line]


@lru_cache(maxsize=1)
def shipped() -> tuple[tuple[str, ...], ...]:
    """The shipped groups, read once per process."""
    package, name = DATA
    return tuple(tuple(group) for group in parse(files(package).joinpath(name).read_text(encoding="utf-8")))


def compiled_text() -> str:
    """The compiled groups (``paicli.memory.longterm.thesaurus.builtin`` reads them)."""
    package, name = COMPILED
    return files(package).joinpath(name).read_text(encoding="utf-8")
