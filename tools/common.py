"""Argument coercion and text helpers shared by the file and search tools.

Models send numbers and booleans both as JSON values and as strings (the reference
stringifies every argument, s.8), so every tool reads its arguments through these.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_TRUE = {"true", "1", "yes", "y", "on"}
_FALSE = {"false", "0", "no", "n", "off", ""}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def str_arg(args: dict[str, Any], name: str, default: str | None = None) -> str | None:
    value = args.get(name)
    if value is None:
        return default
    return value if isinstance(value, str) else str(value)


def required_str(args: dict[str, Any], name: str) -> str:
    value = str_arg(args, name)
    if value is None or not value.strip():
        raise ValueError(f"缺少必填参数: {name}")
    return value


def int_arg(args: dict[str, Any], name: str, default: int | None = None) -> int | None:
    value = args.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, (bool, int)):
        return int(value)
    try:
        return int(float(str(value).strip()))
    except ValueError:
        raise ValueError(f"参数 {name} 必须是整数: {value!r}") from None


def bool_arg(args: dict[str, Any], name: str, default: bool) -> bool:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, (bool, int)):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"参数 {name} 必须是布尔值: {value!r}")


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def split_lines(text: str) -> list[str]:
    """Lines as Java's ``String.lines()`` sees them: no empty line after a final break.

    ``str.splitlines`` would also split on form feeds and Unicode separators, which
    would shift line numbers away from what editors and ripgrep report.
    """
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def display_path(path: Path, root: Path) -> str:
    """Path relative to the project root with forward slashes, as read_file accepts it."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return path.as_posix()
    return rel.as_posix() or "."
