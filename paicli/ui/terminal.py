"""The terminal shows text, never commands: the one gate for text from outside paicli.

Model answers, tool output, file names, memory entries, session titles and error details are
written by strangers. An escape sequence in them could write the user's clipboard (OSC 52),
clear the screen, retitle the window or, through bidi overrides, show code in another order
than it runs. ``visible`` turns every such character into a visible stand-in; ``SafeConsole``
applies it to everything it prints and never reads markup or emoji codes in it, so paicli's
own styling (``style=``) is the only styling there is.
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

from rich.console import Console

# C0 controls except \t and \n, DEL, the C1 controls, and the bidi embeddings, overrides
# and isolates (Trojan Source, CVE-2021-42574). Plain RTL marks (U+200E/F) stay: they
# cannot reorder text beyond themselves.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _stand_in(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode control pictures: ESC → ␛, BEL → ␇
    if code == 0x7F:
        return "␡"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character made visible; newlines and tabs stay."""
    return _UNSAFE.sub(_stand_in, text.replace("\r\n", "\n"))


class SafeConsole(Console):
    """A rich Console whose ``print`` shows strings literally: no markup, no ``:emoji:``
    codes, no control characters. Rich renderables (``Text``) built by paicli pass as they are."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("highlight", False)
        super().__init__(**kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        kwargs.update(markup=False, emoji=False)
        super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **kwargs)


def write_line(text: str, stream: Any) -> None:
    """A plain ``print`` for ``-p`` output, through the same gate."""
    print(visible(text), file=stream, flush=True)


async def read_stdin_line(prompt: str) -> str | None:
    """``-p``'s answer to a question: a line typed on the terminal; None when stdin is no terminal."""
    if not sys.stdin or not sys.stdin.isatty():
        return None
    print(prompt, end="", file=sys.stderr, flush=True)
    try:
        return await asyncio.to_thread(sys.stdin.readline) or None
    except (OSError, ValueError):
        return None
