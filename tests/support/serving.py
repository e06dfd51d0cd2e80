"""Running a fake server as a process of its own (``python -m tests.support.<server>``)."""

from __future__ import annotations

import signal
import threading
from contextlib import AbstractContextManager
from typing import Any


def serve_until_stopped(server: AbstractContextManager[Any]) -> None:
    """Start ``server``, print ``READY <base_url>`` and serve until SIGTERM or Ctrl-C."""
    # SIGTERM ends the wait below like Ctrl-C does, so the server shuts down cleanly.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with server as running:
        print(f"READY {running.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
