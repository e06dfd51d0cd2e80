"""Skill bodies as one internal user message after a step's tool results (reference s.6).

A trusted skill's body is an instruction, so it never sits inside a tool result (whose boundary
says "data"): ``load_skill`` answers with a confirmation and asks, through its result's
artifact, for a section of the injection message. ``settle`` then decides per request, on the
unit's own message list (so parallel Plan tasks and Team workers only see what they loaded):

- the same section is still in the history: the result says so and nothing is injected;
- the sections still in the history plus this one would pass the budget: the result becomes a
  failure telling the model to work with what is loaded (only compaction or ``/clear``, which
  remove injection messages, free the budget);
- otherwise the section joins the one injection message appended after the step's results.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from paicli.memory.context.rounds import SKILL_INJECTION, internal, internal_kind
from paicli.tools.boundary import wrap
from paicli.tools.skills.limits import BODY_LIMIT

MARKER = "[PAICLI_SKILL_INJECTION]"
INTRO = "以下是刚才 load_skill 加载的 Skill 指引，请按指引继续当前任务。"
ARTIFACT_KEY = "skill_load"
_HEADER = re.compile(r"^## 已加载 Skill：(\S+?)（来源：[^，）]*(?:，第 (\d+) 行起)?）", re.MULTILINE)


def cut(text: str, start: int = 1, limit: int = BODY_LIMIT) -> tuple[str, int | None]:
    """Lines ``start``.. (1-based) up to ``limit`` characters, ending at a line boundary, and the
    number of the first line left out (None when nothing is). A first line longer than the
    limit is cut inside it rather than returning nothing."""
    lines = text.splitlines(keepends=True)[start - 1:]
    taken, size = 0, 0
    while taken < len(lines) and size + len(lines[taken]) <= limit:
        size += len(lines[taken])
        taken += 1
    if taken == 0 and lines:
        return lines[0][:limit], start + 1 if len(lines) > 1 else None
    rest = start + taken if taken < len(lines) else None
    return "".join(lines[:taken]).rstrip("\r\n"), rest


def continuation_hint(name: str, next_line: int) -> str:
    return (f"\n\n...(Skill 正文较长，已在第 {next_line - 1} 行后截断；需要后续内容时调用 "
            f'load_skill(name="{name}", file="SKILL.md", offset={next_line}))')


def section(name: str, source: str, directory: Path, body: str, start: int = 1) -> str:
    part = f"，第 {start} 行起" if start > 1 else ""
    return (f"## 已加载 Skill：{name}（来源：{source}{part}）\n"
            f"Skill 目录：{directory}\n"
            f"文中 references/、scripts/ 等相对路径都以 Skill 目录为基准：读取附属文件用 "
            f'load_skill(name="{name}", file="references/xxx.md")，执行脚本用 execute_command 并写出绝对路径。\n\n'
            f"{body.strip()}")


def injection_message(sections: Sequence[str]) -> HumanMessage:
    return internal(f"{MARKER}\n{INTRO}\n\n" + "\n\n".join(sections) + "\n\n---", SKILL_INJECTION)


def confirmation(name: str, chars: int) -> str:
    return (f"已加载 skill '{name}' 的完整指引（{chars} 字符），正文紧跟在本工具结果之后，"
            f'以 "## 已加载 Skill：{name}" 段出现。')


def loaded(history: Sequence[BaseMessage]) -> tuple[set[tuple[str, int]], int]:
    """The (name, first line) of every section still in the history, and their messages' length."""
    active: set[tuple[str, int]] = set()
    used = 0
    for message in history:
        if internal_kind(message) == SKILL_INJECTION and isinstance(message.content, str):
            used += len(message.content)
            active.update((m.group(1), int(m.group(2) or 1)) for m in _HEADER.finditer(message.content))
    return active, used


def settle(history: Sequence[BaseMessage], step: list[BaseMessage]) -> list[BaseMessage]:
    """The step's messages with every load request decided, and the injection message after them.
    The history is read only when the step has a request (most steps have none)."""
    if all(_request(message) is None for message in step):
        return list(step)
    active, used = loaded(history)
    sections: list[str] = []
    settled: list[BaseMessage] = []
    for message in step:
        request = _request(message)
        if request is None:
            settled.append(message)
            continue
        key, text = (request["name"], request["start"]), request["section"]
        if key in active:
            settled.append(_answer(message, still_loaded(request["name"]), True))
        elif used + len(text) > request["budget"]:
            settled.append(_answer(message, over_budget(request["name"], used, len(text), request["budget"]), False))
        else:
            active.add(key)
            used += len(text)
            sections.append(text)
            settled.append(_answer(message, None, True))
    return [*settled, injection_message(sections)] if sections else settled


def _request(message: BaseMessage) -> dict | None:
    """A load_skill result's request to inject its section (its artifact), else None."""
    return (message.artifact or {}).get(ARTIFACT_KEY) if isinstance(message, ToolMessage) else None


def still_loaded(name: str) -> str:
    return (f"Skill '{name}' 的正文还在当前上下文里（见之前的 \"## 已加载 Skill：{name}\" 段），"
            "直接按它继续，不需要重新加载。")


def over_budget(name: str, used: int, size: int, budget: int) -> str:
    return (f"load_skill 未加载 '{name}'：已加载的 Skill 正文共 {used} 字符，再加上这一段 {size} 字符会超过 "
            f"{budget} 字符预算。请用已经加载的指引完成当前任务；上下文压缩或 /clear 移出旧的 Skill 正文后才能再加载。")


def _answer(message: ToolMessage, text: str | None, ok: bool) -> ToolMessage:
    """The result without the request in its artifact (the body is not stored twice), and with
    ``text`` in place of the confirmation when the request was not injected."""
    artifact = {k: v for k, v in message.artifact.items() if k != ARTIFACT_KEY}
    update: dict = {"artifact": artifact or None, "status": "success" if ok else "error"}
    if text is not None:
        update["content"] = wrap(message.name or "load_skill", text)
    return message.model_copy(update=update)
