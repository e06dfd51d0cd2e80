"""A real terminal for REPL tests: the child runs on a pseudo-terminal (stdlib ``pty``), the
test types keys and waits for text, as a person would. Escape sequences are stripped from
what the child shows before matching; ``screen()`` is what the terminal shows now, rows of
cells, as a VT100 emulator (pyte) draws the same bytes."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time

from tests.support.waiting import patience

VS16 = "\ufe0f".encode()  # the emoji variation selector ("⚠️")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]")


class PtyTerminal:
    def __init__(self, argv: list[str], *, cwd: str, env: dict[str, str], columns: int = 200,
                 answer_cpr: bool = False):
        """``answer_cpr``: reply to cursor position requests (``ESC [ 6n``) as a terminal does, with
        where the emulated screen's cursor is, so prompt_toolkit knows the screen's height (its
        bottom toolbar needs it); the other tests run with ``PROMPT_TOOLKIT_NO_CPR=1`` instead."""
        import pyte

        self.answer_cpr = answer_cpr
        master, slave = pty.openpty()
        self.columns, self.rows = columns, 50
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, columns, 0, 0))
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True)
        os.close(slave)
        self.master, self.raw, self._mark = master, b"", 0
        self._screen = pyte.Screen(columns, self.rows)
        self._stream = pyte.ByteStream(self._screen)

    @property
    def text(self) -> str:
        return _ANSI.sub("", self.raw.decode("utf-8", "replace")).replace("\r", "")

    def expect(self, wanted: str, timeout: float = 30) -> str:
        """Wait until ``wanted`` appears after the previous match; return the text up to it.
        ``timeout``: on an idle machine, stretched by the load (``tests.support.waiting.patience``)."""
        deadline = time.monotonic() + patience(timeout)
        while True:
            found = self.text.find(wanted, self._mark)
            if found >= 0:
                seen, self._mark = self.text[self._mark:found], found + len(wanted)
                return seen
            if time.monotonic() > deadline or not self._read(deadline - time.monotonic()):
                raise AssertionError(f"{wanted!r} never appeared; the terminal shows:\n{self.text[-3000:]}")

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], max(0.0, min(wait, 0.5)))
        if ready:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the child closed the terminal
                return False
            self.raw += data
            self._stream.feed(data.replace(VS16, b""))  # pyte drops the rest of a line after one
            if self.answer_cpr:
                for _ in range(data.count(b"\x1b[6n")):
                    cursor = self._screen.cursor
                    os.write(self.master, b"\x1b[%d;%dR" % (cursor.y + 1, cursor.x + 1))
        return True

    def screen(self) -> list[str]:
        """The terminal's rows now, trailing blanks removed (a wide character is one cell of
        its two, so ``len`` of a row is not its width: use ``rich.cells.cell_len``)."""
        return [row.rstrip() for row in self._screen.display]

    def settle(self, quiet: float = 0.5, timeout: float = 10) -> None:
        """Read until nothing new arrives for ``quiet`` seconds (a redraw has finished)."""
        deadline = time.monotonic() + patience(timeout)
        while time.monotonic() < deadline:
            before = len(self.raw)
            self._read(quiet)
            if len(self.raw) == before:
                return

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode("utf-8"))

    def close(self) -> int | None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        os.close(self.master)
        return self.proc.returncode


def ask(terminal: PtyTerminal, text: str) -> None:
    """Wait for the REPL's prompt, then type ``text`` and Enter."""
    terminal.expect("❯")
    terminal.type(text + "\r")
