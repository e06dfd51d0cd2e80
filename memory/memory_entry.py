"""One long-term memory entry in PaiCLI's JSON shape (reference j.1), readable both ways.

PaiCLI writes camelCase keys in a fixed order; a PaiCLI user's file must load unchanged and what we
write must load in PaiCLI. Loading is tolerant the way PaiCLI's is: missing times are filled in,
metadata values become strings, a missing token count is re-estimated, and an entry that cannot be
parsed is skipped rather than failing the whole file.

Metadata spellings (Q12, ARCHITECTURE.md): auto-extracted entries are written with S1's names
``source=auto_extracted`` / ``verification=unverified``; PaiCLI's code names
``source=auto_user_fact`` / ``verification_pending=true`` are read as the same thing.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from memory.tokens import estimate_text

TYPES = ("CONVERSATION", "FACT", "SUMMARY", "TOOL_RESULT")  # reference (j.1); only FACT is written
SOURCE_EXPLICIT = "fact"  # reference (j.1): /save, save_memory, browser hint
SOURCE_AUTO = "auto_extracted"  # Q12: S1's name, written
SOURCE_AUTO_CODE = "auto_user_fact"  # Q12: PaiCLI code's name, read
VERIFICATION_KEY, VERIFICATION_UNVERIFIED = "verification", "unverified"  # Q12: written
PENDING_KEY = "verification_pending"  # Q12: PaiCLI code's name, read
SOURCE_FILES_KEY = "source_files"  # Q13: comma-joined project-relative paths
SCOPE_PROJECT, SCOPE_GLOBAL = "project", "global"

# Java's Instant.parse accepts up to 9 fractional digits; Python's datetime holds 6.
_FRACTION = re.compile(r"(\.\d{6})\d+")


@dataclass(frozen=True)
class Entry:
    id: str
    content: str
    type: str = "FACT"
    timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))
    last_verified_at: datetime | None = None  # None only while constructing: filled from timestamp
    metadata: Mapping[str, str] = field(default_factory=dict)
    token_count: int = -1  # -1: estimate from content

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
        return replace(self, last_verified_at=when, metadata=meta)


def new_id() -> str:
    return "fact-" + uuid.uuid4().hex[:8]  # reference (j.1): the first 8 chars of a random UUID


def new_fact(content: str, *, scope: str = SCOPE_PROJECT, project: str | None = None,
             now: datetime | None = None, extra: Mapping[str, str] | None = None) -> Entry:
    """An explicit fact (source=fact); ``scope`` is normalised as MemoryManager does (j.4)."""
    scope = SCOPE_GLOBAL if scope.lower() == SCOPE_GLOBAL else SCOPE_PROJECT
    meta = {"source": SOURCE_EXPLICIT, "scope": scope}
    if scope == SCOPE_PROJECT and project:
        meta["project"] = project
    meta.update(extra or {})
    when = now or datetime.now(UTC)
    return Entry(new_id(), content, "FACT", when, when, meta)


def normalize_project_key(path: str | os.PathLike[str] | None = None) -> str:
    """reference (j.1): absolute, normalised, then the real path when it exists."""
    absolute = Path(os.path.normpath(os.path.abspath(path or os.getcwd())))
    return str(absolute.resolve()) if absolute.exists() else str(absolute)


def is_visible_in_project(entry: Entry, project_key: str | None) -> bool:
    if entry.scope == SCOPE_GLOBAL:
        return True
    return bool(project_key and project_key.strip()) and entry.project == project_key


# -- JSON ------------------------------------------------------------------------------------------
def format_instant(when: datetime) -> str:
    """Java ``Instant.toString``: UTC, ``Z``, fraction only when non-zero, in groups of 3."""
    when = when.astimezone(UTC)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if when.microsecond:
        micros = f"{when.microsecond:06d}"
        text += "." + (micros[:3] if micros.endswith("000") else micros)
    return text + "Z"


def parse_instant(text: str) -> datetime:
    when = datetime.fromisoformat(_FRACTION.sub(r"\1", text.strip()))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def to_json(entry: Entry) -> dict[str, Any]:
    """reference (j.1): PaiCLI's key order."""
    return {"id": entry.id, "content": entry.content, "type": entry.type,
            "timestamp": format_instant(entry.timestamp),
            "lastVerifiedAt": format_instant(entry.last_verified_at or entry.timestamp),
            "metadata": dict(entry.metadata), "tokenCount": entry.token_count}


def from_json(raw: Any, now: datetime) -> Entry | None:
    """One entry, or None when it cannot be parsed (reference j.1: skipped silently)."""
    if not isinstance(raw, dict):
        return None
    try:
        return _entry_from(raw, now)
    except (TypeError, ValueError, AttributeError):
        return None


def _entry_from(raw: dict[str, Any], now: datetime) -> Entry | None:
    ident, content, kind = raw.get("id"), raw.get("content"), str(raw.get("type") or "FACT").upper()
    if not isinstance(ident, str) or not ident or not isinstance(content, str) or kind not in TYPES:
        return None
    stamp = _time(raw, ("timestamp",)) or now
    verified = _time(raw, ("lastVerifiedAt", "last_verified_at")) or stamp
    count = raw.get("tokenCount", raw.get("token_count"))
    count = count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else -1
    return Entry(ident, content, kind, stamp, verified, _metadata(raw.get("metadata")), count)


def _time(raw: dict[str, Any], keys: tuple[str, ...]) -> datetime | None:
    for key in keys:
        if raw.get(key) is not None:
            return parse_instant(str(raw[key]))
    return None


def _metadata(raw: Any) -> dict[str, str]:
    """reference (j.1): values are stringified (Java's way: booleans lower-case, null dropped)."""
    if not isinstance(raw, dict):
        return {}
    return {str(k): _java_string(v) for k, v in raw.items() if v is not None}


def _java_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)
