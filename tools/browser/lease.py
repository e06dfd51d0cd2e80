"""The browser lease (reference o.6, s.5): parallel Plan tasks and Team steps take turns with the
one browser.

A unit runs inside ``BrowserLease.scope(unit_id)`` (``graphs/unit.py``); its first batch of tool
calls that holds a browser call takes the lease (``acquire``) and keeps it until the unit ends,
whichever way it ends: finished, failed, stopped on an approval (the run stops; the unit takes
the lease again when it resumes), or cancelled with Ctrl-C. The lease is fair: units get it in
the order they asked. Outside a scope (the ReAct conversation, which runs alone) nothing waits.

The holder rides in a context variable: LangGraph runs a unit's nodes as tasks that copy the
context of the unit's node, so ``execute_tools`` finds the holder its unit set.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

WAITING_LINE = "等待浏览器：{holder} 正在使用"  # the status line's note on a waiting unit


@dataclass
class _Holder:
    unit: str
    held: bool = False


_HOLDER: contextvars.ContextVar[_Holder | None] = contextvars.ContextVar("paicli_browser_lease", default=None)


class BrowserLease:
    """A fair lock held by units, not tasks: taken in one node, released when the unit ends."""

    def __init__(self) -> None:
        self._owner: _Holder | None = None
        self._waiters: deque[tuple[_Holder, asyncio.Future[None]]] = deque()

    @property
    def holder(self) -> str | None:
        return self._owner.unit if self._owner is not None else None

    @asynccontextmanager
    async def scope(self, unit: str) -> AsyncIterator[None]:
        holder = _Holder(unit)
        token = _HOLDER.set(holder)
        try:
            yield
        finally:
            _HOLDER.reset(token)
            self._release(holder)

    async def acquire(self, waiting: Callable[[str], None] | None = None, done: Callable[[], None] | None = None) -> None:
        """Take the lease for the current unit (at once if it holds it, or when nobody does);
        ``waiting(holder)`` is told when it must wait, ``done()`` when it got the lease after waiting."""
        holder = _HOLDER.get()
        if holder is None or holder.held:
            return
        if self._owner is None and not self._waiters:
            self._owner, holder.held = holder, True
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((holder, future))
        if waiting is not None:
            waiting(self.holder or "")
        try:
            await future
        except asyncio.CancelledError:
            self._forget(holder, future)
            raise
        if done is not None:
            done()

    def _forget(self, holder: _Holder, future: asyncio.Future[None]) -> None:
        if (holder, future) in self._waiters:
            self._waiters.remove((holder, future))
        elif future.done() and not future.cancelled() and self._owner is holder:
            self._release(holder)  # handed the lease as it was cancelled: pass it on

    def _release(self, holder: _Holder) -> None:
        if self._owner is not holder:
            for entry in list(self._waiters):
                if entry[0] is holder:
                    self._waiters.remove(entry)
                    entry[1].cancel()
            return
        holder.held, self._owner = False, None
        while self._waiters:
            nxt, future = self._waiters.popleft()
            if future.done():
                continue
            self._owner, nxt.held = nxt, True
            future.set_result(None)
            return
