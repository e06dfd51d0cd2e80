"""``save_memory``: the model's one way to write long-term memory (reference t, j.4, j.5).

The result is the same ``describe()`` text the user sees for ``/save``, so on a conflict the
model can show both entries and let the user choose (Memory Policy). Whether the call may run
at all after external content was read is the turn policy's decision (o.5 rule 11), made before
this function is reached; the write itself still records the external sources (o.1).
"""

from __future__ import annotations

from typing import Any

from paicli.memory.longterm.file import MemoryAccessError
from paicli.tools.base import ToolContext, failed

TRUE_WORDS = frozenset({"true", "1", "yes"})  # reference (t): keep_both


def save_memory(args: dict[str, Any], ctx: ToolContext) -> str:
    fact = str(args.get("fact") or "").strip()
    if not fact:
        return failed("保存长期记忆失败: fact 不能为空")
    memory = getattr(ctx, "memory", None)
    if memory is None:
        return failed("保存长期记忆失败: 记忆保存器未初始化")
    replace_id = str(args.get("replace_id") or "").strip() or None
    try:
        result = memory.save_fact(
            fact, scope=str(args.get("scope") or "project"), project_key=ctx.project_key,
            replace_id=replace_id, allow_conflict=_truthy(args.get("keep_both")),
            external_sources=ctx.external_sources, source_files=ctx.source_files)
    except MemoryAccessError as error:  # the model tells the user; retrying will not help
        return failed(f"保存长期记忆失败: {error}")
    text = result.describe()
    return text if result.written else failed(text)  # a conflict or a missing replace target: not saved


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in TRUE_WORDS
