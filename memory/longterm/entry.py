"""One long-term memory entry in PaiCLI's JSON shape (reference j.1), readable both ways.

PaiCLI writes camelCase keys in a fixed order; a PaiCLI user's file must load unchanged and what we
write must load in PaiCLI. Loading is more tolerant than PaiCLI's, because the file is shared with
PaiCLI and other paicli versions: missing or unreadable times are filled in, metadata values become
strings, a missing token count is re-estimated, an entry without an id gets a derived one
(``anon-`` + a hash of its content, never written to the file), and an entry read from the file
keeps the JSON object it came from (``Entry.raw``), so a rewrite gives back every field and shape
paicli does not know.
What still cannot be read as an entry (no text content, an unknown type) is not an ``Entry``;
``paicli.memory.longterm.document`` keeps it in the file untouched.

Metadata spellings (Q12, docs/behavior.md#decisions): auto-extracted entries are written with S1's names
``source=auto_extracted`` / ``verification=unverified``; PaiCLI's code names
``source=auto_user_fact`` / ``verification_pending=true`` are read as the same thing.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from paicli.memory.longterm.canonical import canonicalize
from paicli.memory.longterm.instants import format_instant, parse_instant, read_instant  # noqa: F401 (re-exported)
from paicli.memory.tokens import estimate_text

TYPES = ("CONVERSATION", "FACT", "SUMMARY", "TOOL_RESULT")  # reference (j.1); only FACT is written
SOURCE_EXPLICIT = "fact"  # reference (j.1): /save, save_memory, browser hint
SOURCE_AUTO = "auto_extracted"  # Q12: S1's name, written
SOURCE_AUTO_CODE = "auto_user_fact"  # Q12: PaiCLI code's name, read
VERIFICATION_KEY, VERIFICATION_UNVERIFIED = "verification", "unverified"  # Q12: written
PENDING_KEY = "verification_pending"  # Q12: PaiCLI code's name, read
SOURCE_FILES_KEY = "source_files"  # Q13: comma-joined project-relative paths
SCOPE_PROJECT, SCOPE_GLOBAL = "project", "global"
# Issue 35: with a database, whose global memory this is (``PAICLI_USER``, else the OS user): it
# lives in that user's namespace (``paicli.memory.longterm.store``). Never written to the file.
OWNER_KEY = "owner"
ID_PREFIX = "fact-"
DERIVED_ID_PREFIX = "anon-"  # an entry stored without an id; see derived_id
# The fields paicli reads (both spellings); any other field of an entry is carried in Entry.raw.
KNOWN_KEYS = frozenset({"id", "content", "type", "timestamp", "lastVerifiedAt", "last_verified_at",
                        "metadata", "tokenCount", "token_count"})


@dataclass(frozen=True)
class Entry:
    id: str
    content: str
    type: str = "FACT"
    timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))
    last_verified_at: datetime | None = None  # None only while constructing: filled from timestamp
    metadata: Mapping[str, str] = field(default_factory=dict)
    token_count: int = -1  # -1: estimate from content
    # The JSON object this entry is written as: the one it was read from (or put through the
    # store), so fields and shapes paicli does not know survive a rewrite. None: PaiCLI's shape.
    # Never mutated: with_last_verified_at patches a copy; any other edit makes a new Entry.
    raw: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Frozen all the way down: a shared entry must not change under another thread.
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        if self.last_verified_at is None:
            object.__setattr__(self, "last_verified_at", self.timestamp)
        if self.token_count < 0:
            object.__setattr__(self, "token_count", estimate_text(self.content))

    @cached_property
    def domain(self) -> tuple[str, str, str | None] | None:
        """reference (k) sameDomain as a key: type, scope and, for project scope, the project.
        None for a project entry without a project key, which is never deduplicated."""
        if self.scope != SCOPE_PROJECT:
            return (self.type, self.scope, None)
        project = self.project
        return (self.type, self.scope, project) if project and project.strip() else None

    @property
    def scope(self) -> str:
        """reference (j.1): anything but "project" (any case), including nothing, means global."""
        value = self.metadata.get("scope", "")
        return SCOPE_PROJECT if value.lower() == SCOPE_PROJECT else SCOPE_GLOBAL

    @property
    def project(self) -> str | None:
        return self.metadata.get("project")

    @property
    def verification_pending(self) -> bool:
        """Q12: either spelling marks an entry the user has not confirmed."""
        meta = self.metadata
        return (meta.get(PENDING_KEY, "").lower() == "true"
                or meta.get(VERIFICATION_KEY, "").lower() == VERIFICATION_UNVERIFIED)

    @property
    def source_files(self) -> list[str]:
        return [p.strip() for p in self.metadata.get(SOURCE_FILES_KEY, "").split(",") if p.strip()]

    def with_last_verified_at(self, when: datetime) -> Entry:
        """reference (j.1): verifying also clears the pending mark (both spellings, Q12)."""
        meta = {k: v for k, v in self.metadata.items() if k not in (PENDING_KEY, VERIFICATION_KEY)}
        return replace(self, last_verified_at=when, metadata=meta, raw=_verified_raw(self.raw, when))


def _verified_raw(raw: dict[str, Any] | None, when: datetime) -> dict[str, Any] | None:
    """The read object with only the verification time and the pending marks changed."""
    if raw is None:
        return None
    out = dict(raw)
    snake = "last_verified_at" in raw and "lastVerifiedAt" not in raw  # keep the writer's spelling
    out["last_verified_at" if snake else "lastVerifiedAt"] = format_instant(when)
    if isinstance(raw.get("metadata"), dict):
        out["metadata"] = {k: v for k, v in raw["metadata"].items() if k not in (PENDING_KEY, VERIFICATION_KEY)}
    return out


def new_id() -> str:
    """A random id as PaiCLI makes them (``fact-`` + 8 chars of a random UUID): only for an item
    put through the store without a key (``paicli.memory.longterm.store``)."""
    return ID_PREFIX + uuid.uuid4().hex[:8]


def content_id(content: str, *, scope: str, project: str | None = None, kind: str = "FACT",
               attempt: int = 0) -> str:
    """The id of a fact paicli writes (issue 35): ``fact-`` + 8 hex chars of the SHA-256 of its
    type, scope, project key and canonical text (reference k), so the same fact written twice,
    by any process on any machine, is the same key, and a second write of it an idempotent put.
    ``attempt`` > 0: the next id of a fixed series, for the rare fact whose id another entry
    already holds (``paicli.memory.longterm.writes``)."""
    scope = SCOPE_GLOBAL if scope.lower() == SCOPE_GLOBAL else SCOPE_PROJECT
    parts = [kind, scope, project or "" if scope == SCOPE_PROJECT else "", canonicalize(content)]
    if attempt:
        parts.append(str(attempt))
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return ID_PREFIX + digest[:8]


def new_fact(content: str, *, scope: str = SCOPE_PROJECT, project: str | None = None,
             now: datetime | None = None, extra: Mapping[str, str] | None = None) -> Entry:
    """An explicit fact (source=fact); ``scope`` is normalised as MemoryManager does (j.4), and the
    id derived from what the fact says and where (``content_id``)."""
    scope = SCOPE_GLOBAL if scope.lower() == SCOPE_GLOBAL else SCOPE_PROJECT
    meta = {"source": SOURCE_EXPLICIT, "scope": scope}
    if scope == SCOPE_PROJECT and project:
        meta["project"] = project
    meta.update(extra or {})
    when = now or datetime.now(UTC)
    return Entry(content_id(content, scope=scope, project=project), content, "FACT", when, when, meta)


def with_next_id(entry: Entry, attempt: int) -> Entry:
    """``entry`` under the ``attempt``-th id of its series (``content_id``)."""
    ident = content_id(entry.content, scope=entry.scope, project=entry.project, kind=entry.type, attempt=attempt)
    raw = None if entry.raw is None else {**entry.raw, "id": ident}
    return replace(entry, id=ident, raw=raw)


def owner_of(entry: Entry) -> str | None:
    """Issue 35: the user a global memory belongs to in a database, or None (shared: the file, a
    database written before issue 35)."""
    owner = entry.metadata.get(OWNER_KEY, "").strip() if entry.scope == SCOPE_GLOBAL else ""
    return owner or None


def normalize_project_key(path: str | os.PathLike[str] | None = None) -> str:
    """reference (j.1): absolute, normalised, then the real path when it exists."""
    absolute = Path(os.path.normpath(os.path.abspath(path or os.getcwd())))
    return str(absolute.resolve()) if absolute.exists() else str(absolute)


def is_visible_in_project(entry: Entry, project_key: str | None) -> bool:
    if entry.scope == SCOPE_GLOBAL:
        return True
    return bool(project_key and project_key.strip()) and entry.project == project_key


# -- JSON ------------------------------------------------------------------------------------------
def to_json(entry: Entry) -> dict[str, Any]:
    """The object written for ``entry``: what it was read as, else PaiCLI's shape (j.1)."""
    return dict(entry.raw) if entry.raw is not None else _canonical(entry)


def _canonical(entry: Entry) -> dict[str, Any]:
    """reference (j.1): PaiCLI's key order."""
    return {"id": entry.id, "content": entry.content, "type": entry.type,
            "timestamp": format_instant(entry.timestamp),
            "lastVerifiedAt": format_instant(entry.last_verified_at or entry.timestamp),
            "metadata": dict(entry.metadata), "tokenCount": entry.token_count}


def normalized(entry: Entry) -> Entry:
    """The known fields in PaiCLI's shape, any other field of ``raw`` kept after them."""
    extra = {k: v for k, v in (entry.raw or {}).items() if k not in KNOWN_KEYS}
    return replace(entry, raw={**_canonical(entry), **extra} if extra else None)


def from_json(raw: Any, now: datetime, *, encodable: bool = False) -> Entry | None:
    """One entry, or None when paicli cannot read it as one (the file keeps it anyway).
    ``encodable``: the caller knows no string in ``raw`` holds a lone surrogate (``_printable``)."""
    if not isinstance(raw, dict):
        return None
    try:
        return _entry_from(raw, now, encodable)
    except (TypeError, ValueError, AttributeError):
        return None


def _entry_from(raw: dict[str, Any], now: datetime, encodable: bool = False) -> Entry | None:
    content, kind = raw.get("content"), str(raw.get("type") or "FACT").upper()
    if not isinstance(content, str) or kind not in TYPES:
        return None
    stamp = _time(raw, ("timestamp",)) or now
    verified = _time(raw, ("lastVerifiedAt", "last_verified_at")) or stamp
    count = raw.get("tokenCount", raw.get("token_count"))
    count = count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else -1
    if encodable:
        return Entry(_id(raw.get("id"), content), content, kind, stamp, verified,
                     _metadata(raw.get("metadata"), encodable), count, raw)
    content = _printable(content)
    return Entry(_printable(_id(raw.get("id"), content)), content, kind, stamp, verified,
                 _metadata(raw.get("metadata")), count, raw)


def _printable(text: str) -> str:
    """A lone surrogate ("\\ud800" in the file) can be neither printed nor sent to the model: it
    reads as "?"; the file keeps it (``Entry.raw``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _id(value: Any, content: str) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return derived_id(content)


def derived_id(content: str) -> str:
    """An id for an entry stored without one, so /memory can show, verify and delete it.
    Derived from the content (stable across processes and a verify) and never written back:
    the stored object stays as its writer left it."""
    return DERIVED_ID_PREFIX + hashlib.sha1(content.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _time(raw: dict[str, Any], keys: tuple[str, ...]) -> datetime | None:
    """The first of ``keys`` that holds a readable instant (an unreadable one counts as missing)."""
    for key in keys:
        when = read_instant(raw.get(key))
        if when is not None:
            return when
    return None


def _metadata(raw: Any, encodable: bool = False) -> dict[str, str]:
    """reference (j.1): values are stringified (Java's way: booleans lower-case, null dropped)."""
    if not isinstance(raw, dict):
        return {}
    if encodable:
        return {str(k): v if type(v) is str else _java_string(v) for k, v in raw.items() if v is not None}
    return {_printable(str(k)): _printable(_java_string(v)) for k, v in raw.items() if v is not None}


def _java_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)
