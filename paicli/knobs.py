"""Memory and web settings (reference j–o, t, v.7, x), parsed for ``paicli.settings``.

``get`` is the settings loader's lookup (environment > ``.env`` > ``config.json``). Values
the reference says to tolerate keep its defaults instead of failing: a stale-day count that
does not parse gives 30, a conflict threshold outside (0, 1] gives 0.8.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory.longterm.config import DEFAULT_STALE_DAYS, DEFAULT_THRESHOLD, parse_stale_days, parse_threshold

Get = Callable[[str], "str | None"]
OFF_WORDS = frozenset({"false", "0", "no", "off"})  # reference (n.1, o.1)


@dataclass(frozen=True)
class MemoryKnobs:
    stale_days: int = DEFAULT_STALE_DAYS  # PAICLI_MEMORY_STALE_DAYS (m)
    conflict_threshold: float = DEFAULT_THRESHOLD  # PAICLI_MEMORY_CONFLICT_THRESHOLD (l)
    auto_extract: bool = True  # PAICLI_MEMORY_AUTO_EXTRACT_ENABLED (n.1): unset means on
    external_guard: bool = True  # PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT (o.1): default on


@dataclass(frozen=True)
class WebKnobs:
    searxng_url: str | None = None  # PAICLI_SEARXNG_URL: web_search's endpoint
    allow_hosts: tuple[str, ...] = ()  # PAICLI_WEB_ALLOW_HOSTS: may be private or loopback
    audit_dir: Path | None = None  # PAICLI_AUDIT_DIR (v.7); None: $PAICLI_HOME/audit


def _on(raw: str | None) -> bool:
    return raw is None or raw.strip().lower() not in OFF_WORDS


def memory_knobs(get: Get) -> MemoryKnobs:
    return MemoryKnobs(
        stale_days=parse_stale_days(get("PAICLI_MEMORY_STALE_DAYS")),
        conflict_threshold=parse_threshold(get("PAICLI_MEMORY_CONFLICT_THRESHOLD")),
        auto_extract=_on(get("PAICLI_MEMORY_AUTO_EXTRACT_ENABLED")),
        external_guard=_on(get("PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT")),
    )


def web_knobs(get: Get) -> WebKnobs:
    hosts = get("PAICLI_WEB_ALLOW_HOSTS") or ""
    audit = get("PAICLI_AUDIT_DIR")
    return WebKnobs(
        searxng_url=get("PAICLI_SEARXNG_URL"),
        allow_hosts=tuple(h.strip().lower() for h in hosts.split(",") if h.strip()),
        audit_dir=Path(audit).expanduser() if audit else None,
    )

