"""Cut-off model output: did a response finish, and which of its tool calls may run.

A streamed response can end early: the connection closes before the provider's last chunk
(no ``finish_reason``), or the model hits its output limit (``finish_reason="length"``).
LangChain's streaming parser then *completes* half-written arguments
(``{"content": "def g(): ret`` becomes ``{"content": "def g(): ret"}``), so a cut-off
``write_file`` would overwrite a file with half its text. The decision here uses only what the
provider sent: how it said the response stopped, and each call's raw argument string.

reference c.4: a stream is complete only after ``[DONE]`` or a non-empty ``finish_reason``.
The openai client swallows ``[DONE]``, so only the finish reason is visible here: a stream in
OpenAI's protocol (which langchain-openai and langchain-deepseek mark on every chunk as its
``model_provider``) that ended without one counts as unfinished. Other chat models say it their
own way or not at all (issue 36): Anthropic-style APIs send ``stop_reason`` (``max_tokens`` at the
limit), and a model that reports nothing (langchain_core's fakes, a local wrapper) is judged by
its message alone: each call runs only when its raw arguments are one complete JSON object, so a
cut-off argument string is still refused.

Plain data in, plain data out; ``paicli.nodes.model.response`` applies it to LangChain messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Some OpenAI-compatible gateways pass an Anthropic-style reason through unchanged; Gemini's
# is MAX_TOKENS (reasons are compared lower-cased).
LENGTH_REASONS = frozenset({"length", "max_tokens"})
# The streaming protocols whose every finished response names its finish reason (reference c.4):
# OpenAI's chat completions, as langchain-openai ("openai") and langchain-deepseek ("deepseek")
# mark their chunks in ``response_metadata["model_provider"]``.
REPORTING_PROVIDERS = frozenset({"openai", "deepseek"})

UNFINISHED = "响应流在结束标记之前中断"
AT_LIMIT = "输出达到模型的长度上限"


def stop_problem(finish_reason: str | None) -> str | None:
    """Why a response did not finish normally, or None when the provider says it did."""
    if not finish_reason:
        return UNFINISHED
    if finish_reason.lower() in LENGTH_REASONS:
        return AT_LIMIT
    return None


def response_problem(metadata: Mapping[str, Any], empty: bool = False) -> str | None:
    """Why a response (its ``response_metadata``) did not finish, or None: from the reason it
    reports (``finish_reason``, or ``stop_reason``); without one, unfinished in a protocol that
    always reports one, or when it holds nothing at all (``empty``: no text, no call). Otherwise
    the model reports none and its message is judged by itself (``sort_calls``)."""
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    if reason:
        return stop_problem(str(reason))
    return UNFINISHED if empty or metadata.get("model_provider") in REPORTING_PROVIDERS else None


def parse_arguments(raw: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """``(args, None)`` when ``raw`` is one complete JSON object, else ``(None, why)``.

    An empty string counts as ``{}``: providers send "" for a tool that takes no arguments,
    and a user expects such a call to run (a tool that needed arguments says which)."""
    if raw is None or not raw.strip():
        return {}, None
    try:
        # strict=False: control characters inside strings, as LangChain's own parser allows.
        value = json.loads(raw, strict=False)
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(value, dict):
        return None, f"需要一个 JSON 对象，收到的是 {type(value).__name__}"
    return value, None


_SPLIT_HINT = "内容很长时请拆成多次较小的 write_file / edit_file 调用"


def cut_off_error(problem: str) -> str:
    return f"模型输出被截断（{problem}），参数不完整，此调用未执行；请重新发起参数完整的调用，{_SPLIT_HINT}"


def invalid_json_error(detail: str) -> str:
    return f"参数不是合法的 JSON 对象（{detail}），此调用未执行；请重新发起参数完整的调用，{_SPLIT_HINT}"


# A refused call stays in history, and history is replayed on every request. Several servers
# (Kimi, vLLM's chat templates, llama.cpp) answer 400 when a past call's arguments are not a
# JSON object string, or its name is not a function name; so the stored call says "{}" under a
# well-formed name, and its error result tells the model what it actually sent.
REFUSED_ARGUMENTS = "{}"
NAMELESS = "invalid_tool_call"
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
PREVIEW_HEAD, PREVIEW_TAIL = 200, 100
# Model text quoted back to the model: control characters (a stray ESC, NUL) become visible
# escapes; the tool-result wrapper escapes tags (``paicli.tools.boundary``).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def stored_name(name: str | None) -> str:
    """The name a refused call keeps in history: its own when it is a function name."""
    return name if name and _FUNCTION_NAME.fullmatch(name) else NAMELESS


def arguments_preview(raw: str | None) -> str:
    """The first 200 and last 100 characters of what the model sent, and its length."""
    text = raw or ""
    if len(text) > PREVIEW_HEAD + PREVIEW_TAIL:
        skipped = len(text) - PREVIEW_HEAD - PREVIEW_TAIL
        text = f"{text[:PREVIEW_HEAD]}…（中间省略 {skipped} 个字符）…{text[-PREVIEW_TAIL:]}"
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return f"收到的参数（共 {len(raw or '')} 个字符）：{text}" if raw else "收到的参数为空"


def refusal(reason: str, raw: str | None) -> str:
    """What the model is told about a call that did not run: why, what to do, what it sent."""
    return f"{reason}。{arguments_preview(raw)}"


@dataclass(frozen=True)
class RawCall:
    """One tool call as the provider sent it."""

    name: str | None
    arguments: str | None
    id: str | None


@dataclass(frozen=True)
class Sorted:
    runnable: list[tuple[RawCall, dict[str, Any]]] = field(default_factory=list)
    rejected: list[tuple[RawCall, str]] = field(default_factory=list)
    """Calls that must not run, each with the error the model is told (with a preview of
    the raw arguments, which the stored call no longer carries)."""


def sort_calls(calls: list[RawCall], problem: str | None) -> Sorted:
    """A response that did not finish (``problem``: ``response_problem``) runs none of its calls;
    otherwise a call runs only when its raw arguments are one complete JSON object."""
    result = Sorted()
    for call in calls:
        args, detail = parse_arguments(call.arguments)
        if problem:
            result.rejected.append((call, refusal(cut_off_error(problem), call.arguments)))
        elif not call.name:
            result.rejected.append((call, refusal("调用缺少工具名称，此调用未执行；请重新发起调用", call.arguments)))
        elif args is None:
            result.rejected.append((call, refusal(invalid_json_error(detail or "无法解析"), call.arguments)))
        else:
            result.runnable.append((call, args))
    return result


def rejected_notice(rejected: int, problem: str | None) -> str:
    """The one line the user sees when a response's calls were not run."""
    if problem:
        return f"⚠️ 模型输出被截断（{problem}），其中 {rejected} 个工具调用未执行"
    return f"⚠️ {rejected} 个工具调用的参数不是完整的 JSON 对象，未执行"


CUT_TEXT_NOTICE = "⚠️ 回答达到模型的输出长度上限，可能不完整"
RETRY_NOTICE = "⚠️ {problem}，正在重试一次"


def incomplete_text(problem: str) -> str:
    return f"模型响应不完整：{problem}"
