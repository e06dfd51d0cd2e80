"""One shell word as bash reads it: quote removal and the expansions the guard can know.

bashlex finds the words but gets their text wrong in places, and ``shlex`` follows POSIX
``sh`` rather than bash: inside double quotes bash removes the backslash of ``\\$``, ``\\```,
``\\"``, ``\\\\`` and a backslash-newline, so ``bash -c "rm -rf \\$HOME"`` hands the inner shell
``rm -rf $HOME`` (which it expands), while ``shlex`` keeps ``\\$HOME`` as a literal name.
``expand`` walks the word's source text the way bash does:

- ``'…'`` is literal; ``$'…'`` is ANSI-C quoting (``\\n``, ``\\x41``, ``\\101``, ``\\u00e9``, ``\\cA`` …,
  cut at a NUL as bash cuts it); ``$"…"`` is a double-quoted string;
- inside ``"…"`` only the five escapes lose their backslash; unquoted, a backslash quotes the
  next character and a backslash-newline disappears;
- ``~`` at the start (and after ``=`` / ``:`` of an assignment-like word; a prefix ends at ``/``, ``:`` or ``=~``), ``$HOME``, ``${HOME}``,
  ``$PWD`` and ``~+`` expand when known; any other expansion (``$X``, ``${X:-y}``, ``$1``,
  ``$(…)``, backticks, ``$((…))``, ``~user``) makes the word unknown and stays in the text as
  written.

Globs are left as they are (the rules resolve paths, they do not list directories).
"""

from __future__ import annotations

import re

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_DOUBLE_ESCAPES = "$`\"\\"
_SIMPLE_C = {"a": 7, "b": 8, "e": 27, "E": 27, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11,
             "\\": 92, "'": 39, '"': 34, "?": 63}


class _Unknown(Exception):
    """The rest of the word cannot be followed (an unterminated quote or substitution)."""


def expand(raw: str, home: str | None, cwd: str | None) -> tuple[str, bool, str]:
    """``(text, known, shape)``: the word after quote removal and the expansions above;
    whether its value is known; ``shape`` is the text with quoted characters masked (``_``),
    so a caller can tell an unquoted ``{a,b}`` (brace expansion) from a quoted one."""
    return _Scanner(raw, home, cwd).run()


class _Scanner:
    def __init__(self, raw: str, home: str | None, cwd: str | None) -> None:
        self.raw, self.home, self.cwd = raw, home, cwd
        self.out: list[str] = []
        self.shape: list[str] = []
        self.known = True
        self.i = 0

    def run(self) -> tuple[str, bool, str]:
        try:
            self._word()
        except _Unknown:
            self.known = False
            self._emit(self.raw[self.i:], quoted=False)
        return "".join(self.out), self.known, "".join(self.shape)

    def _emit(self, text: str, quoted: bool) -> None:
        self.out.append(text)
        self.shape.append("_" * len(text) if quoted else text)

    def _word(self) -> None:
        raw = self.raw
        assignment = _ASSIGNMENT_LIKE.match(raw)
        tilde_at = {0} | ({assignment.end()} if assignment else set())
        while self.i < len(raw):
            c = raw[self.i]
            if self.i in tilde_at and c == "~":
                self._tilde(assignment is not None)
                continue
            if c == "\\":
                self._backslash_unquoted()
            elif c == "'":
                end = raw.find("'", self.i + 1)
                if end < 0:
                    raise _Unknown
                self._emit(raw[self.i + 1:end], quoted=True)
                self.i = end + 1
            elif c == '"':
                self.i += 1
                self._double()
            elif c == "$":
                self._dollar(quoted=False)
            elif c == "`":
                self._backquote()
            elif c in "<>" and raw.startswith("(", self.i + 1):
                self.known = False  # <(…) / >(…): a path only bash knows
                end = _matching(raw, self.i + 1)
                self._emit(raw[self.i:end], quoted=False)
                self.i = end
            else:
                self._emit(c, quoted=False)
                self.i += 1
                if c in ":=" and assignment and self.i > assignment.end():  # bash's ":~" and "=~" prefixes
                    tilde_at.add(self.i)

    def _tilde(self, assignment: bool) -> None:
        raw, start = self.raw, self.i
        end = start + 1
        while end < len(raw) and raw[end] not in ":/" and not raw.startswith("=~", end):  # bash's suffixes
            end += 1
        if end < len(raw) and raw[end] == ":" and not assignment:
            self.known = False  # bash ends `~:x` at the colon or not, depending on quotes elsewhere
        prefix = raw[start + 1:end].replace("\\\n", "")  # a line continuation is not part of it
        if prefix == "" and self.home is not None:
            value = self.home
        elif prefix == "+" and self.cwd is not None:
            value = self.cwd
        elif re.fullmatch(r"[A-Za-z0-9._+-]*", prefix):  # ~user, ~-, ~+ or ~ when unknown
            self.known = False
            value = raw[start:end]
        else:  # a quote or an expansion in the prefix: not a tilde prefix at all
            self._emit("~", quoted=False)
            self.i += 1
            return
        self._emit(value, quoted=True)
        self.i = end

    def _backslash_unquoted(self) -> None:
        nxt = self.raw[self.i + 1:self.i + 2]
        if nxt == "\n" or nxt == "":
            if nxt == "":  # a lone trailing backslash is kept
                self._emit("\\", quoted=False)
            self.i += 2
            return
        self._emit(nxt, quoted=True)
        self.i += 2

    def _double(self) -> None:
        raw = self.raw
        while True:
            if self.i >= len(raw):
                raise _Unknown
            c = raw[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\":
                nxt = raw[self.i + 1:self.i + 2]
                if nxt == "\n":
                    self.i += 2
                elif nxt and nxt in _DOUBLE_ESCAPES:
                    self._emit(nxt, quoted=True)
                    self.i += 2
                else:
                    self._emit("\\", quoted=True)
                    self.i += 1
            elif c == "$":
                self._dollar(quoted=True)
            elif c == "`":
                self._backquote()
            else:
                self._emit(c, quoted=True)
                self.i += 1

    def _dollar(self, quoted: bool) -> None:
        raw, i = self.raw, self.i
        nxt = raw[i + 1:i + 2]
        if nxt == "'" and not quoted:
            self._ansi_c()
        elif nxt == '"' and not quoted:
            self.i += 2
            self._double()
        elif nxt == "(":
            self._unknown_until(_matching(raw, i + 1))
        elif nxt == "{":
            end = _matching(raw, i + 1, "{", "}")
            name = raw[i + 2:end - 1]
            self._parameter(name, end)
        elif nxt and _NAME.match(raw, i + 1):
            match = _NAME.match(raw, i + 1)
            self._parameter(match.group(), match.end())
        elif nxt and (nxt.isdigit() or nxt in "@*#?-$!"):
            self._unknown_until(i + 2)
        else:  # a lone $ is itself
            self._emit("$", quoted)
            self.i += 1

    def _parameter(self, name: str, end: int) -> None:
        value = {"HOME": self.home, "PWD": self.cwd}.get(name)
        if value is None:
            self._unknown_until(end)
            return
        self._emit(value, quoted=True)
        self.i = end

    def _unknown_until(self, end: int) -> None:
        self.known = False
        self._emit(self.raw[self.i:end], quoted=False)
        self.i = end

    def _backquote(self) -> None:
        raw, j = self.raw, self.i + 1
        while j < len(raw) and raw[j] != "`":
            j += 2 if raw[j] == "\\" else 1
        if j >= len(raw):
            raise _Unknown
        self._unknown_until(j + 1)

    def _ansi_c(self) -> None:
        raw, j = self.raw, self.i + 2
        data = bytearray()
        while True:
            if j >= len(raw):
                raise _Unknown
            c = raw[j]
            if c == "'":
                break
            if c != "\\" or j + 1 >= len(raw):
                data += c.encode("utf-8", "surrogateescape")
                j += 1
                continue
            e = raw[j + 1]
            j += 2
            if e in _SIMPLE_C:
                data.append(_SIMPLE_C[e])
            elif e in "01234567":
                digits = re.match(r"[0-7]{0,2}", raw[j:]).group()
                data.append((int(e + digits, 8)) & 0xFF)
                j += len(digits)
            elif e == "x":
                digits = re.match(r"[0-9A-Fa-f]{0,2}", raw[j:]).group()
                if digits:
                    data.append(int(digits, 16))
                    j += len(digits)
                else:
                    data += b"\\x"
            elif e in "uU":
                digits = re.match(r"[0-9A-Fa-f]{0,%d}" % (4 if e == "u" else 8), raw[j:]).group()
                if digits and int(digits, 16) <= 0x10FFFF and not 0xD800 <= int(digits, 16) <= 0xDFFF:
                    data += chr(int(digits, 16)).encode("utf-8")
                    j += len(digits)
                else:
                    data += ("\\" + e).encode()
            elif e == "c" and j < len(raw) and raw[j] != "'":
                ch = raw[j]
                data.append(0x7F if ch == "?" else ord(ch.upper()) & 0x1F if ch.isascii() else 0)
                j += 1
            else:
                data += ("\\" + e).encode("utf-8", "surrogateescape")
        data = data.split(b"\0", 1)[0]  # bash cuts the string at a NUL
        self._emit(data.decode("utf-8", "surrogateescape"), quoted=True)
        self.i = j + 1


def heredoc(body: str, home: str | None, cwd: str | None) -> str:
    """The text of a here-document whose delimiter is unquoted, as its reader gets it: ``\\$``,
    ``\\```, ``\\\\`` lose their backslash, a backslash-newline disappears (``\\"`` stays), and
    ``$HOME`` / ``$PWD`` expand when known, in the same pass (``\\\\$HOME`` is a backslash and the
    home directory). Other expansions stay as written: the shell reading the text sees them as
    expansions again, values the guard cannot know."""
    def one(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2) or match.group(3)
        if escaped is not None:
            return "" if escaped == "\n" else escaped
        value = {"HOME": home, "PWD": cwd}.get(name)
        return value if value is not None else match.group(0)

    return _HEREDOC.sub(one, body)


_HEREDOC = re.compile(r"\\([$`\\\n])|\$\{(HOME|PWD)\}|\$(HOME|PWD)(?![A-Za-z0-9_])")


def _matching(raw: str, start: int, opening: str = "(", closing: str = ")") -> int:
    """The index after the bracket matching ``raw[start]``, skipping quoted text."""
    depth, j = 0, start
    while j < len(raw):
        c = raw[j]
        if c == "\\":
            j += 2
            continue
        if c == "'" and opening == "(":
            j = raw.find("'", j + 1)
            if j < 0:
                break
        elif c == '"':
            j += 1
            while j < len(raw) and raw[j] != '"':
                j += 2 if raw[j] == "\\" else 1
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise _Unknown
