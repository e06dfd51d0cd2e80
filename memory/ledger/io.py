"""A ledger file on disk: appends, the cross-process lock, fsync policy, torn-tail repair.

Durability (issue 3, reference h.1): a line is one ``os.write`` on an O_APPEND descriptor, under
``<thread>.jsonl.lock`` (the *append lock*), which also serialises sequence numbers across
processes, so a reader never sees two half lines and two writers never interleave. A process that
holds the session's turn lock (``paicli.memory.ledger.owner``) is its only writer for the turn, so it
holds the append lock for the whole turn too (``hold``) instead of taking it for every write: a
lock round trip through ``filelock`` costs more than the write (issue 30). A write from elsewhere
meanwhile finds the lock taken and asks ``busy`` (which refuses it while another process's turn
runs) rather than waiting for the turn to end. ``fsync="turn"`` (default) syncs after a
checkpoint with no task left to run (a run ended), after an input checkpoint (the user's words are
on disk before the model is called), after writes carrying an interrupt or an error, and after
the saver's own events; ``"always"`` and ``"never"`` do what they say.

Reading is incremental: ``LedgerFile`` remembers how far it read and which file it read (device,
inode), and hands back only the complete lines appended since. A last line without its newline is
torn when no writer holds the lock; before an append, a newline closes it off so the next event
starts on a line of its own.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, TASKS

FSYNC_POLICIES = ("turn", "always", "never")
APPEND_POLL = 0.005  # seconds between two tries of an append lock another writer holds
_START = "__start__"


@dataclass(slots=True)
class Appended:
    """What a look at the file found since the last one."""

    lines: list[bytes]  # complete lines, without their newlines
    restarted: bool  # the file was replaced, truncated or removed: what was read before is void
    torn: int  # 1 when an unfinished last line is seen for the first time


class LedgerFile:
    """One ledger file: where reading got to, and appends under ``flock``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.flock = FileLock(f"{path}.lock", mode=0o600, thread_local=False)
        self.held = False  # this process holds the append lock for its turn (``hold``)
        self.forget()

    @contextmanager
    def appending(self, busy: Callable[[], None]) -> Iterator[None]:
        """The append lock for one write: already held for this process's turn, or taken now.
        ``busy`` is asked each time the lock is found taken; it raises to give up."""
        if self.held:
            yield
            return
        self._take(busy)
        try:
            yield
        finally:
            self.flock.release()

    def hold(self) -> None:
        """Keep the append lock until ``let_go`` (the caller holds the turn lock: any other
        holder is a single write of another process, soon done)."""
        if not self.held:
            self._take(lambda: None)
            self.held = True

    def let_go(self) -> None:
        if self.held:
            self.held = False
            self.flock.release()

    def _take(self, busy: Callable[[], None]) -> None:
        while True:
            try:
                self.flock.acquire(timeout=0)
                return
            except Timeout:
                busy()
                time.sleep(APPEND_POLL)

    def forget(self) -> None:
        """Start over: the next look reads the file from its first byte."""
        self.offset, self.inode, self.torn_at = 0, None, None

    def read_new(self, writing: bool) -> Appended:
        """The lines appended since the last look; ``writing``: the caller holds ``flock``."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            restarted = self.inode is not None
            self.forget()
            return Appended([], restarted, 0)
        restarted = self.inode not in (None, _identity(stat)) or stat.st_size < self.offset
        if restarted:
            self.forget()
        self.inode = _identity(stat)
        if stat.st_size == self.offset:
            return Appended([], restarted, 0)
        data = read_range(self.path, self.offset, stat.st_size)
        end = data.rfind(b"\n") + 1
        self.offset += end
        torn = end < len(data) and self._tail_is_torn(stat.st_size, writing)
        return Appended(data[:end].split(b"\n")[:-1], restarted, torn)

    def _tail_is_torn(self, size: int, writing: bool) -> int:
        if not (writing or self._unlocked_and_still(size)):
            return 0  # a writer is mid-line: the rest is coming
        seen_before = self.torn_at == self.offset  # counted in one warning, not in every look
        self.torn_at = self.offset
        if writing:  # close it off so the next event starts on a line of its own
            _append(self.path, b"\n")
            self.offset, self.torn_at = size + 1, None
        return 0 if seen_before else 1

    def _unlocked_and_still(self, size: int) -> bool:
        """An unfinished last line is torn if no writer holds the lock and the file stays put."""
        try:
            self.flock.acquire(timeout=0)
        except Timeout:
            return False
        try:
            return os.stat(self.path).st_size == size
        finally:
            self.flock.release()

    def append(self, lines: list[bytes], sync: bool) -> bool:
        """Write ``lines`` at the end (caller holds ``flock``); True when the file is new."""
        created = self.inode is None
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            for line in lines:  # one write per line: a reader never sees two half lines
                _write_all(fd, line)
            if sync:
                os.fsync(fd)
            stat = os.fstat(fd)
        finally:
            os.close(fd)
        self.offset, self.inode = self.offset + sum(map(len, lines)), _identity(stat)
        return created

    def read_all(self) -> bytes:
        """Every byte read so far (whole lines only)."""
        return read_range(self.path, 0, self.offset) if self.offset else b""


# -- fsync policy ------------------------------------------------------------------------------
def sync_after_put(policy: str, checkpoint: Any, metadata: dict) -> bool:
    """``turn``: after an input checkpoint, and after one with no task left to run."""
    if policy != "turn":
        return policy == "always"
    values = checkpoint["channel_values"]
    pending = any(ch == _START or ch.startswith("branch:to:") or (ch == TASKS and values[ch]) for ch in values)
    return metadata.get("source") == "input" or not pending


def sync_after_writes(policy: str, channels: list[str]) -> bool:
    """``turn``: after writes that stop a run (an interrupt, an error)."""
    return policy == "always" or (policy == "turn" and any(ch in (INTERRUPT, ERROR) for ch in channels))


def sync_dir(directory: Path, policy: str) -> None:
    """Make a new or replaced file's directory entry durable too."""
    if policy == "never":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- files ------------------------------------------------------------------------------------------
def read_range(path: Path, start: int, end: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


def replace_file(path: Path, data: bytes, sync: bool) -> None:
    """Write ``path`` whole through a temporary file: readers see the old file or the new one."""
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _identity(stat: os.stat_result) -> tuple[int, int]:
    return stat.st_dev, stat.st_ino
