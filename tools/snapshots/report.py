"""How a restore's changes read, for the model (``revert_turn``) and for a person (``/restore``)."""

from __future__ import annotations

from paicli.tools.snapshots.store import Restore, describe, size_text

SHOWN_PATHS = 20  # per kind; the rest is counted


def change_lines(plan: Restore, *, done: bool, paths: bool = True) -> list[str]:
    """The summary line, then (``paths``) each file, then the files left alone."""
    c = plan.changes
    verb = "已" if done else "将"
    lines = [f"{'↩️ 已恢复到' if done else '↩️ 将恢复到'}快照 {plan.number}（{describe(plan.target)}）："
             f"{verb}新增 {len(c.added)} 个、删除 {len(c.removed)} 个、修改 {len(c.modified)} 个文件"]
    for mark, word, names in (("+", "新增", c.added), ("-", "删除", c.removed), ("~", "修改", c.modified)):
        lines += [f"   {mark} {name}" for name in names[:SHOWN_PATHS]] if paths else []
        if paths and len(names) > SHOWN_PATHS:
            lines.append(f"   {mark} …另有 {len(names) - SHOWN_PATHS} 个文件{word}")
    if plan.kept:
        lines.append(f"   以下文件没有进入快照（过大或无法读取），{'未' if done else '不会'}改动：")
        lines += [f"   = {x.path}" + (f"（{size_text(x.size)}）" if x.size else "") for x in plan.kept[:SHOWN_PATHS]]
        if len(plan.kept) > SHOWN_PATHS:
            lines.append(f"   = …另有 {len(plan.kept) - SHOWN_PATHS} 个")
    return lines
