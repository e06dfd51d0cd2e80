"""The reviewer's verdict (reference s.5, runStep item 5), failing closed.

A step is approved only when the reply is one JSON object whose ``approved`` is the JSON boolean
``true``. ``"true"``, ``1``, "looks fine" or a missing field approve nothing: a reviewer that did
not say yes in the one way the prompt asks for has not said yes. (The reference's older keyword
fallback, 通过/不通过 read from prose, was removed there and is not ported.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from paicli.nodes.team.reply import ReplyError, parse_object

# reference s.5 runStep item 5, verbatim.
UNPARSEABLE = "审查结论无法解析（{error}），按未通过处理"
NO_BOOLEAN = "审查结论缺少布尔类型的 approved 字段，按未通过处理"
DEFAULT_FEEDBACK = "审查未通过，请改进执行结果"


@dataclass(frozen=True)
class Verdict:
    approved: bool
    feedback: str = ""  # why it was rejected, as sent back to the worker; "" when approved
    unreadable: bool = False  # no verdict could be read from the reply (issue 26: the CLI previews it)


def parse_verdict(reply: str) -> Verdict:
    try:
        document = parse_object(reply)
    except ReplyError as error:
        return Verdict(False, UNPARSEABLE.format(error=error), unreadable=True)
    approved = document.get("approved")
    if not isinstance(approved, bool):
        return Verdict(False, NO_BOOLEAN, unreadable=True)
    return Verdict(True) if approved else Verdict(False, feedback(document))


def feedback(document: dict[str, Any]) -> str:
    """``issues`` as ``- item`` lines, else ``suggestions``, else ``summary``, else the default."""
    for key in ("issues", "suggestions"):
        lines = _items(document.get(key))
        if lines:
            return "\n".join(f"- {line}" for line in lines)
    summary = document.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary.strip()
    return DEFAULT_FEEDBACK


def _items(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    texts = (v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value if v is not None)
    return [t.strip() for t in texts if t.strip()]
