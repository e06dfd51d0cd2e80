"""What happens to one tool call: the one set of decision types (reference o.5, v.1, v.4, v.7).

``paicli.nodes.core.policy.decide`` returns one of these per call, once per iteration: the turn policy
may ``Deny``, the approval level may ``Ask``, everything else is an ``Allow``. The gate turns
each ``Ask`` into the user's ``Allow`` or ``Deny``; execution runs the ``Allow``s and answers the
``Deny``s with their text. ``approver`` and ``reason`` are what the audit log records (v.7).

Between nodes a decision travels in the graph state as a plain JSON record (``to_record`` /
``from_record``): checkpoints, the ledger and Studio's server all store state, and none of them
should have to know this module's classes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Union

# ``approver`` (audit, v.7): "none" the approval level decided, "hitl" the user, "policy" the
# turn policy, "auto" the auto reviewer (v.2), "approve_all" an earlier "approve all" of the user.


@dataclass(frozen=True)
class Allow:
    args: dict[str, Any]  # what runs: the model's arguments, or the user's edit of them
    approver: str = "none"


@dataclass(frozen=True)
class Deny:
    text: str  # the tool result the model reads
    approver: str = "none"
    reason: str = ""  # the policy's reason code (o.2), for the audit log


@dataclass(frozen=True)
class Ask:
    tool: str
    args: dict[str, Any]
    danger: str
    risk: str
    notice: str = ""  # why this call needs a question even when the level would not ask
    review: bool = False  # the auto reviewer answers first (reference v.2); the person only if it escalates


Decision = Union[Allow, Deny, Ask]
_KINDS: dict[str, type] = {"allow": Allow, "deny": Deny, "ask": Ask}


def to_record(decision: Decision) -> dict[str, Any]:
    kind = next(name for name, cls in _KINDS.items() if isinstance(decision, cls))
    return {"decision": kind, **asdict(decision)}


def from_record(value: Any) -> Decision | None:
    """The decision a state record holds; None for anything else (a record edited by hand in
    Studio, or written by an older version), so the caller decides the call afresh."""
    if not isinstance(value, dict) or value.get("decision") not in _KINDS:
        return None
    cls = _KINDS[value["decision"]]
    fields = {k: v for k, v in value.items() if k in cls.__dataclass_fields__}
    try:
        decision = cls(**fields)
    except TypeError:
        return None
    args = getattr(decision, "args", {})
    return decision if isinstance(args, dict) else None
