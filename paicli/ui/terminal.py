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

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

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


class Hanging:
    """One line whose continuation lines start under its body, not at the margin: ``/help``'s
    ``   /command [参数] - what it does`` and the banner's ``   可写: a, b, c`` stay readable
    in a narrow terminal. As a string, or printed to a pipe (``-p``), it is the line unwrapped. When the head
    takes more than half the width, the text goes on four columns in from the line's own indent."""

    _MARK = re.compile(r"^(\s*(?:\[[^\]\s]{1,40}\] )?[^\w\s\[]{1,2}\ufe0f? )")
    _LABEL = re.compile(r"^(\s*[^:：\s][^:：]{0,23}(?:: |：))")

    def __init__(self, head: str, body: str):
        self.head, self.body = visible(head), visible(body)

    @classmethod
    def of(cls, line: str) -> "Hanging":
        """A ``label: text`` line, split after its label (within 24 characters); else at its indentation."""
        found = cls._LABEL.match(line)
        head = found.group(1) if found else line[:len(line) - len(line.lstrip(" "))]
        return cls(head, line[len(head):])

    @classmethod
    def marked(cls, line: str) -> "str | Hanging":
        """A progress line led by a mark (``  ⊘ …``, ``⚡ …``, ``→ …``) hangs after the mark;
        a line of several lines is left as it is."""
        if "\n" in line:
            return line
        found = cls._MARK.match(line)
        return cls(found.group(1), line[found.end():]) if found else cls.of(line)

    def __str__(self) -> str:
        return self.head + self.body

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not console.is_terminal:  # a pipe or a file: the line as it is, for whatever reads it
            yield Text(str(self))
            return
        head = cell_len(self.head)
        indent = head if head <= options.max_width // 2 else len(self.head) - len(self.head.lstrip(" ")) + 4
        room = max(options.max_width - head, 0)
        lines = wrap_cells(self.body, options.max_width - indent, first=room)
        yield Text(self.head + ("\n" + " " * indent).join(lines))


_PIECES = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]+\s*|\s+")
_NO_LINE_START = frozenset("，。；：、）」』】》？！,.;:)")


def wrap_cells(text: str, width: int, first: int | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` terminal cells (the first line ``first``, when
    given: 0 starts the text on the next line). Chinese breaks between any two characters (a
    closing mark never starts a line), other text at spaces, and a word longer than a line (a
    path) is cut where it reaches the edge."""
    width = max(width, 4)
    lines: list[str] = []
    line: list[str] = []

    def limit() -> int:
        return width if lines or first is None else first

    for piece in _PIECES.findall(text):
        while cell_len(piece.rstrip()) > width:  # a path longer than a line: fill this one, go on
            room = limit() - cell_len("".join(line))
            if room <= 0:
                lines.append("".join(line).rstrip())
                line, room = [], width
            cut = max(cells_fit(piece, room), 1)
            line.append(piece[:cut])
            lines.append("".join(line).rstrip())
            line, piece = [], piece[cut:]
        if cell_len("".join(line) + piece.rstrip()) > limit() and (line or not lines and first is not None):
            carried = _carried(line) if piece[0] in _NO_LINE_START else []
            lines.append("".join(line).rstrip())
            line = carried
            piece = piece if carried else piece.lstrip()
        line.append(piece)
    if line or not lines:
        lines.append("".join(line).rstrip())
    return lines


def _carried(line: list[str]) -> list[str]:
    """What moves down with a closing mark that does not fit: the character it closes on (and
    the marks between), when the line keeps something."""
    back = len(line) - 1
    while back > 0 and line[back][0] in _NO_LINE_START:
        back -= 1
    if back <= 0:
        return []
    carried = line[back:]
    del line[back:]
    return carried


def cells_fit(text: str, cells: int) -> int:
    """How many characters from the start of ``text`` fit in ``cells`` terminal cells."""
    used = 0
    for n, char in enumerate(text):
        used += cell_len(char)
        if used > cells:
            return n
    return len(text)


def cut_cells(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` terminal cells: whole when it fits, else its start and ``…``."""
    return text if cell_len(text) <= cells else text[:cells_fit(text, cells - 1)] + "…"


def write_line(text: str | Hanging, stream: Any) -> None:
    """A plain ``print`` for ``-p`` output, through the same gate."""
    print(visible(str(text)), file=stream, flush=True)


async def read_stdin_line(prompt: str) -> str | None:
    """``-p``'s answer to a question: a line typed on the terminal; None when stdin is no terminal."""
    if not sys.stdin or not sys.stdin.isatty():
        return None
    print(prompt, end="", file=sys.stderr, flush=True)
    try:
        return await asyncio.to_thread(sys.stdin.readline) or None
    except (OSError, ValueError):
        return None
