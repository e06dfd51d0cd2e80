"""ESC while a run works (issue 41): a lone ESC on the terminal cancels, a key's escape
sequence does not, other typing is kept for the next prompt, and the terminal's mode comes back."""

from __future__ import annotations

import asyncio
import os
import pty
import termios

from paicli.ui.esc_keys import EscWatcher, typed_text


async def watch(keys: list[bytes]) -> tuple[int, str, bool]:
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    cancelled = []
    watcher = EscWatcher(slave, lambda: cancelled.append(1))
    try:
        assert watcher.start()
        assert not termios.tcgetattr(slave)[3] & termios.ICANON  # cbreak while it watches
        for key in keys:
            os.write(master, key)
            await asyncio.sleep(0.2)
        typed = watcher.stop()
        return len(cancelled), typed, termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)


async def test_a_lone_esc_cancels_and_the_terminal_is_given_back():
    assert await watch([b"\x1b"]) == (1, "", True)


async def test_arrow_keys_and_shift_tab_do_not_cancel_and_typing_is_kept():
    assert await watch([b"\x1b[A", b"\x1b[Z", "再跑一次".encode(), b"\x1b[200~pasted\x1b[201~"]) == (0, "再跑一次pasted", True)


async def test_pausing_gives_a_question_the_terminal_as_it_was():
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    watcher = EscWatcher(slave, lambda: None)
    try:
        watcher.start()
        with watcher.paused():
            assert termios.tcgetattr(slave) == before
        assert not termios.tcgetattr(slave)[3] & termios.ICANON
        watcher.stop()
    finally:
        os.close(master)
        os.close(slave)


def test_typed_text_is_what_the_cooked_terminal_would_have_kept():
    assert typed_text(b"ab\x1b[Acd\r\x7f") == "abcd\n"  # an arrow's sequence goes; Enter ends the line
    assert typed_text(b"/exiz\x7ft\rnext") == "/exit\nnext"  # Backspace takes a character back
    assert typed_text(b"\x1b[200~line 1\nline 2\x1b[201~!") == "line 1 line 2!"  # a paste does not submit
    assert not EscWatcher(os.open(os.devnull, os.O_RDONLY), lambda: None, asyncio.new_event_loop()).start()
