"""Splitting a history into real user rounds, rendering the old part, rebuilding (reference f.2, f.4, f.6).

Internal user messages (Q5, docs/behavior.md#decisions) are HumanMessages the program wrote: skill
injections, runaway reminders, budget finalization, image tool results, a turn's relevant
memories, the MCP resources a user's message mentioned, language-server diagnostics, and our own
summaries.
They carry ``additional_kwargs["paicli_internal"] = "<kind>"`` (use ``internal()`` to build
one). They never count as a round, so "keep the last 3 rounds" means 3 things the user typed.
The flag, not the text, decides: a user who pastes ``[runaway guard]`` still starts a round.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from paicli.memory.tokens import arguments_json, block_text, is_image

INTERNAL_KEY = "paicli_internal"
SKILL_INJECTION = "skill_injection"  # reference s.6: first line [PAICLI_SKILL_INJECTION]
RUNAWAY_REMINDER = "runaway_reminder"  # reference s.3: starts with [runaway guard]
BUDGET_FINALIZATION = "budget_finalization"  # reference s.3
IMAGE_TOOL_RESULT = "image_tool_result"  # reference s.2: one user message per result with images
COMPACTION_SUMMARY = "compaction_summary"  # the summary message of a rebuild (f.6)
COMPACTION_ACK = "compaction_ack"
MEMORY_CONTEXT = "memory_context"  # a turn's relevant long-term memories (memory/context/turn_memory.py)
MCP_RESOURCE = "mcp_resource"  # the MCP resources the user's message mentioned (tools/mcp/mentions.py)
LSP_DIAGNOSTICS = "lsp_diagnostics"  # reference s.2 item 8.2: new diagnostics after an edit (nodes/diagnostics.py)
# Skill bodies are never summarised (f.3 step 5); reminders and the finalization order would
# only teach the summary to repeat one-off instructions; memories are clues, not facts, and a
# summary would state them as facts (they come back from the memory file when relevant again).
# Diagnostics describe one moment of a file: a summary would keep errors long since fixed.
NOT_SUMMARISED = frozenset({SKILL_INJECTION, RUNAWAY_REMINDER, BUDGET_FINALIZATION, MEMORY_CONTEXT, LSP_DIAGNOSTICS})

MAX_SUMMARY_INPUT_CHARS = 60_000  # reference (f.1): one summariser request at most
IMAGE_NOTE = "\n  [图片附件：此文本摘要无法读取图像内容]"  # reference (f.4)
ACK_TEXT = "好的，我已了解之前的上下文，请继续。"  # reference (f.6)
_ROLES = {"human": "USER", "ai": "ASSISTANT", "tool": "TOOL", "system": "SYSTEM"}
_SKILL_HEADER = re.compile(r"^## 已加载 Skill：(.+?)(?:（来源：.*）)?\s*$", re.MULTILINE)


def internal(text: str, kind: str, **kwargs) -> HumanMessage:
    return HumanMessage(text, additional_kwargs={INTERNAL_KEY: kind}, **kwargs)


def internal_kind(message: BaseMessage) -> str | None:
    if not isinstance(message, HumanMessage):
        return None
    kind = message.additional_kwargs.get(INTERNAL_KEY)
    return str(kind) if kind else None


def system_end(messages: Sequence[BaseMessage]) -> int:
    """State never holds the system prompt, but accept a list that starts with one."""
    return 1 if messages and isinstance(messages[0], SystemMessage) else 0


def user_indices(messages: Sequence[BaseMessage], start: int = 0) -> list[int]:
    """Indices of real user input: HumanMessages without the internal flag."""
    return [i for i in range(start, len(messages))
            if isinstance(messages[i], HumanMessage) and internal_kind(messages[i]) is None]


def clean_splits(messages: Sequence[BaseMessage]) -> set[int]:
    """Cut positions k (old = [:k], kept = [k:]) that leave no call and result on different sides.

    In a well-formed history every real user message is such a place; checking keeps a
    damaged history (an interrupted turn) from being cut through a pair."""
    owner: dict[str, int] = {}
    for i, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for call in [*message.tool_calls, *message.invalid_tool_calls]:
                if call.get("id"):
                    owner[call["id"]] = i
    crossing = [0] * (len(messages) + 2)  # difference array over cut positions
    for i, message in enumerate(messages):
        if isinstance(message, ToolMessage) and message.tool_call_id in owner:
            low, high = sorted((owner[message.tool_call_id], i))
            crossing[low + 1] += 1
            crossing[high + 1] -= 1
    safe, running = set(), 0
    for k in range(len(messages) + 1):
        running += crossing[k]
        if running == 0:
            safe.add(k)
    return safe


def render(messages: Sequence[BaseMessage]) -> str:
    """reference (f.4): ``ROLE[id]: content``, image notes, tool calls, blank line."""
    parts: list[str] = []
    for message in messages:
        parts.append(_ROLES.get(message.type, message.type.upper()))
        if isinstance(message, ToolMessage) and message.tool_call_id:
            parts.append(f"[{message.tool_call_id}]")
        content = message.content
        if isinstance(content, str):
            parts.append(": " + content)
        else:
            parts.append(": " + "\n\n".join(t for t in map(block_text, content) if t))
            parts.extend(IMAGE_NOTE for block in content if is_image(block))
        if isinstance(message, AIMessage):
            for call in [*message.tool_calls, *message.invalid_tool_calls]:
                parts.append(f"\n  TOOL_CALL[{call.get('id')}] {call.get('name')}: {arguments_json(call.get('args') or '')}")
        parts.append("\n\n")
    return "".join(parts)


def render_chunks(messages: Sequence[BaseMessage], size: int = MAX_SUMMARY_INPUT_CHARS) -> list[str]:
    """Chunks of exactly ``size`` chars (the last may be shorter); nothing is dropped."""
    text = render(messages)
    return [text[i:i + size] for i in range(0, len(text), size)]


def skill_names(message: BaseMessage) -> list[str]:
    if internal_kind(message) != SKILL_INJECTION:
        return []
    text = message.content if isinstance(message.content, str) else render([message])
    return [m.group(1).strip() for m in _SKILL_HEADER.finditer(text)]


def rebuild(messages: Sequence[BaseMessage], split: int, summary_text: str) -> list[BaseMessage]:
    """reference (f.6): [system] + summary (user) + acknowledgement (assistant) + kept rounds.

    Skill bodies in the compacted part are dropped, and the summary names them so the model
    knows to load them again."""
    start = system_end(messages)
    removed: dict[str, None] = {}
    for message in messages[start:split]:
        removed.update(dict.fromkeys(skill_names(message)))
    if removed:
        summary_text += f"\n\n[Skill 正文已随压缩移出上下文：{'、'.join(removed)}。还需要按这些 Skill 操作时，重新调用 load_skill 加载。]"
    summary = internal(summary_text, COMPACTION_SUMMARY, id=str(uuid.uuid4()))
    ack = AIMessage(ACK_TEXT, additional_kwargs={INTERNAL_KEY: COMPACTION_ACK}, id=str(uuid.uuid4()))
    return [*messages[:start], summary, ack, *messages[split:]]
