"""What a file's bytes hold: text in some encoding (which, with which line breaks), or binary.

One answer for every tool that reads or writes project files (``read_file``, ``grep_code`` in
both engines, ``edit_file``, ``write_file``, the diff an approval question shows), so they never
disagree about a file (issue 41). The encoding comes from charset-normalizer, a maintained
detector, limited to the encodings source files are written in (:data:`CANDIDATES`); a byte
order mark and valid UTF-8 are taken as they are, before it is asked.

Binary is a property of the content, never of one byte: the first :data:`BINARY_SNIFF` bytes are
binary when a magic number names a binary format, when no candidate encoding reads them and more
than a tenth of them are no UTF-8, or when more than a tenth of what they decode to is control
characters (NUL included). A UTF-8 file with a few stray bytes stays UTF-8 (``lossy``: shown
with U+FFFD, never written back).
"""

from __future__ import annotations

import codecs
import mimetypes
from dataclasses import dataclass
from pathlib import Path

BINARY_SNIFF = 8192  # what git and ripgrep look at to call a file binary
DETECT_BYTES = 64 * 1024  # what a ranged read or a search hands the detector
MAX_CONTROL_SHARE = 0.1  # control characters in the sniffed text beyond this: binary
MAX_STRAY_SHARE = 0.05  # invalid UTF-8 sequences per valid multi-byte character: still UTF-8
# The encodings the detector may answer, in the order that breaks a tie between equally good
# readings (a short "café" reads as well in Windows-1251, as "cafй").
CANDIDATES = ("utf_8", "gb18030", "big5", "cp932", "euc_jp", "euc_kr", "cp1252", "latin_1", "cp1251",
              "utf_16", "utf_32")
BOMS = ((codecs.BOM_UTF32_LE, "utf_32_le"), (codecs.BOM_UTF32_BE, "utf_32_be"), (codecs.BOM_UTF8, "utf_8"),
        (codecs.BOM_UTF16_LE, "utf_16_le"), (codecs.BOM_UTF16_BE, "utf_16_be"))
LABELS = {"utf_8": "UTF-8", "gb18030": "GB18030", "gbk": "GBK", "big5": "Big5", "cp932": "Shift-JIS",
          "shift_jis": "Shift-JIS", "euc_jp": "EUC-JP", "euc_kr": "EUC-KR", "cp1252": "Windows-1252",
          "latin_1": "Latin-1", "cp1251": "Windows-1251", "utf_16_le": "UTF-16LE", "utf_16_be": "UTF-16BE",
          "utf_32_le": "UTF-32LE", "utf_32_be": "UTF-32BE", "utf_16": "UTF-16", "utf_32": "UTF-32"}
_WHITESPACE_CONTROLS = frozenset("\t\n\r\f\v\b\x1b")


@dataclass(frozen=True)
class Sniffed:
    """``encoding`` is a Python codec name; None for a binary file, whose MIME type is ``kind``."""

    encoding: str | None
    kind: str | None = None
    bom: bytes = b""
    lossy: bool = False  # UTF-8 with a few invalid bytes

    @property
    def binary(self) -> bool:
        return self.encoding is None

    @property
    def label(self) -> str:
        return LABELS.get(self.encoding or "", self.encoding or "binary") + (" BOM" if self.bom else "")

    @property
    def plain_utf8(self) -> bool:
        """UTF-8 without a BOM: what paicli writes and needs no mention in a result."""
        return self.encoding == "utf_8" and not self.bom and not self.lossy

    @property
    def byte_lines(self) -> bool:
        """Line breaks are the bytes ``\\r`` and ``\\n`` (every candidate but UTF-16 and UTF-32)."""
        return self.encoding is not None and not self.encoding.startswith(("utf_16", "utf_32"))

    def decode(self, data: bytes) -> str:
        """``data`` (the whole file, BOM included, or a piece of it) as text; bad bytes as U+FFFD."""
        if self.bom and data.startswith(self.bom):
            data = data[len(self.bom):]
        return data.decode(self.encoding or "utf_8", errors="replace")


UTF8 = Sniffed("utf_8")


def sniff(data: bytes, path: Path | None = None, complete: bool = True) -> Sniffed:
    """What ``data`` is: a whole file (``complete``) or its first bytes. ``path`` only names the
    MIME type of a binary file whose magic number says nothing."""
    if not data:
        return UTF8
    for bom, encoding in BOMS:
        if data.startswith(bom):
            return _checked(Sniffed(encoding, bom=bom), data, path)
    from filetype import guess_mime  # a PNG's header decodes as text; its magic number does not lie

    magic = guess_mime(data[:BINARY_SNIFF])
    if magic is not None and not magic.startswith("text/"):
        return Sniffed(None, magic)
    return _checked(_text_encoding(data, complete), data, path)


def sniff_path(path: Path, limit: int = DETECT_BYTES) -> Sniffed:
    """The file's first ``limit`` bytes sniffed (the whole file when it is shorter)."""
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    return sniff(data[:limit], path, complete=len(data) <= limit)


def _text_encoding(data: bytes, complete: bool) -> Sniffed | None:
    if not complete:  # a character cut at the end of the piece must not count against it
        data = data[:data.rfind(b"\n") + 1] or data
    try:
        codecs.getincrementaldecoder("utf_8")().decode(data, final=complete)
        return UTF8
    except UnicodeDecodeError:
        pass
    valid, stray = _utf8_counts(data)
    if valid and stray <= valid * MAX_STRAY_SHARE:
        return Sniffed("utf_8", lossy=True)
    found = _detected(data)
    if found is None and stray <= len(data) * MAX_CONTROL_SHARE:  # no other reading: UTF-8 with stray bytes
        return Sniffed("utf_8", lossy=True)
    return found


def _utf8_counts(data: bytes) -> tuple[int, int]:
    """(multi-byte characters, bytes that are no UTF-8) when ``data`` is read as UTF-8."""
    text = data.decode("utf_8", errors="replace")
    stray = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")  # a real U+FFFD in the file is fine
    return len(text) - len(text.encode("ascii", "ignore")) - text.count("\ufffd"), max(1, stray)


def _detected(data: bytes) -> Sniffed | None:
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data, cp_isolation=list(CANDIDATES)))
    if not matches:
        return None
    best = min(matches, key=lambda m: (m.chaos, -m.coherence, _rank(m.encoding)))
    return Sniffed(_narrowest(best.encoding, data))


def _rank(encoding: str) -> int:
    return CANDIDATES.index(encoding) if encoding in CANDIDATES else len(CANDIDATES)


def _narrowest(encoding: str, data: bytes) -> str:
    """GBK when GB18030's bytes are all GBK: a character GBK lacks is then refused on write,
    not stored as a four-byte GB18030 sequence that GBK editors cannot read."""
    if encoding == "gb18030":
        try:
            data.decode("gbk")
            return "gbk"
        except UnicodeDecodeError:
            pass
    return encoding


def _checked(found: Sniffed | None, data: bytes, path: Path | None) -> Sniffed:
    """Binary when no encoding reads the bytes, or when what they read as is mostly control characters."""
    if found is not None:
        head = found.decode(data[:BINARY_SNIFF])
        controls = sum(1 for c in head if (c < " " and c not in _WHITESPACE_CONTROLS) or c == "\x7f")
        if controls <= max(1, len(head) * MAX_CONTROL_SHARE):
            return found
    guessed = mimetypes.guess_type(path.name)[0] if path is not None else None
    return Sniffed(None, guessed if guessed and not guessed.startswith("text/") else "application/octet-stream")


@dataclass(frozen=True)
class TextFile:
    """A whole text file: its text with its own line breaks, and how to write it back."""

    text: str
    sniffed: Sniffed

    @property
    def newline(self) -> str | None:
        """``"\\r\\n"`` or ``"\\n"`` when every line break is that one; None when mixed or none."""
        crlf = self.text.count("\r\n")
        lone_lf, lone_cr = self.text.count("\n") - crlf, self.text.count("\r") - crlf
        if lone_cr or (crlf and lone_lf):
            return None
        return "\r\n" if crlf else "\n" if lone_lf else None


def read_text_file(data: bytes, path: Path | None = None) -> TextFile | Sniffed:
    """The file's text, or its ``Sniffed`` when it is binary."""
    sniffed = sniff(data, path)
    return sniffed if sniffed.binary else TextFile(sniffed.decode(data), sniffed)


class Unencodable(ValueError):
    """Text the file's encoding cannot hold; the message names the line and the character."""


def encode(text: str, sniffed: Sniffed) -> bytes:
    """``text`` in the file's encoding, with its BOM; raises :class:`Unencodable`."""
    encoding = sniffed.encoding or "utf_8"
    try:
        return sniffed.bom + text.encode(encoding)
    except UnicodeEncodeError as exc:
        char = text[exc.start]
        line = text.count("\n", 0, exc.start) + 1
        shown = f"U+{ord(char):04X}" if 0xD800 <= ord(char) <= 0xDFFF else f"“{char}”（U+{ord(char):04X}）"
        raise Unencodable(f"第 {line} 行的字符 {shown} 无法用 {sniffed.label} 编码保存") from None


def round_trips(data: bytes, text_file: TextFile) -> bool:
    """Writing the text back unchanged gives the same bytes: nothing the reading lost."""
    try:
        return not text_file.sniffed.lossy and encode(text_file.text, text_file.sniffed) == data
    except Unencodable:
        return False
