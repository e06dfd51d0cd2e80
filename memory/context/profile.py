"""ContextProfile: every context threshold derived from the model's window (reference b).

The summary trigger is the window minus room for the summary's own output and a safety buffer
(Claude Code's rule), so small windows still leave space to summarise and large ones do not
waste it. Clearing old tool results (tier 2) always triggers below the summary (tier 3), so the
cheap, lossless tier runs first. Integer division and float floors mirror the Java source, so the
table in reference (b) comes out exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_SUMMARY_OUTPUT_RESERVE_TOKENS = 20_000  # reference (b)
AUTOCOMPACT_BUFFER_TOKENS = 13_000  # reference (b)
MIN_COMPRESSION_TRIGGER_RATIO = 0.50  # reference (b): display only
MIN_WINDOW = 8_000  # reference (b)
MCP_RESOURCE_INDEX_MIN_WINDOW = 32_000  # reference (b)
DEFAULT_WINDOW = 128_000  # reference (b): when no client says otherwise
CLEARING_MAX_TRIGGER_TOKENS = 100_000  # reference (e.1)
CLEARING_TRIGGER_RATIO = 0.60  # reference (e.1)
SESSION_MEMORY_PRECOMPUTE_RATIO = 0.60  # reference (g)

def summary_trigger(window: int) -> int:
    w = max(MIN_WINDOW, window)
    reserve = min(MAX_SUMMARY_OUTPUT_RESERVE_TOKENS, max(1_000, w // 4))
    buffer = min(AUTOCOMPACT_BUFFER_TOKENS, max(1_000, w // 8))
    return max(1_000, min(w - 1, w - reserve - buffer))


def clearing_trigger(summary_trigger_tokens: int, override: int = 0) -> int:
    """reference (b)/(e.1): min(100k, 60% of the summary trigger), always below the summary trigger.

    0 means "never" (no summary trigger, no clearing)."""
    if summary_trigger_tokens <= 0:
        return 0
    if override > 0:
        derived = override
    else:
        derived = min(CLEARING_MAX_TRIGGER_TOKENS, math.floor(summary_trigger_tokens * CLEARING_TRIGGER_RATIO))
    return max(1, min(derived, summary_trigger_tokens - 1))


@dataclass(frozen=True)
class ContextProfile:
    window: int  # the safe window: max(8000, configured)
    compression_trigger_tokens: int  # summary trigger (tier 3)
    tool_result_clearing_trigger: int  # tier 2
    session_memory_precompute_tokens: int  # (g): background summary starts here
    memory_context_tokens: int  # budget for injected long-term memory
    mcp_resource_index_enabled: bool
    agent_token_budget: int  # exists in the source, unused there too
    prompt_cache: str = "none"

    @classmethod
    def from_window(cls, window: int | None = None, *, clearing_override: int = 0,
                    prompt_cache: str = "none") -> "ContextProfile":
        w = max(MIN_WINDOW, window if window and window > 0 else DEFAULT_WINDOW)
        trigger = summary_trigger(w)
        return cls(
            window=w,
            compression_trigger_tokens=trigger,
            tool_result_clearing_trigger=clearing_trigger(trigger, clearing_override),
            session_memory_precompute_tokens=max(1, math.floor(trigger * SESSION_MEMORY_PRECOMPUTE_RATIO)),
            memory_context_tokens=max(500, min(5_000, w // 200)),
            mcp_resource_index_enabled=w >= MCP_RESOURCE_INDEX_MIN_WINDOW,
            agent_token_budget=max(4_000, math.floor(w * 0.8)),
            prompt_cache=prompt_cache,
        )

    @property
    def summary_reserve_tokens(self) -> int:
        return min(MAX_SUMMARY_OUTPUT_RESERVE_TOKENS, max(1_000, self.window // 4))

    @property
    def buffer_tokens(self) -> int:
        return min(AUTOCOMPACT_BUFFER_TOKENS, max(1_000, self.window // 8))

    @property
    def compression_trigger_ratio(self) -> float:
        return max(MIN_COMPRESSION_TRIGGER_RATIO, min(0.99, self.compression_trigger_tokens / self.window))

    @property
    def compression_trigger_percent(self) -> int:
        return int(self.compression_trigger_ratio * 100)  # Java's (int) cast truncates

    def summary(self, mcp_index: bool | None = None) -> str:
        """reference (b): the one-line profile shown by /context and /model. ``mcp_index`` is
        whether an MCP resource index is really built; None reports the window's threshold."""
        on = self.mcp_resource_index_enabled if mcp_index is None else mcp_index and self.mcp_resource_index_enabled
        mcp = "on" if on else "off"
        return (
            f"window: {self.window} | 压缩阈值: {self.compression_trigger_percent}% "
            f"({self.compression_trigger_tokens} tokens) | MCP resource 索引: {mcp} | prompt cache: {self.prompt_cache}"
        )
