"""Long-term memory settings and how their text values are read (reference l, m).

Kept apart from the modules that use them so ``paicli.config.settings`` can parse them without
importing the memory code (and its LangChain dependency) when the CLI starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_THRESHOLD = 0.8  # reference (l): PAICLI_MEMORY_CONFLICT_THRESHOLD default
DEFAULT_STALE_DAYS = 30  # reference (m): PAICLI_MEMORY_STALE_DAYS default
MEMORY_HEADING = "## 相关长期记忆"  # reference (p.4): the injected block's heading


@dataclass(frozen=True)
class MemoryOptions:
    """How ``LongTermMemory`` behaves; ``paicli.config.settings`` builds it from the user's settings."""

    conflict_threshold: float = DEFAULT_THRESHOLD  # PAICLI_MEMORY_CONFLICT_THRESHOLD (l)
    stale_days: int = DEFAULT_STALE_DAYS  # PAICLI_MEMORY_STALE_DAYS (m)
    sync: bool = True  # fsync before each replace
    cache_dir: Path | None = None  # jieba's dictionary cache ($PAICLI_HOME/cache); None: jieba's default
    # Issue 35: whose global memories a database holds (PAICLI_USER); None: the OS user. The file
    # has no users: it ignores this.
    user: str | None = None


def parse_threshold(text: str | None) -> float:
    """reference (l): a double in (0, 1]; anything else gives the default 0.8."""
    try:
        value = float(str(text).strip())
    except (TypeError, ValueError):
        return DEFAULT_THRESHOLD
    return value if 0.0 < value <= 1.0 else DEFAULT_THRESHOLD


def parse_stale_days(text: str | None) -> int:
    """reference (m): a value that does not parse gives 30; a value ≤ 0 disables Rule 1."""
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return DEFAULT_STALE_DAYS
