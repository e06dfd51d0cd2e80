"""What a model's tokens cost, for the status bar's estimate (reference u.4: "estimated cost in
CNY, from per-model prices").

Prices are CNY per million tokens. The built-in ones live in the model catalog
(``paicli/data/models.json``, only prices we could check against the provider's own list); any
model can be added or corrected in ``$PAICLI_HOME/config.json``:

    {"prices": {"glm-5.1": {"input": 4, "output": 16, "cached": 1}}}

A model with no price shows no cost: an estimate from another model's prices would be wrong.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input: float  # CNY per million input tokens the cache did not serve
    output: float  # CNY per million output tokens
    cached: float | None = None  # CNY per million input tokens served from the prefix cache; None: as input

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(max(cached_tokens, 0), input_tokens)
        cached_rate = self.input if self.cached is None else self.cached
        return ((input_tokens - cached) * self.input + cached * cached_rate + output_tokens * self.output) / 1_000_000




def price_problem(value: object) -> str | None:
    """Why a config.json price entry is unusable, or None."""
    if not isinstance(value, dict) or not {"input", "output"} <= value.keys():
        return "需要 \"input\" 和 \"output\"（每百万 token 的人民币价格）"
    for key in ("input", "output", "cached"):
        number = value.get(key)
        if key in value and (isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0):
            return f"\"{key}\" 必须是每百万 token 的人民币价格（数字，不能为负）"
    return None
