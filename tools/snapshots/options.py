"""The turn snapshots' settings (``paicli/config/settings.py`` fills them); no imports, so settings stay light."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024
DEFAULT_KEEP = 50  # PAICLI_SNAPSHOT_KEEP: what /snapshot clean keeps
DEFAULT_MAX_FILE = 10 * MiB  # PAICLI_SNAPSHOT_MAX_FILE_MB: a larger file is left out
DEFAULT_MAX_SNAPSHOT = 200 * MiB  # PAICLI_SNAPSHOT_MAX_MB: new or changed content one snapshot may store


@dataclass(frozen=True)
class SnapshotOptions:
    keep: int = DEFAULT_KEEP
    max_file_bytes: int = DEFAULT_MAX_FILE
    max_snapshot_bytes: int = DEFAULT_MAX_SNAPSHOT
    # PAICLI_ALLOW_REVERT=yes: revert_turn may run under --yes without anyone to ask (process
    # environment only: a project's .env cannot grant it).
    allow_revert: bool = False
    lock_timeout: float = 60.0
