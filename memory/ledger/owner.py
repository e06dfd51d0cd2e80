"""One writer per session (issue 10, item 3): the turn lock, and the errors a second writer gets.

Two processes appending turns to one thread would both build on the same parent checkpoint, and
whichever wrote last would become "the latest", hiding the other's messages. Two guards:

- The CLI holds ``TurnLock`` for a turn (and for ``/clear`` and ``/compact``):
  ``<thread>.jsonl.turn.lock`` through ``filelock`` (an OS lock, released when its process dies,
  so a ``kill -9`` leaves nothing that blocks), and beside it ``<thread>.jsonl.owner`` saying
  who holds it (pid, host, since when) so a waiting process can name it. A holder that is gone
  is never named: its pid is checked. Being the session's only writer meanwhile, the holder
  also keeps the file's append lock for the turn (``paicli.memory.ledger.io``), so its writes take no
  lock each.
- The saver (``paicli.memory.ledger.saver``), which the CLI and ``langgraph dev`` both go through, refuses a
  ``put`` while another process holds the turn lock (``SessionBusy``), and a ``put`` on a parent
  that, since the run read it as the thread's latest, got a child from another writer
  (``LedgerConflict``): a lost update becomes a clear error instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from paicli.memory.errors import PaicliError
from paicli.memory.ledger.io import LedgerFile, replace_file, unlink

POLL = 0.1  # seconds between two tries of a busy turn lock
# Turn locks this process holds: while the CLI runs a turn, every put of that turn asks whether
# another process holds the lock; the answer is known without probing the lock or the owner file.
_HELD: set[Path] = set()


class SessionBusy(PaicliError):
    """Another process is running a turn on this session."""

    exit_code = 1  # -p exits 1 when the answer is incomplete (README.md, exit codes)


class LedgerConflict(PaicliError):
    """Another writer added to the thread since this run read it (a lost update, refused)."""

    exit_code = 1


@dataclass(frozen=True)
class Owner:
    pid: int | None
    host: str = ""
    started: float = 0.0

    def describe(self) -> str:
        if self.pid is None:
            return "另一个进程"
        since = time.strftime("%H:%M:%S", time.localtime(self.started)) if self.started else "?"
        return f"进程 pid {self.pid}（{self.host}，{since} 起）"


class TurnLock:
    """The turn lock of one session's ledger file (see the module docstring)."""

    def __init__(self, ledger: LedgerFile, writers: AbstractContextManager) -> None:
        """``ledger``: the file whose append lock the turn keeps; ``writers``: the lock its
        writers hold, so the append lock is never given back under a write in flight."""
        self.session = ledger.path.name.removesuffix(".jsonl")
        self.path = Path(f"{ledger.path}.turn.lock")
        self.owner_path = Path(f"{ledger.path}.owner")
        self._lock = FileLock(str(self.path), mode=0o600, thread_local=False)
        self._ledger, self._writers = ledger, writers

    def try_acquire(self) -> bool:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            return False
        try:
            with self._writers:
                self._ledger.hold()
        except BaseException:
            self._lock.release()
            raise
        owner = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        replace_file(self.owner_path, json.dumps(owner).encode(), sync=False)
        _HELD.add(self.path)
        return True

    def release(self) -> None:
        with self._writers:  # a write cancelled mid-turn may still be running on the saver's thread
            self._ledger.let_go()
        _HELD.discard(self.path)
        unlink(self.owner_path)
        self._lock.release()

    async def acquire(self, wait: float, notice: Callable[[str], None]) -> None:
        """Take the lock, waiting up to ``wait`` seconds (one notice naming the holder), or raise
        ``SessionBusy`` naming it. Cancellable: it polls instead of blocking a thread."""
        async def attempt() -> bool:
            return self.try_acquire()

        await wait_for_turn(self.session, attempt, lambda: self.holder().describe(), wait, notice)

    def holder(self) -> Owner:
        """Who holds the lock, as its owner file says; ``Owner(None)`` when that is not known."""
        try:
            data = json.loads(self.owner_path.read_text(encoding="utf-8"))
            owner = Owner(int(data["pid"]), str(data.get("host", "")), float(data.get("started", 0)))
        except (OSError, ValueError, KeyError, TypeError):
            return Owner(None)
        return owner if _alive(owner) else Owner(None)

    def other_holder(self) -> Owner | None:
        """The holder when it is another process; None when free or held by this one."""
        if self.path in _HELD:
            return None
        if not self.path.exists():
            return None  # no CLI ever ran a turn here (a Studio-only thread): nothing to check
        if self.try_free():
            return None
        holder = self.holder()
        return None if holder.pid == os.getpid() else holder

    def try_free(self) -> bool:
        """True when nobody holds the lock (taken and given back at once)."""
        probe = FileLock(str(self.path), mode=0o600, thread_local=False)
        try:
            probe.acquire(timeout=0)
        except Timeout:
            return False
        probe.release()
        return True


def _alive(owner: Owner) -> bool:
    if owner.host and owner.host != socket.gethostname():
        return True  # another machine's process (a shared home): cannot be checked from here
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def wait_for_turn(session: str, attempt: Callable[[], Awaitable[bool]], holder: Callable[[], str],
                        wait: float, notice: Callable[[str], None], where: str = "") -> None:
    """Poll ``attempt`` until it takes a session's turn lock: one notice naming ``holder`` while
    waiting, ``SessionBusy`` after ``wait`` seconds (``where``: which lock, for the message).
    Shared by the ledger's lock file and the database's advisory lock. Cancellable."""
    deadline, told = time.monotonic() + wait, False
    while not await attempt():
        who = holder()
        if time.monotonic() >= deadline:
            raise SessionBusy(f"会话 {session} 正被{who}使用{where}，等待 {wait:g} 秒后放弃："
                              f"等它完成后重试，或用 --session 换一个会话（PAICLI_SESSION_WAIT 调整等待秒数）")
        if not told:
            notice(f"⏳ 会话 {session} 正被{who}使用，等待它完成当前一轮…")
            told = True
        await asyncio.sleep(POLL)
