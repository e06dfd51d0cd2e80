"""The shared ``long_term_memory.json``: two-level lock, reload, atomic replace (reference j.2, j.3).

Several paicli processes (ReAct, Plan, Team, two terminals) write the same file, so every mutation
re-reads the file under a thread lock plus a ``filelock`` on ``long_term_memory.json.lock`` and
replaces the file whole through a temporary file in the same directory: a concurrent writer's
entries are never lost and a reader sees the old file or the new one, never half of one.

A file that does not parse is copied to ``long_term_memory.json.corrupt-<millis>`` and treated as
"no data" (j.3): the entries this object already holds are kept, and the next write regenerates the
file from them. So that a fresh process does not regenerate it from nothing ("never replaced by
less"), every entry object that still parses on its own is salvaged from the damaged text and kept
too. The bytes that could not be read always survive in the backup; if the backup cannot be made,
the write is refused rather than lose them.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

from memory.errors import PaicliError
from memory.memory_entry import Entry, from_json, to_json

log = logging.getLogger(__name__)

FILE_NAME = "long_term_memory.json"  # reference (j.1)
KNOWN_ENTRIES = 100_000  # parsed and serialized entries kept between reads and writes
T = TypeVar("T")

# reference (j.2): one re-entrant lock per absolute path, process-wide, so two MemoryFile objects
# on the same path in one process serialise too.
_PATH_LOCKS: dict[str, threading.RLock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


class MemoryBackupError(PaicliError):
    """The unreadable memory file could not be backed up, so it was not overwritten."""


def _path_lock(path: Path) -> threading.RLock:
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(str(path), threading.RLock())


class MemoryFile:
    def __init__(self, path: str | os.PathLike[str], *, sync: bool = True) -> None:
        self.path = Path(os.path.abspath(path))
        self.sync = sync  # fsync before the replace; tests and benches may turn it off
        self._lock = _path_lock(self.path)
        self._flock = FileLock(f"{self.path}.lock", mode=0o600, thread_local=False)
        self._entries: list[Entry] = []
        self._marker: tuple[int, int, int] | None = None  # (inode, mtime_ns, size) last seen
        self._loaded = False

    # -- reads -------------------------------------------------------------------------------------
    def read(self) -> list[Entry]:
        """The entries, re-read only when the file changed on disk since we last saw it."""
        with self._lock:
            if not self._loaded or self._stat() != self._marker:
                self._reload()
            return list(self._entries)

    # -- writes ------------------------------------------------------------------------------------
    def mutate(self, fn: Callable[[list[Entry]], T]) -> T:
        """Run ``fn`` on the freshest entries (it edits the list in place) and save the result.

        The file is written only when ``fn`` changed the list; ``fn``'s return value is returned.
        """
        with self._lock, self._cross_process_lock():
            self._reload()
            entries = list(self._entries)
            result = fn(entries)
            if entries != self._entries:
                self._entries = entries
                self._save()
            return result

    # -- internals ---------------------------------------------------------------------------------
    @contextmanager
    def _cross_process_lock(self) -> Iterator[None]:
        """reference (j.2): without a usable lock file, fall back to the thread lock alone."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._flock.acquire()
        except OSError as error:
            log.warning("长期记忆文件锁不可用，仅使用进程内锁: %s", error)
            yield
            return
        try:
            yield
        finally:
            self._flock.release()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _reload(self) -> None:
        marker = self._stat()
        if marker is None:  # reference (j.3): a missing file is an empty list
            self._entries, self._marker, self._loaded = [], None, True
            return
        if marker == self._marker and self._loaded:
            return  # unchanged since we read or wrote it: skip the parse
        data = self.path.read_bytes()
        entries = _parse(data)
        if entries is None:
            self._backup(data)
            # j.3: the entries held in memory survive; whole objects still readable join them.
            self._entries = _merge(self._entries, salvage(data))
        else:
            self._entries = entries
        self._marker, self._loaded = marker, True

    def _backup(self, data: bytes) -> None:
        """Copy the unreadable bytes aside; a failure here must stop any later overwrite."""
        millis = int(time.time() * 1000)
        while True:
            target = self.path.with_name(f"{self.path.name}.corrupt-{millis}")
            try:
                with open(target, "xb") as out:  # never clobber an earlier backup
                    out.write(data)
                break
            except FileExistsError:
                millis += 1
            except OSError as error:
                raise MemoryBackupError(
                    f"长期记忆文件 {self.path} 无法解析且无法备份 ({error})；"
                    "请手动备份或修复该文件后重试") from error
        log.warning("长期记忆文件解析失败，已备份到 %s", target)

    def _save(self) -> None:
        """reference (j.2) step 5: temp file in the same directory, then an atomic replace."""
        data = dump(self._entries)
        fd, temp = tempfile.mkstemp(prefix=FILE_NAME, suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                if self.sync:
                    out.flush()
                    os.fsync(out.fileno())
            os.replace(temp, self.path)
        except OSError as error:
            # reference (j.2): logged, not thrown; the entries stay in memory for the next write.
            log.warning("长期记忆持久化失败: %s", error)
            _unlink(temp)
            return
        self._marker = self._stat()


def dump(entries: list[Entry]) -> bytes:
    """reference (j.1): a pretty-printed JSON array, text kept readable (no \\u escapes).

    Byte for byte what ``json.dumps(list, indent=2)`` writes, but each entry's text is made
    once and reused: ``indent`` sends ``json`` down its slow pure-Python path, and a write
    re-serializes every stored entry to change one."""
    if not entries:
        return b"[]\n"
    return b"[\n" + b",\n".join([_entry_text(e) for e in entries]) + b"\n]\n"


# Entries seen in this process, by id: the JSON object they were read from or written as, the
# (immutable) Entry, and its indented text once dumped. A re-read after another writer reuses
# every unchanged entry instead of parsing it again, and a dump reuses every entry's text.
_KNOWN: dict[str, tuple[dict[str, Any], Entry, bytes | None]] = {}


def _entry_text(entry: Entry) -> bytes:
    """The entry's lines in the file (indented once, UTF-8), made once per entry."""
    known = _KNOWN.get(entry.id)
    if known is None or known[1] is not entry or known[2] is None:
        raw = to_json(entry)
        text = "  " + json.dumps(raw, ensure_ascii=False, indent=2).replace("\n", "\n  ")
        known = _remember(entry.id, (raw, entry, text.encode()))
    return known[2]


def _entry_from(item: Any, now: datetime) -> Entry | None:
    ident = item.get("id") if isinstance(item, dict) else None
    known = _KNOWN.get(ident) if isinstance(ident, str) else None
    if known is not None and known[0] == item:
        return known[1]
    entry = from_json(item, now)
    if entry is not None:
        _remember(entry.id, (item, entry, None))
    return entry


def _remember(ident: str, known: tuple[dict[str, Any], Entry, bytes | None]):
    if len(_KNOWN) > KNOWN_ENTRIES:
        _KNOWN.clear()
    _KNOWN[ident] = known
    return known


def _parse(data: bytes) -> list[Entry] | None:
    """The entries, or None when the file as a whole is unreadable (then it is backed up)."""
    try:
        raw: Any = json.loads(data.decode("utf-8")) if data.strip() else []
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(raw, list):
        return None
    now = datetime.now(UTC)
    return [e for e in (_entry_from(item, now) for item in raw) if e is not None]


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


def _merge(held: list[Entry], salvaged: list[Entry]) -> list[Entry]:
    """Held entries win; a salvaged one joins unless its id is already there."""
    merged = {e.id: e for e in reversed(salvaged)}
    merged.update((e.id, e) for e in held)
    held_ids = {e.id for e in held}
    return held + [e for e in merged.values() if e.id not in held_ids][::-1]


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
