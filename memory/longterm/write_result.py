"""The outcome of an explicit memory write and its user-facing text (reference j.5).

The same strings go to the CLI, the TUI and the ``save_memory`` tool result, so the model sees
exactly what the user would and can ask the user to choose on a conflict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from enum import Enum

from paicli.memory.longterm.entry import SCOPE_GLOBAL, Entry


class WriteStatus(Enum):
    STORED = "STORED"
    REPLACED = "REPLACED"
    DUPLICATE = "DUPLICATE"
    CONFLICT = "CONFLICT"
    REPLACE_TARGET_NOT_FOUND = "REPLACE_TARGET_NOT_FOUND"


@dataclass(frozen=True)
class MemoryWriteResult:
    status: WriteStatus
    entry: Entry  # the incoming entry
    scope: str
    replaced: Entry | None = None  # REPLACED: the old entry
    duplicate: Entry | None = None  # DUPLICATE: the existing entry, with its refreshed time
    target_id: str | None = None  # REPLACE_TARGET_NOT_FOUND: the id asked for
    conflicts: tuple[Entry, ...] = field(default=())  # CONFLICT: oldest first

    @property
    def written(self) -> bool:
        return self.status in (WriteStatus.STORED, WriteStatus.REPLACED, WriteStatus.DUPLICATE)

    def describe(self, tz: tzinfo | None = None) -> str:
        """reference (j.5); dates in ``tz``, the system zone by default."""
        match self.status:
            case WriteStatus.STORED:
                return f"💾 已保存到长期记忆({self.scope}): {self.entry.content}"
            case WriteStatus.REPLACED:
                old = self.replaced
                return (f"💾 已用新内容替换长期记忆 {old.id}({self.scope})\n"
                        f"  旧: {old.content}\n  新: {self.entry.content} ({self.entry.id})")
            case WriteStatus.DUPLICATE:
                dup = self.duplicate
                return f"💾 长期记忆中已有等价条目 {dup.id}，未重复写入，已刷新其核实时间: {dup.content}"
            case WriteStatus.REPLACE_TARGET_NOT_FOUND:
                return f"❌ 未写入：要替换的长期记忆 {self.target_id} 不存在或不在当前项目可见范围内。"
        return self._describe_conflict(tz)

    def _describe_conflict(self, tz: tzinfo | None) -> str:
        incoming, first = self.entry.content, self.conflicts[0].id
        flag = "--global " if self.scope == SCOPE_GLOBAL else ""
        lines = ["⚠️ 未写入：新内容与已有长期记忆高度相似但不一致，可能是同一事实的新旧版本。"]
        lines += [f"  已有 {e.id}（写入 {local_date(e.timestamp, tz)}，"
                  f"最后核实 {local_date(e.last_verified_at, tz)}）: {e.content}" for e in self.conflicts]
        lines += [f"  新的: {incoming}",
                  "请让用户选择保留哪一条：",
                  "  - 保留已有：无需操作",
                  f"  - 改用新的：/memory replace {first} {incoming}（或调用 save_memory 并传 replace_id={first}）",
                  f"  - 两条都保留：/save --force {flag}{incoming}"]
        return "\n".join(lines)


def local_date(when: datetime | None, tz: tzinfo | None = None) -> str:
    """``yyyy-MM-dd`` in ``tz`` (None: the system zone, as PaiCLI's ZoneId.systemDefault())."""
    return when.astimezone(tz).strftime("%Y-%m-%d") if when else ""
