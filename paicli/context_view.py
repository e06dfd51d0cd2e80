"""``/context``: where the next request's tokens go, and how far the compaction triggers are
(reference u.2). Pure formatting over numbers the session collects."""

from __future__ import annotations

from dataclasses import dataclass

BAR_CELLS = 30  # reference u.2


@dataclass(frozen=True)
class ContextUsage:
    model: str
    provider: str
    window: int
    system_tokens: int
    memory_tokens: int  # long-term memory injected into the system prompt (part of system_tokens)
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

    @property
    def total(self) -> int:
        return self.system_tokens + self.schema_tokens + self.conversation_tokens


def tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _row(label: str, value: int, window: int, count: int | None = None) -> str:
    line = f"    {label:<18} {tokens(value):>8}  ({100 * value / window:4.1f}%)"
    return line + (f"  [{count} 条]" if count is not None else "")


def render_context(u: ContextUsage) -> list[str]:
    ratio = u.total / u.window
    filled = min(BAR_CELLS, round(ratio * BAR_CELLS))
    clearing = (f"{tokens(u.clearing_trigger)} 触发，保留最近 {u.clearing_keep} 条"
                if u.clearing_trigger is not None else "关闭")
    summary = "Session Memory 优先，完整摘要回退" if u.session_memory else "完整摘要（Session Memory 实验开关关闭）"
    mcp = "开启" if u.window >= 32_000 else "关闭（window 不足 32k）"
    return [
        "📋 上下文状态：",
        f"📊 Context Usage   {u.model} ({u.provider})   window: {tokens(u.window)}",
        "",
        f"  [{'█' * filled}{'░' * (BAR_CELLS - filled)}]  {round(ratio * 100)}%  ({tokens(u.total)} / {tokens(u.window)})",
        "",
        "  当前占用细分:",
        _row("System prompt:", u.system_tokens, u.window, 1),
        _row("Injected memory:", u.memory_tokens, u.window),
        _row("Skills index:", u.skill_index_tokens, u.window),
        _row("Tools schema:", u.schema_tokens, u.window),
        _row("Conversation:", u.conversation_tokens, u.window, u.conversation_messages),
        _row("Skill bodies:", u.skill_body_tokens, u.window, u.skill_bodies),
        "    " + "─" * 33,
        _row("合计:", u.total, u.window),
        "",
        f"  压缩阈值: {tokens(u.summary_trigger)} ({u.summary_percent}%)   "
        f"距压缩还有: {tokens(max(0, u.summary_trigger - u.total))}",
        f"  旧工具结果清理: {clearing}",
        f"  自动压缩: {summary}",
        f"  MCP resources 自动索引: {mcp}",
        f"  prompt cache: {u.prompt_cache}",
    ]
