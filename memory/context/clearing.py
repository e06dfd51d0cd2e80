"""Tier 2: replace the content of old tool results with a short placeholder (reference e).

Only the text changes: the message keeps its id, ``tool_call_id``, name and status, and no
message is added or removed, so every tool call keeps its result and providers never see a
broken pairing. The 3 most recent results always stay; short results and excluded tools stay.
Clearing is idempotent. It invalidates the provider's prefix cache from the first edit onward,
which is why it runs only above its own trigger.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from paicli.memory.tokens import block_text

DEFAULT_KEEP_RECENT = 3  # reference (e.1): keep the 3 most recent tool results
MIN_CLEARABLE_CHARS = 400  # reference (e.1): shorter results (wrapper included) are not worth it
PLACEHOLDER_PREFIX = "[已清理的旧工具结果]"  # reference (e.1)
_TOOL_FROM_WRAPPER = re.compile(r'^<tool_result tool="([^"]+)"')  # reference (e.2) step 3
_OFFLOAD_FILE = re.compile(r"^文件: (\.paicli/tool-outputs/\S+)$", re.MULTILINE)  # reference (e.2) step 5


def parse_exclude_tools(text: str | None) -> frozenset[str]:
    """reference (e.1): comma-separated, trimmed, lower-cased, blanks dropped."""
    return frozenset(p.strip().lower() for p in re.split(r"\s*,\s*", text or "") if p.strip())


def placeholder(tool_name: str, original: str) -> str:
    """reference (e.2) step 5; not re-wrapped in a <tool_result> boundary."""
    text = f"{PLACEHOLDER_PREFIX} 工具 {tool_name} 的这次输出（约 {len(original)} 字符）已从上下文清理以节省空间。需要时重新调用该工具获取最新结果"
    offloaded = _OFFLOAD_FILE.search(original)
    if offloaded:
        text += f"；完整输出仍保存在 {offloaded.group(1)}，可用 read_file 按 offset/limit 读回"
    return text + "。"


def content_text(message: BaseMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else "\n\n".join(t for t in map(block_text, content) if t)


@dataclass(frozen=True)
class ClearResult:
    messages: list[BaseMessage]  # the whole list, same length and order as the input
    replaced: list[BaseMessage] = field(default_factory=list)  # just the edited messages (same ids)

    @property
    def cleared_count(self) -> int:
        return len(self.replaced)


@dataclass(frozen=True)
class ToolResultClearer:
    enabled: bool = True
    keep_recent: int = DEFAULT_KEEP_RECENT
    exclude_tools: frozenset[str] = frozenset()

    def clear_if_needed(self, messages: Sequence[BaseMessage], tokens: int, trigger: int) -> ClearResult | None:
        """``tokens`` is the current estimate; ``trigger`` the profile's clearing trigger."""
        if not self.due(messages, tokens, trigger):
            return None
        result = self.clear(messages)
        return result if result.replaced else None

    def would_clear(self, messages: Sequence[BaseMessage], tokens: int, trigger: int) -> bool:
        """Whether ``clear_if_needed`` would edit anything, without copying a message (the
        router in front of the model call asks this at every call over the trigger)."""
        return self.due(messages, tokens, trigger) and next(self._clearable(messages), None) is not None

    def due(self, messages: Sequence[BaseMessage], tokens: int, trigger: int) -> bool:
        return self.enabled and bool(messages) and trigger > 0 and tokens >= trigger

    def clear(self, messages: Sequence[BaseMessage]) -> ClearResult:
        """Clears regardless of any threshold (forced compaction, tests)."""
        out = list(messages)
        replaced: list[BaseMessage] = []
        for index, name, text in self._clearable(messages):
            out[index] = messages[index].model_copy(update={"content": placeholder(name, text)})
            replaced.append(out[index])
        return ClearResult(out, replaced)

    def _clearable(self, messages: Sequence[BaseMessage]) -> Iterator[tuple[int, str, str]]:
        """(index, tool name, text) of each old tool result that clearing replaces."""
        tool_indices = [i for i, m in enumerate(messages) if isinstance(m, ToolMessage)]
        candidates = tool_indices[: max(0, len(tool_indices) - max(0, self.keep_recent))]
        names: dict[str, str] | None = None  # built on first need: most calls find nothing to clear
        for index in candidates:
            message = messages[index]
            text = content_text(message)
            if len(text) < MIN_CLEARABLE_CHARS or text.startswith(PLACEHOLDER_PREFIX):
                continue
            names = _call_names(messages) if names is None else names
            name = names.get(message.tool_call_id) or _wrapper_name(text) or message.name or "unknown"
            if name.lower() in self.exclude_tools:
                continue
            yield index, name, text


def _call_names(messages: Iterable[BaseMessage]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for call in [*message.tool_calls, *message.invalid_tool_calls]:
                if call.get("id") and call.get("name"):
                    names[call["id"]] = call["name"]
    return names


def _wrapper_name(text: str) -> str | None:
    match = _TOOL_FROM_WRAPPER.match(text)
    return match.group(1) if match else None
