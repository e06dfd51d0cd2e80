"""A real terminal for REPL tests: the child runs on a pseudo-terminal (stdlib ``pty``), the
test types keys and waits for text, as a person would. Escape sequences are stripped from
what the child shows before matching."""

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

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]")


class PtyTerminal:
    def __init__(self, argv: list[str], *, cwd: str, env: dict[str, str], columns: int = 200,
                 answer_cpr: bool = False):
        """``answer_cpr``: reply to cursor position requests (``ESC [ 6n``) as a terminal does, so
        prompt_toolkit knows the screen's height (its bottom toolbar needs it); the other tests
        run with ``PROMPT_TOOLKIT_NO_CPR=1`` instead."""
        self.answer_cpr = answer_cpr
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True)
        os.close(slave)
        self.master, self.raw, self._mark = master, b"", 0

    @property
    def text(self) -> str:
        return _ANSI.sub("", self.raw.decode("utf-8", "replace")).replace("\r", "")

    def expect(self, wanted: str, timeout: float = 30) -> str:
        """Wait until ``wanted`` appears after the previous match; return the text up to it."""
        deadline = time.monotonic() + timeout
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
            if self.answer_cpr:
                for _ in range(data.count(b"\x1b[6n")):
                    os.write(self.master, b"\x1b[1;1R")  # the cursor at the top left
        return True

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
