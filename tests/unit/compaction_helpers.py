"""Shared pieces for the compaction tests: the real prompt files, message builders, a fake summariser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from paicli.memory.context.rounds import internal
from paicli.memory.context.summary import HEADINGS
from paicli.nodes.core.compaction_prompts import session_prompts, summary_prompts  # noqa: F401 (re-exported for tests)
from paicli.tools.boundary import wrap


VALID_SUMMARY = "\n".join(f"{h}\n- 记录 {i}" for i, h in enumerate(HEADINGS))


class FakeSummarizer:
    """Records every prompt; answers from a script (strings or exceptions), then ``default``."""

    def __init__(self, *script: Any, default: str | Callable[[str], str] = VALID_SUMMARY):
        self.script = list(script)
        self.default = default
        self.prompts: list[list[BaseMessage]] = []

    async def __call__(self, messages: list[BaseMessage]) -> str:
        self.prompts.append(messages)
        if self.script:
            reply = self.script.pop(0)
            if isinstance(reply, BaseException):
                raise reply
            return reply
        return self.default(messages[-1].content) if callable(self.default) else self.default

    @property
    def user_prompts(self) -> list[str]:
        return [p[-1].content for p in self.prompts]


_counter = iter(range(1, 10**9))


def uid(prefix: str = "m") -> str:
    return f"{prefix}{next(_counter)}"


def user(text: str = "请继续") -> HumanMessage:
    return HumanMessage(text, id=uid("u"))


def call(name: str = "read_file", args: dict | None = None, cid: str | None = None) -> dict:
    return {"name": name, "args": args if args is not None else {"path": "a.py"}, "id": cid or uid("c"), "type": "tool_call"}


def ai(text: str = "", *calls: dict, **kwargs) -> AIMessage:
    return AIMessage(text, tool_calls=list(calls), id=uid("a"), **kwargs)


def result(c: dict, text: str) -> ToolMessage:
    return ToolMessage(wrap(c["name"], text), tool_call_id=c["id"], name=c["name"], id=uid("t"))


def tool_round(question: str, sizes: list[int], name: str = "read_file") -> list[BaseMessage]:
    """A user question, one assistant message with parallel calls, their results, an answer."""
    calls = [call(name) for _ in sizes]
    return [user(question), ai("", *calls), *[result(c, "x" * n) for c, n in zip(calls, sizes)], ai("完成")]


def skill_injection(*names: str) -> HumanMessage:
    sections = "".join(f"## 已加载 Skill：{n}（来源：builtin）\nSkill 目录：/skills/{n}\n\n{n} 的正文\n\n" for n in names)
    return internal(f"[PAICLI_SKILL_INJECTION]\n以下是刚才 load_skill 加载的 Skill 指引。\n\n{sections}---", "skill_injection", id=uid("s"))
