"""Instants in the memory file: written as Java's ``Instant.toString`` (reference j.1), read in
whatever shape another writer used.

PaiCLI writes ISO-8601 strings, but the file is shared: Jackson without the JSR-310 module writes
epoch numbers, scripts write milliseconds, sometimes as strings. A value that reads as none of
these is "no time" (the caller falls back as for a missing one), never a reason to drop the entry.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

# Java's Instant.parse accepts up to 9 fractional digits; Python's datetime holds 6.
_FRACTION = re.compile(r"(\.\d{6})\d+")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
# Below this an epoch number is seconds (Jackson's decimal seconds), above it milliseconds:
# 1e11 s is the year 5138, 1e11 ms is 1973.
_MILLIS_FROM = 1e11


def format_instant(when: datetime) -> str:
    """Java ``Instant.toString``: UTC, ``Z``, fraction only when non-zero, in groups of 3."""
    when = when.astimezone(UTC)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if when.microsecond:
        micros = f"{when.microsecond:06d}"
        text += "." + (micros[:3] if micros.endswith("000") else micros)
    return text + "Z"


def parse_instant(text: str) -> datetime:
    """An ISO-8601 instant; ValueError when it is not one."""
    when = datetime.fromisoformat(_FRACTION.sub(r"\1", text.strip()))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def read_instant(value: Any) -> datetime | None:
    """An ISO string, epoch seconds or milliseconds (number or digits); None when unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if type(value) is str and value.endswith("Z"):  # the usual shape, read as parse_instant would
        try:  # (fromisoformat drops fraction digits beyond 6 itself; no number ends in "Z")
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    try:
        if isinstance(value, int | float):
            return _from_epoch(float(value))
        text = str(value).strip()
        return _from_epoch(float(text)) if _NUMBER.fullmatch(text) else parse_instant(text)
    except (ValueError, OverflowError, OSError):
        return None


def _from_epoch(number: float) -> datetime:
    seconds = number / 1000 if abs(number) >= _MILLIS_FROM else number
    return datetime.fromtimestamp(seconds, UTC)
