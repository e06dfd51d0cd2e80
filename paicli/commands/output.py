"""What every slash command writes to and reads from: ``Output`` (its lines, the one saying why
it failed, and the question it may ask), ``Say`` and ``ReadLine``. Apart from ``dispatch`` so the
commands it calls need not import it back."""

from __future__ import annotations

from typing import Awaitable, Callable

Say = Callable[[str], None]  # a line; /help's may be a ``paicli.ui.terminal.Hanging`` (``str()`` is the line)
ReadLine = Callable[[str], Awaitable[str | None]]


class Output:
    """Where a command's lines go. Call it for results; ``fail`` for the line saying why the
    command did not do what was asked, which marks it failed (``-p`` sends that line to
    stderr). The REPL shows both in the same place. ``read_line`` asks the person a question
    (``/resume``'s choice, ``/restore``'s confirmation); None when nobody can answer (``-p``)."""

    def __init__(self, say: Say, fail: Say | None = None, read_line: ReadLine | None = None):
        self._say, self._fail = say, fail or say
        self.read_line = read_line
        self.word = ""  # the command word as typed, lower-cased (set by dispatch): "/clear", "clear"
        self.failed = False

    def __call__(self, text: str) -> None:
        self._say(text)

    def fail(self, text: str) -> None:
        self.failed = True
        self._fail(text)
