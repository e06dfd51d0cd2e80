"""One streamed model response, read to its end and checked once (``paicli.nodes.guards.cutoff``).

We stream (``astream``) rather than ``ainvoke`` so the aggregated chunk still carries
``tool_call_chunks``: each call's arguments exactly as the provider sent them. ``ainvoke``
returns only LangChain's parsed view, in which a cut-off argument string has already been
completed into a valid-looking dict. The checked message replaces that view: calls that may
run are ``tool_calls`` (strictly parsed), the others ``invalid_tool_calls`` whose ``error``
is what the model is told. Nothing downstream decides this again.

A refused call stays an ``invalid_tool_call``, not a ``tool_call`` with ``{}``: the router,
the gate, the executor, the runaway guard and the audit all read ``tool_calls`` only, so none
of them can run it or count it as a real call with empty arguments. Its ``args`` become
``"{}"`` (``paicli.nodes.guards.cutoff.REFUSED_ARGUMENTS``) because langchain-openai replays an invalid
call's ``args`` verbatim as ``function.arguments``, and servers reject history whose
arguments are not a JSON object; the raw text survives only as a preview in ``error``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import openai
from langchain_core.exceptions import LangChainException
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, message_chunk_to_message
from langchain_core.messages.tool import invalid_tool_call, tool_call

from paicli.nodes.guards.cutoff import (
    AT_LIMIT,
    CUT_TEXT_NOTICE,
    REFUSED_ARGUMENTS,
    UNFINISHED,
    RawCall,
    rejected_notice,
    response_problem,
    sort_calls,
    stored_name,
)
from paicli.memory.tokens import text_of
from paicli.nodes.guards.provider_errors import is_dropped_connection

PROVIDER_ERRORS = (openai.APIError, LangChainException)


class IncompleteResponse(LangChainException):
    """A text answer whose stream never finished, even after one retry."""


class DroppedMidStream(LangChainException):
    """The connection dropped after the response had started; the client retries only
    before a response starts, so this one is ours to retry. The cause keeps the details."""


@dataclass(frozen=True)
class Checked:
    message: AIMessage
    notice: str | None = None
    """One line for the user: calls not run, or an answer cut at the output limit."""
    unfinished: str | None = None
    """Why a text answer is incomplete (the stream ended without a finish reason)."""


async def stream_response(model: Any, messages: list[BaseMessage]) -> BaseMessage:
    total: BaseMessage | None = None
    try:
        async for chunk in model.astream(messages):
            total = chunk if total is None else total + chunk
    except PROVIDER_ERRORS as exc:
        if total is not None and is_dropped_connection(exc):
            raise DroppedMidStream(str(exc)) from exc
        raise
    return total if total is not None else AIMessage("")


def raw_calls(message: BaseMessage) -> list[RawCall]:
    chunks = getattr(message, "tool_call_chunks", None)
    if chunks:
        return [RawCall(c.get("name"), c.get("args"), c.get("id")) for c in chunks]
    # Not streamed (a model without streaming): only the parsed view is there, and a
    # non-streaming client parses strictly, so its valid calls are complete.
    calls = getattr(message, "tool_calls", None) or []
    invalid = getattr(message, "invalid_tool_calls", None) or []
    return ([RawCall(c.get("name"), json.dumps(c.get("args") or {}), c.get("id")) for c in calls]
            + [RawCall(c.get("name"), c.get("args"), c.get("id")) for c in invalid])


def as_ai_message(message: BaseMessage) -> AIMessage:
    if isinstance(message, AIMessageChunk):
        message = message_chunk_to_message(message)
    return message if isinstance(message, AIMessage) else AIMessage(content=str(message.content))


def check_response(message: BaseMessage) -> Checked:
    calls = raw_calls(message)
    problem = response_problem(message.response_metadata or {}, empty=not calls and not text_of(message).strip())
    decided = sort_calls(calls, problem)
    checked = as_ai_message(message).model_copy(update={
        "tool_calls": [tool_call(name=c.name or "", args=args, id=c.id) for c, args in decided.runnable],
        "invalid_tool_calls": [invalid_tool_call(name=stored_name(c.name), args=REFUSED_ARGUMENTS, id=c.id,
                                                 error=error) for c, error in decided.rejected],
    })
    if decided.rejected:
        return Checked(checked, rejected_notice(len(decided.rejected), problem))
    if not calls and problem == AT_LIMIT:
        return Checked(checked, CUT_TEXT_NOTICE)
    return Checked(checked, unfinished=UNFINISHED if not calls and problem == UNFINISHED else None)


REPLY_PREVIEW_CHARS = 300  # issue 26: how much of a reply that could not be used the user sees


def reply_preview(reply: str) -> str:
    """What the model sent when its reply could not be used (a planner's plan, a Team reviewer's
    verdict), on one line and bounded; the front end makes control characters visible."""
    if not reply.strip():
        return "模型的回复为空"
    flat = " ".join(reply.split())
    shown = flat if len(flat) <= REPLY_PREVIEW_CHARS else flat[:REPLY_PREVIEW_CHARS] + "..."
    return f"模型的回复（{len(reply)} 字符）: {shown}"
