"""web_fetch's request budget (reference t, NetworkPolicy): a fixed window of 30 per 60 s."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

FETCH_LIMIT, FETCH_WINDOW = 30, 60.0  # reference (t)


class FixedWindow:
    def __init__(self, limit: int = FETCH_LIMIT, window: float = FETCH_WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self._clock = limit, window, clock
        self._start, self._count = clock(), 0
        self._lock = threading.Lock()

    def refusal(self) -> str | None:
        """Count one request; the reference's text when the window is already full."""
        with self._lock:
            now = self._clock()
            if now - self._start >= self.window:
                self._start, self._count = now, 0
            if self._count >= self.limit:
                wait = math.ceil(self.window - (now - self._start))
                return f"请求过于频繁（{self.window:g} 秒内已达 {self.limit} 次上限），约 {wait} 秒后重试"
            self._count += 1
            return None
