"""Work a graph starts and does not wait for: fact extraction after a turn (Q7, docs/behavior.md#decisions).

The answer is shown first; the extraction runs on the same event loop while the user reads
and types. Its notices wait here until the front end prints them (before the next prompt),
and a pending job is awaited, for a bounded time, when the process exits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)
MAX_NOTICES = 20


class Background:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._notices: list[str] = []
        # A front end that can show a notice the moment it arrives (the REPL prints it above
        # its prompt); without one, notices wait for ``pop_notices``.
        self.listener: Callable[[str], None] | None = None

    def submit(self, job: Coroutine[Any, Any, Any], name: str = "paicli-background") -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(job, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def notice(self, text: str) -> None:
        if self.listener is not None:
            self.listener(text)
        else:  # nobody may ever read them (a server): keep the latest few
            self._notices = [*self._notices[-(MAX_NOTICES - 1):], text]

    def pop_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for pending jobs; cancel what is left. True if all ended."""
        if not self._tasks:
            return True
        done, left = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=1.0)
        return not left

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # reference (n.5): a failed extraction is logged and never affects the answer. Not
            # at warning level: it would land in the middle of the line the user is typing.
            log.info("background job %s failed: %s", task.get_name(), task.exception())
