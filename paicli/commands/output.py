"""What every slash command writes to and reads from: ``Output`` (its lines, and the one saying
why it failed), ``Say`` and ``ReadLine``. Apart from ``dispatch`` so the commands it calls need
not import it back."""

from __future__ import annotations

from typing import Awaitable, Callable

Say = Callable[[str], None]
ReadLine = Callable[[str], Awaitable[str | None]]


class Output:
    """Where a command's lines go. Call it for results; ``fail`` for the line saying why the
    command did not do what was asked, which marks it failed (``-p`` sends that line to
    stderr). The REPL shows both in the same place."""

    def __init__(self, say: Say, fail: Say | None = None):
        self._say, self._fail = say, fail or say
        self.failed = False

    def __call__(self, text: str) -> None:
        self._say(text)

    def fail(self, text: str) -> None:
        self.failed = True
        self._fail(text)
