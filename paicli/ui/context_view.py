"""``/context``: where the next request's tokens go, how far the compaction triggers are
(reference u.2), and how much of the next request repeats the last one, the part a provider's
prefix cache serves (issue 13). Pure formatting over numbers the session collects."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

BAR_CELLS = 30  # reference u.2


@dataclass(frozen=True)
class ContextUsage:
    model: str
    provider: str
    window: int
    system_tokens: int
    memory_tokens: int  # the turns' memory messages still in the conversation (part of conversation_tokens)
    schema_tokens: int
    conversation_tokens: int
    conversation_messages: int
    summary_trigger: int
    summary_percent: int
    clearing_trigger: int | None  # None when clearing is off
    clearing_keep: int
    session_memory: bool
    prompt_cache: str
    skill_index_tokens: int = 0  # the `## Skills` index (part of system_tokens)
    skill_body_tokens: int = 0  # skill injection messages still in context (part of conversation_tokens)
    skill_bodies: int = 0
    # Share of the next request identical to the start of the last one (what a provider's prefix
    # cache can serve); None before the session's first model request.
    stable_share: float | None = None
    mcp_index: bool = False  # the system prompt carries an MCP resource index (reference q.2 item 9)
    images: int = 0  # image parts still in the conversation (issue 39) and their estimate (reference a)
    image_tokens: int = 0

    @property
    def total(self) -> int:
        return self.system_tokens + self.schema_tokens + self.conversation_tokens


def tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _row(label: str, value: int, window: int, count: int | None = None) -> str:
    pad = " " * max(0, 18 - cell_len(label))  # Chinese labels take two cells a character
    line = f"    {label}{pad} {tokens(value):>8}  ({100 * value / window:4.1f}%)"
    return line + (f"  [{count} 条]" if count is not None else "")


def bar(u: ContextUsage) -> str:
    """The window's cells: the stable prefix as █, what is new since the last request as ▒."""
    filled = min(BAR_CELLS, round(u.total / u.window * BAR_CELLS))
    stable = filled if u.stable_share is None else round(filled * u.stable_share)
    return "█" * stable + "▒" * (filled - stable) + "░" * (BAR_CELLS - filled)


def stable_line(u: ContextUsage) -> str:
    if u.stable_share is None:
        return "  稳定前缀: 尚无上一次请求"
    return (f"  稳定前缀: {u.stable_share:.0%}  (约 {tokens(round(u.stable_share * u.total))} 与上一次请求相同，"
            "可命中 prompt cache；█ 稳定前缀 ▒ 新内容)")


def render_context(u: ContextUsage) -> list[str]:
    ratio = u.total / u.window
    clearing = (f"{tokens(u.clearing_trigger)} 触发，保留最近 {u.clearing_keep} 条"
                if u.clearing_trigger is not None else "关闭")
    summary = "Session Memory 优先，完整摘要回退" if u.session_memory else "完整摘要（Session Memory 实验开关关闭）"
    mcp = ("开启" if u.mcp_index else "关闭（没有可索引的 MCP 资源）") if u.window >= 32_000 else "关闭（window 不足 32k）"
    return [
        "📋 上下文状态：",
        f"📊 上下文占用   {u.model} ({u.provider})   窗口: {tokens(u.window)}",
        "",
        f"  [{bar(u)}]  {round(ratio * 100)}%  ({tokens(u.total)} / {tokens(u.window)})",
        stable_line(u),
        "",
        "  当前占用细分:",
        _row("系统提示词:", u.system_tokens, u.window, 1),
        _row("注入的记忆:", u.memory_tokens, u.window),
        _row("Skill 索引:", u.skill_index_tokens, u.window),
        _row("工具定义:", u.schema_tokens, u.window),
        _row("对话:", u.conversation_tokens, u.window, u.conversation_messages),
        _row("Skill 正文:", u.skill_body_tokens, u.window, u.skill_bodies),
        *([_row("图片:", u.image_tokens, u.window, u.images) + "（下一轮起只留说明）"] if u.images else []),
        "    " + "─" * 33,
        _row("合计:", u.total, u.window),
        "",
        f"  压缩阈值: {tokens(u.summary_trigger)} ({u.summary_percent}%)   "
        f"距压缩还有: {tokens(max(0, u.summary_trigger - u.total))}",
        f"  旧工具结果清理: {clearing}",
        f"  自动压缩: {summary}",
        f"  MCP resources 自动索引: {mcp}",
        f"  提示词缓存 (prompt cache): {'无' if u.prompt_cache == 'none' else u.prompt_cache}",
    ]
