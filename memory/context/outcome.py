"""Tool results that were decisions, not the model's doing (reference s.3), typed on the message.

A policy denial, a HITL or auto-approval refusal, a guard's refusal inside a tool, a call the
user cancelled: each is a failed ``ToolMessage`` (the model must react), but the runaway guard
must not count it as the model repeating itself. The mark rides in the message's ``artifact``,
which the model never sees and the ledger stores whole, so it survives a resumed session.
"""

from __future__ import annotations

from typing import Any

DECIDED_KEY = "decided"


def decided_artifact(artifact: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(artifact or {}), DECIDED_KEY: True}


def is_decided(message: Any) -> bool:
    artifact = getattr(message, "artifact", None)
    return isinstance(artifact, dict) and artifact.get(DECIDED_KEY) is True
