"""The shared ``long_term_memory.json``: two-level lock, reload, atomic replace (reference j.2, j.3).

Several paicli processes (ReAct, Plan, Team, two terminals) write the same file, so every mutation
re-reads the file under a thread lock plus a ``filelock`` on ``long_term_memory.json.lock`` and
replaces the file whole through a temporary file in the same directory: a concurrent writer's
entries are never lost and a reader sees the old file or the new one, never half of one. What the
file holds beyond the entries paicli reads is kept through every rewrite (``paicli.memory.longterm.document``).

A file that does not parse is copied to ``long_term_memory.json.corrupt-<millis>`` and treated as
"no data" (j.3): the entries this object already holds are kept, and the next write regenerates the
file from them. So that a fresh process does not regenerate it from nothing ("never replaced by
less"), every entry object that still parses on its own is salvaged from the damaged text and kept
too. The bytes that could not be read always survive in the backup; if the backup cannot be made,
the write is refused rather than lose them.

A file, directory or lock file that cannot be used (permissions, a directory where the file should
be, a file where the directory should be) is one line naming the path: a read goes on with what
this object holds (nothing, in a fresh process) and warns once; a write is refused
(``MemoryAccessError``) and changes nothing, in the file or in memory.
"""

from __future__ import annotations

import errno
import operator
import os
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from filelock import FileLock, Timeout

from paicli.memory.errors import PaicliError
from paicli.memory.longterm.document import Document, dump_document, parse, salvage
from paicli.memory.longterm.entry import Entry
from paicli.memory.longterm.write_index import WriteIndex

FILE_NAME = "long_term_memory.json"  # reference (j.1)
TERMS_FILE_NAME = "long_term_memory.terms.npz"  # the retriever's term cache beside it (paicli.memory.longterm.term_cache)
T = TypeVar("T")
# The OS cannot lock files here at all (some network file systems): reference (j.2) falls back to
# the thread lock alone. Any other lock failure (permissions, a bad path) refuses the write.
_LOCKING_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS}

# reference (j.2): one re-entrant lock per absolute path, process-wide, so two MemoryFile objects
# on the same path in one process serialise too.
_PATH_LOCKS: dict[str, threading.RLock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


class MemoryAccessError(PaicliError):
    """The memory file, its directory or its lock cannot be used: the write was refused.
    Exit code 1, as for any command that failed (the user fixes the path, then retries)."""

    exit_code = 1


class MemoryBackupError(MemoryAccessError):
    """The unreadable memory file could not be backed up, so it was not overwritten."""


class MemoryWarning(UserWarning):
    """A memory problem the user should see, as one line (``paicli.errors``)."""


def _path_lock(path: Path) -> threading.RLock:
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(str(path), threading.RLock())


def _problem(what: str, path: str | os.PathLike[str], error: OSError) -> str:
    return f"{what} {path} ({error.strerror or type(error).__name__})"


def _refused(what: str, path: str | os.PathLike[str], error: OSError) -> MemoryAccessError:
    return MemoryAccessError(f"{_problem(what, path, error)}，未写入")


class MemoryFile:
    def __init__(self, path: str | os.PathLike[str], *, sync: bool = True) -> None:
        self.path = Path(os.path.abspath(path))
        self.lock_path = Path(f"{self.path}.lock")
        self.sync = sync  # fsync before the replace; tests and benches may turn it off
        self._lock = _path_lock(self.path)
        self._flock = FileLock(str(self.lock_path), mode=0o600, thread_local=False)
        self._document = Document()
        self._marker: tuple[int, int, int] | None = None  # (inode, mtime_ns, size) last seen
        self._loaded = False
        self._index: WriteIndex | None = None  # built on the first write, then kept up to date
        self._warned: set[str] = set()

    # -- reads -------------------------------------------------------------------------------------
    def read(self) -> list[Entry]:
        """The entries, re-read only when the file changed on disk since we last saw it."""
        with self._lock:
            try:
                if not self._loaded or self._stat() != self._marker:
                    self._reload()
            except OSError as error:
                self._warn(f"{_problem('无法读取长期记忆文件', self.path, error)}，本次不使用长期记忆")
            except MemoryAccessError as error:
                self._warn(f"{error}，本次不使用长期记忆")
            return list(self._document.entries)

    # -- writes ------------------------------------------------------------------------------------
    def mutate(self, fn: Callable[[list[Entry]], T]) -> T:
        """Run ``fn`` on the freshest entries (it edits the list in place) and save the result.

        The file is written only when ``fn`` changed the list; ``fn``'s return value is returned.
        Raises ``MemoryAccessError`` when the file cannot be read or written: nothing changed.
        """
        with self._lock, self._cross_process_lock():
            try:
                self._reload()
            except OSError as error:
                raise _refused("无法读取长期记忆文件", self.path, error) from error
            before = self._document.entries
            entries = list(before)
            result = fn(entries)
            if len(entries) != len(before) or any(map(operator.is_not, entries, before)):
                self._save(self._document.with_entries(entries))
            return result

    def write_index(self) -> WriteIndex:
        """The dedup / conflict index of the entries as loaded now: inside a ``mutate`` function,
        of the list it was handed (before it edits it). Built once, then updated by each write
        and re-read with only the entries that changed."""
        with self._lock:
            if self._index is None:
                self._index = WriteIndex(self._document.entries)
            return self._index

    @contextmanager
    def side_lock(self) -> Iterator[bool]:
        """Both locks, for a cache file beside this one (``paicli.memory.longterm.term_cache``), if they
        are free right now: yields False rather than wait for a writer."""
        if not self._lock.acquire(blocking=False):
            yield False
            return
        try:
            try:
                self._flock.acquire(timeout=0)
            except (Timeout, OSError):
                yield False
                return
            try:
                yield True
            finally:
                self._flock.release()
        finally:
            self._lock.release()

    # -- internals ---------------------------------------------------------------------------------
    def _become(self, document: Document) -> None:
        if self._index is not None:
            self._index.update(self._document.entries, document.entries)
        self._document = document

    @contextmanager
    def _cross_process_lock(self) -> Iterator[None]:
        """reference (j.2) step 2; a lock file that cannot be made refuses the write."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _refused("无法创建长期记忆目录", self.path.parent, error) from error
        if not self._acquire():
            yield
            return
        try:
            yield
        finally:
            self._flock.release()

    def _acquire(self) -> bool:
        """False when the OS cannot lock files here at all: then the thread lock alone (j.2)."""
        try:
            self._flock.acquire()
        except OSError as error:
            if error.errno in _LOCKING_UNSUPPORTED:
                self._warn(_problem("长期记忆文件锁不可用，仅使用进程内锁:", self.lock_path, error))
                return False
            raise _refused("无法使用长期记忆锁文件", self.lock_path, error) from error
        return True

    def _warn(self, text: str) -> None:
        """Each problem once: a session reads the file every turn."""
        if text not in self._warned:
            self._warned.add(text)
            warnings.warn(text, MemoryWarning, stacklevel=3)

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _reload(self) -> None:
        marker = self._stat()
        if marker is None:  # reference (j.3): a missing file is an empty list
            self._become(Document())
            self._marker, self._loaded = None, True
            return
        if marker == self._marker and self._loaded:
            return  # unchanged since we read or wrote it: skip the parse
        data = self.path.read_bytes()
        document = parse(data)
        if document is None:
            self._backup(data)
            # j.3: the entries held in memory survive; whole objects still readable join them.
            document = self._document.with_entries(_merge(self._document.entries, salvage(data)))
        self._become(document)
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
        self._warn(f"长期记忆文件解析失败，已备份到 {target}")

    def _save(self, document: Document) -> None:
        """reference (j.2) step 5: temp file in the same directory, then an atomic replace.

        Unlike the reference (which logs and goes on), a failure is raised: the user asked for
        this write and must learn it did not happen; the held entries stay as they were."""
        if os.path.lexists(self.path) and not os.access(self.path, os.W_OK):  # the user protected it
            error = PermissionError(errno.EACCES, "read-only file")
            raise _refused("长期记忆文件只读", self.path, error)
        data = dump_document(document)
        try:
            fd, temp = tempfile.mkstemp(prefix=FILE_NAME, suffix=".tmp", dir=self.path.parent)
        except OSError as error:
            raise _refused("无法写入长期记忆目录", self.path.parent, error) from error
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                if self.sync:
                    out.flush()
                    os.fsync(out.fileno())
            os.replace(temp, self.path)
        except OSError as error:
            _unlink(temp)
            raise _refused("无法写入长期记忆文件", self.path, error) from error
        self._become(document)
        self._marker = self._stat()


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
