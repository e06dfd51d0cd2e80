"""Real image files for the image tests: a valid PNG of any size, made with the standard library."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def png_bytes(width: int = 2, height: int = 2, padding: int = 0) -> bytes:
    """A valid RGB PNG; ``padding`` bytes of an ancillary chunk make it as large as a test needs."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    pad = chunk(b"tEXt", b"pad\x00" + b"x" * padding) if padding else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + pad + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def write_png(path: Path, **kwargs: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(**kwargs))
    return path
