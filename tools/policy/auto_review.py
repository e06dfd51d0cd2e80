"""The auto reviewer (reference v.2): at the ``default`` approval level a model decides whether a
command may run without asking the person.

It sees the user's own request (never tool results, never a Plan task's brief), the tool and its
arguments, and nothing else; it is sent no tools. It fails closed: only a reply whose first
``{…}`` span parses as JSON and whose one ``decision`` is exactly the string ``allow`` allows (a
``decision`` given twice, or not a plain string, is unreadable: issue 34). A
timeout, an error, an empty or unreadable reply, oversized arguments all come back as "not
allowed" with their own reason. Allows are cached per ``tool + "\\0" + args`` until the request
text changes. The guards (and the sandbox) still check an allowed call when it runs.

Which calls come here and what a refusal turns into is decided by the approval level
(``paicli.tools.policy.approval``) and the gate (``paicli.nodes.gate_tools``); this module only asks the model.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from paicli.memory.tokens import text_of

REVIEW_TIMEOUT = 20.0  # reference v.2: seconds; the call in flight is cancelled
MAX_REQUEST_CHARS = 2_000  # reference v.2: the user's request sent to the reviewer
MAX_ARGUMENT_CHARS = 32_000  # reference v.2: longer arguments go to the person
MAX_REASON_CHARS = 80
AUTO_ESCALATE_AFTER = 3  # reference v.1: consecutive denials in a turn before the person is asked

# reference v.2: the reasons of each outcome
ALLOWED = "自动审查判定为低风险"
NEEDS_ASKING = "自动审查判定需要确认"
TOO_LONG = "参数过长，转人工确认"
UNAVAILABLE = "自动审查不可用，转人工确认"
TIMED_OUT = "自动审查超时，转人工确认"
FAILED = "自动审查失败，转人工确认"
EMPTY = "自动审查没有给出结论，转人工确认"
UNREADABLE = "自动审查结果无法解析，转人工确认"
TRUNCATED = "…(已截断)"

# reference v.1: what the terminal shows, what the model reads, what the person is told
ALLOWED_LINE = "  ✓ auto 已放行 {tool}：{reason}"
DENIED_LINE = "  ⊘ auto 未放行 {tool}：{reason}（已交回模型处理）"
# Issue 41: the way out for both front ends (REPL: Shift+Tab to ask mode; -p: a run with --yes).
DENIED_TEXT = ("[AUTO] 自动审查未放行：{reason}。请换一种更安全、只读的做法；如果确实必须执行，请在回复里向用户说明原因，"
               "由用户决定是否放行：交互终端中按 Shift+Tab 切到 ask 模式后确认，脚本（paicli -p）中加 --yes 重新运行。")
ESCALATION_NOTE = "自动审查已连续 3 次未放行，本次：{reason}"

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)  # greedy: the first "{" to the last "}"


@dataclass(frozen=True)
class Verdict:
    allow: bool
    reason: str


def parse_reply(text: str) -> Verdict:
    """Fail-closed reading of the reviewer's reply."""
    if not text.strip():
        return Verdict(False, EMPTY)
    found = _OBJECT.search(text)
    try:
        data = json.loads(found.group(0), object_pairs_hook=_once) if found else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Verdict(False, UNREADABLE)
    if "decision" in data and not isinstance(data["decision"], str):  # issue 34 item 12: a list, a number, an object: unread
        return Verdict(False, UNREADABLE)
    allow = data.get("decision") == "allow"  # exactly: "Allow", "allow " or true do not allow
    reason = data.get("reason")
    reason = reason.strip()[:MAX_REASON_CHARS] if isinstance(reason, str) else ""
    return Verdict(allow, reason or (ALLOWED if allow else NEEDS_ASKING))


def _once(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """issue 34 item 12: ``{"decision":"deny","decision":"allow"}`` is refused, not read as its last key."""
    names = [name for name, _ in pairs]
    if "decision" in names and names.count("decision") > 1:
        raise ValueError("decision twice")
    return dict(pairs)


def review_message(prefix: str, request: str, tool: str, arguments: str) -> str:
    if len(request) > MAX_REQUEST_CHARS:
        request = request[:MAX_REQUEST_CHARS] + TRUNCATED
    data = {"user_request": request, "tool": tool, "arguments": arguments}
    return prefix.rstrip("\n") + "\n" + json.dumps(data, ensure_ascii=False, indent=2)


class AutoReviewer:
    """One per session (a live object of ``Deps``): the model, the prompt texts, the allow cache.

    ``model`` None means no reviewer client could be made: every call gets ``UNAVAILABLE``.
    ``make_model`` builds it at the first review instead, so a session that never reviews a
    command never builds the client (issue 30: ``-p`` start-up)."""

    def __init__(self, model: BaseChatModel | None, system_prompt: str, user_prefix: str,
                 timeout: float = REVIEW_TIMEOUT, *, make_model: Callable[[], BaseChatModel] | None = None):
        self.model, self.system_prompt, self.user_prefix, self.timeout = model, system_prompt.strip(), user_prefix, timeout
        self._make_model = make_model
        self._request: str | None = None
        self._allowed: dict[str, Verdict] = {}

    def set_request(self, request: str) -> None:
        """reference s.1 item 3: a new request text forgets the allows given for the last one."""
        if request != self._request:
            self._request = request
            self._allowed.clear()

    async def review(self, request: str, tool: str, args: dict[str, Any]) -> Verdict:
        self.set_request(request)
        arguments = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if len(arguments) > MAX_ARGUMENT_CHARS:
            return Verdict(False, TOO_LONG)
        key = tool + "\0" + arguments
        if key in self._allowed:
            return self._allowed[key]
        verdict = await self._ask(request, tool, arguments)
        if verdict.allow:
            self._allowed[key] = verdict
        return verdict

    async def _ask(self, request: str, tool: str, arguments: str) -> Verdict:
        if self.model is None and self._make_model is not None:
            make, self._make_model = self._make_model, None
            try:
                self.model = make()
            except Exception:  # noqa: BLE001 - no client: the calls go to the person, as for None
                self.model = None
        if self.model is None:
            return Verdict(False, UNAVAILABLE)
        messages = [SystemMessage(self.system_prompt),
                    HumanMessage(review_message(self.user_prefix, request, tool, arguments))]
        try:
            # "nostream": inside a graph run, LangGraph would otherwise stream the verdict as output
            reply = await asyncio.wait_for(self.model.ainvoke(messages, {"tags": ["nostream"]}), self.timeout)
        except asyncio.TimeoutError:
            return Verdict(False, TIMED_OUT)
        except Exception:  # noqa: BLE001 - any failure of the reviewer is a refusal, never an allow
            return Verdict(False, FAILED)
        text = text_of(reply)
        return parse_reply(text)
