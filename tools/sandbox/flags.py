"""execute_command's sandbox arguments, read the same way by the approval policy and the tool.

``network: true`` asks for network inside the sandbox; ``sandbox: false`` asks to run outside
it. Each comes with a ``reason`` the person reads. Anything but a clear yes/no keeps the safe
side: no network, inside the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}
MAX_REASON_CHARS = 300


@dataclass(frozen=True)
class CommandFlags:
    network: bool = False
    outside: bool = False
    reason: str = ""


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if value is not None else ""
    return True if text in _TRUE else False if text in _FALSE else None


def command_flags(args: Any) -> CommandFlags:
    if not isinstance(args, dict):
        return CommandFlags()
    reason = args.get("reason")
    reason = " ".join(reason.split())[:MAX_REASON_CHARS] if isinstance(reason, str) else ""
    return CommandFlags(network=_flag(args.get("network")) is True, outside=_flag(args.get("sandbox")) is False,
                        reason=reason)
