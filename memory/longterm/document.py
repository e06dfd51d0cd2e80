"""The text of ``long_term_memory.json``: parse and dump without losing what paicli does not know.

The file is shared with PaiCLI and other paicli versions, so it may hold what this version does not
understand. A rewrite (every mutation is one) must give all of it back:
- an entry paicli reads keeps the JSON object it was read from (``Entry.raw``) and is written back
  as that object unless paicli changed it;
- any other item of the list (an unknown type, no text content, not an object) is a ``Foreign``
  item, written back verbatim after the readable entry it followed;
- the top level is PaiCLI's array (reference j.1), or an object holding the list under
  ``entries`` / ``memories``: then the object's other keys are kept and the list stays in place.
What cannot be kept this way (text that is not JSON or not UTF-8, a top level with no list) makes
``parse`` return None, and the caller backs the bytes up before any rewrite (j.3).

Known limit: JSON lets an object repeat a key; only the last value survives a rewrite (as in
every JSON library paicli could use; checking for it would double the parse time).
"""

from __future__ import annotations

import gc
import json
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from paicli.memory.longterm.entry import Entry, from_json, to_json

CONTAINER_KEYS = ("entries", "memories")  # where a top-level object may hold the list
KNOWN_ENTRIES = 100_000  # parsed and serialized entries kept between reads and writes
# Where a lone surrogate can come from in text that decoded as UTF-8: a JSON escape ("\ud800").
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


@dataclass(frozen=True, eq=False)
class Foreign:
    """An item of the list paicli cannot read as an entry: kept, written back as it was."""

    value: Any


Item = Entry | Foreign


@dataclass(frozen=True)
class Document:
    items: tuple[Item, ...] = ()
    top: dict[str, Any] | None = None  # a top-level object; the list is its ``key``
    key: str | None = None

    @cached_property
    def entries(self) -> list[Entry]:
        """What paicli reads, writes and searches, in file order."""
        return [item for item in self.items if isinstance(item, Entry)]

    @cached_property
    def foreign(self) -> int:
        return len(self.items) - len(self.entries)

    def with_entries(self, entries: list[Entry]) -> Document:
        """``entries`` (the result of a mutation), each foreign item after the entry it followed.

        An item whose entry is gone follows the nearest earlier entry still there, or leads."""
        if not self.foreign:
            return replace(self, items=tuple(entries))
        old, new = _keys(self.entries, entries)
        alive, anchor, position = set(new), None, 0
        follows: dict[Any, list[Item]] = {}
        for item in self.items:
            if isinstance(item, Foreign):
                follows.setdefault(anchor, []).append(item)
            else:
                anchor = old[position] if old[position] in alive else anchor
                position += 1
        placed: list[Item] = follows.pop(None, [])
        start = 0
        for end in sorted(i + 1 for i, key in enumerate(new) if key in follows):
            placed += entries[start:end]
            placed += follows[new[end - 1]]
            start = end
        return replace(self, items=tuple(placed + entries[start:]))


def _keys(before: list[Entry], after: list[Entry]) -> tuple[list[Any], list[Any]]:
    """Entry keys on both sides: the id, or (id, occurrence) when some id is stored twice."""
    old, new = [e.id for e in before], [e.id for e in after]
    if len(set(old)) == len(old) and len(set(new)) == len(new):
        return old, new
    return _numbered(old), _numbered(new)


def _numbered(ids: list[str]) -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    out = []
    for ident in ids:
        seen[ident] = seen.get(ident, -1) + 1
        out.append((ident, seen[ident]))
    return out


def parse(data: bytes) -> Document | None:
    """The document, or None when the file as a whole cannot be read (then it is backed up).

    The cyclic garbage collector is paused meanwhile: what is built here holds no cycles, and
    its passes over the growing heap are a third of a new process's parse at 10,000 entries."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _parse(data)
    finally:
        if paused:
            gc.enable()


def _parse(data: bytes) -> Document | None:
    try:
        raw: Any = json.loads(data.decode("utf-8")) if data.strip() else []
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    top, key = None, None
    if isinstance(raw, dict):
        key = next((k for k in CONTAINER_KEYS if isinstance(raw.get(k), list)), None)
        if key is None:
            return None
        top, raw = raw, raw[key]
    if not isinstance(raw, list):
        return None
    now, encodable = datetime.now(UTC), SURROGATE_ESCAPE.search(data) is None
    return Document(tuple(_entry_from(item, now, encodable) or Foreign(item) for item in raw), top, key)


def dump_document(document: Document) -> bytes:
    if document.top is None:
        return dump(document.items)
    top = {**document.top, document.key: [_value(item) for item in document.items]}  # key keeps its place
    return _json(top) + b"\n"


def dump(items: tuple[Item, ...] | list[Item]) -> bytes:
    """reference (j.1): a pretty-printed JSON array, text kept readable (no \\u escapes).

    Byte for byte what ``json.dumps(list, indent=2)`` writes, but each entry's text is made
    once and reused: ``indent`` sends ``json`` down its slow pure-Python path, and a write
    re-serializes every stored entry to change one."""
    if not items:
        return b"[]\n"
    return b"[\n" + b",\n".join([_item_text(item) for item in items]) + b"\n]\n"


def _value(item: Item) -> Any:
    return item.value if isinstance(item, Foreign) else to_json(item)


def _json(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2).encode()
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") read from the file: keep it escaped
        return json.dumps(value, indent=2).encode()


# Entries seen in this process, by id: the JSON object they were read from or written as, the
# (immutable) Entry, and its indented text once dumped. A re-read after another writer reuses
# every unchanged entry instead of parsing it again, and a dump reuses every entry's text.
_KNOWN: dict[str, tuple[dict[str, Any], Entry, bytes | None]] = {}


def _item_text(item: Item) -> bytes:
    """The item's lines in the file (indented once, UTF-8); an entry's made once."""
    if isinstance(item, Foreign):
        return _indented(item.value)
    known = _KNOWN.get(item.id)
    if known is None or known[1] is not item or known[2] is None:
        raw = to_json(item)
        known = _remember(item.id, (raw, item, _indented(raw)))
    return known[2]


def _indented(value: Any) -> bytes:
    return b"  " + _json(value).replace(b"\n", b"\n  ")


def _entry_from(item: Any, now: datetime, encodable: bool = False) -> Entry | None:
    ident = item.get("id") if isinstance(item, dict) else None
    known = _KNOWN.get(ident) if isinstance(ident, str) else None
    if known is not None and known[0] == item:
        return known[1]
    entry = from_json(item, now, encodable=encodable)
    if entry is not None:
        _remember(entry.id, (item, entry, None))
    return entry


def _remember(ident: str, known: tuple[dict[str, Any], Entry, bytes | None]):
    if len(_KNOWN) > KNOWN_ENTRIES:
        _KNOWN.clear()
    _KNOWN[ident] = known
    return known


def salvage(data: bytes) -> list[Entry]:
    """Every JSON object in a damaged file that parses on its own and reads as an entry."""
    text, decoder, now = data.decode("utf-8", errors="replace"), json.JSONDecoder(), datetime.now(UTC)
    found: list[Entry] = []
    start = text.find("{")
    while start != -1:
        try:
            raw, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)  # a torn object: try the objects inside it
            continue
        entry = from_json(raw, now) if isinstance(raw, dict) and "content" in raw else None
        if entry is not None:
            found.append(entry)
        start = text.find("{", end if entry is not None else start + 1)
    return found
