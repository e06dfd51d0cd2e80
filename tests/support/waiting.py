"""Waiting for a fact, never for a fixed time (issue 36 item 6): a test's patience grows with
the machine's load, so a suite run beside another on two busy cores still passes."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Callable


def patience(seconds: float) -> float:
    """``seconds`` on an idle machine, stretched by how many runnable tasks each core has now."""
    cores = os.cpu_count() or 1
    return seconds * max(1.0, os.getloadavg()[0] / cores)


async def until(fact: Callable[[], object], seconds: float, what: str = "the fact") -> object:
    """Poll ``fact`` until it is truthy (its value is returned) or ``patience(seconds)`` ran out."""
    deadline = time.monotonic() + patience(seconds)
    while True:
        if value := fact():
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {patience(seconds):.0f} s")
        await asyncio.sleep(0.025)
