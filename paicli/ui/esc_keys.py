"""ESC while a run works cancels it, as Ctrl-C does (reference s.7; issue 41).

Between prompts the REPL's terminal is in its cooked mode, where a lone ESC is just a byte the
next prompt would read. While a run works, :class:`EscWatcher` puts it in cbreak mode (no line
editing, no echo; Ctrl-C still raises SIGINT) and reads what is typed on the event loop: a lone
ESC, with nothing after it within :data:`SEQUENCE_WAIT` seconds, cancels the run; the start of a
key's escape sequence (arrows, Shift+Tab, a bracketed paste) does not. Whatever else is typed is
kept as text for the next prompt, as the cooked terminal would have kept it. A question asked
during the run (approval, plan review) reads the terminal itself: the watcher pauses around it.
"""

from __future__ import annotations

import asyncio
import os
import re
import termios
import tty
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ESC = b"\x1b"
CTRL_C = b"\x03"  # a terminal that is not the process's controlling one sends it as a byte
SEQUENCE_WAIT = 0.05  # seconds: a key's escape sequence arrives whole, well within this
_SEQUENCE = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?")
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # a bracketed paste's markers
_PASTE = re.compile(r"(\x1b\[20[01]~)")


class EscWatcher:
    def __init__(self, fd: int, cancel: Callable[[], object], loop: asyncio.AbstractEventLoop | None = None):
        self.fd, self.cancel = fd, cancel
        self.loop = loop or asyncio.get_running_loop()
        self._saved: list | None = None
        self._lone: asyncio.TimerHandle | None = None
        self._typed = bytearray()

    def start(self) -> bool:
        """Watch the terminal; False (nothing done) when ``fd`` is not one."""
        if not os.isatty(self.fd):
            return False
        self._saved = termios.tcgetattr(self.fd)
        self._watch()
        return True

    def _watch(self) -> None:
        tty.setcbreak(self.fd, termios.TCSANOW)
        self.loop.add_reader(self.fd, self._readable)

    def _unwatch(self) -> None:
        self.loop.remove_reader(self.fd)
        if self._lone is not None:
            self._lone.cancel()
            self._lone = None
        termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The terminal as it was, for a question read during the run."""
        if self._saved is None:
            yield
            return
        self._unwatch()
        try:
            yield
        finally:
            self._watch()

    def stop(self) -> str:
        """Give the terminal back; returns what was typed meanwhile (``typed_text``)."""
        if self._saved is not None:
            self._unwatch()
            self._saved = None
        return typed_text(bytes(self._typed))

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 1024)
        except OSError:
            return
        if self._lone is not None:  # the ESC before was the start of a sequence
            self._lone.cancel()
            self._lone = None
            data = ESC + data
        if CTRL_C in data:
            self.cancel()
        elif data == ESC:
            self._lone = self.loop.call_later(SEQUENCE_WAIT, self._escape)
        else:
            self._typed += data  # keys' sequences are dropped from it (typed_text), a paste's text kept

    def _escape(self) -> None:
        self._lone = None
        self.cancel()


def typed_text(data: bytes) -> str:
    """Type-ahead as the cooked terminal would have kept it: printable characters, Backspace
    taking back the character before it, and Enter ending a line (``"\n"``: the REPL runs that
    line as if typed at the prompt, the rest waits in the next one). Keys' escape sequences go;
    a bracketed paste's line breaks are spaces (pasting does not submit)."""
    out: list[str] = []
    pasting = False
    for part in _PASTE.split(data.decode("utf-8", errors="ignore")):
        if part in (PASTE_START, PASTE_END):
            pasting = part == PASTE_START
            continue
        for c in _SEQUENCE.sub("", part):
            if c in "\r\n":
                out.append(" " if pasting else "\n")
            elif c in "\x7f\b":
                if out and out[-1] != "\n":
                    out.pop()
            elif c.isprintable():
                out.append(c)
    return "".join(out)
