"""Run budgets and the runaway guard (reference s.3), as pure state machines.

One ``AgentBudget`` and one ``RunawayGuard`` per ReAct turn, Plan task or Team step. The
guard nudges the model once when it repeats the same call (or the same kind of error) 3 iterations in
a row; the budget stops tool use after 5 identical responses, a token budget, or an explicit
iteration cap, and asks for a tool-less partial answer. The model-facing texts (the reminders,
the finalization order) live in ``prompts/runtime/*.md``; this module says which one is due.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from paicli.memory.tokens import arguments_json

DEFAULT_STAGNATION_WINDOW = 5  # reference (s.3)
DEFAULT_REMIND_AFTER = 3  # reference (s.3): values below 3 are rejected
ERROR_TEXT_CHARS, ERROR_FAMILY_TEXT_CHARS = 4096, 1024  # reference (s.3)
# reference (s.3): error families, first match wins.
ERROR_CATEGORIES = tuple((name, re.compile(pattern)) for name, pattern in (
    ("timeout", r"timeout|timed out|deadline exceeded|超时"),
    ("rate_limit", r"rate.?limit|too many requests|\b429\b|限流"),
    ("network", r"network|econn|socket|dns|connection reset|网络"),
    ("auth", r"unauth|invalid api key|\b401\b|鉴权|认证失败"),
    ("permission", r"permission|forbidden|access denied|\b403\b|权限|越界"),
    ("not_found", r"not found|enoent|\b404\b|不存在|未找到|找不到"),
    ("invalid_argument", r"invalid argument|validation failed|bad request|\b400\b|参数"),
    ("process_exit", r"exit code|non-zero|process failed|退出码"),
))


class BudgetStatus(enum.Enum):
    WITHIN_BUDGET = "within_budget"
    STAGNATION_DETECTED = "stagnation_detected"
    TOKEN_BUDGET_EXCEEDED = "token_budget_exceeded"
    HARD_ITERATION_LIMIT = "hard_iteration_limit"


class AgentBudget:
    def __init__(self, token_budget: int | None = None, stagnation_window: int = DEFAULT_STAGNATION_WINDOW,
                 hard_max_iterations: int | None = None):
        if stagnation_window < 2:
            raise ValueError("stagnation window must be at least 2")
        self.token_budget = token_budget  # None: unlimited (the newest default)
        self.hard_max_iterations = hard_max_iterations
        self.window = stagnation_window
        self.iteration = 0
        self.input_tokens = self.output_tokens = 0
        self._signatures: deque[str] = deque(maxlen=stagnation_window)
        self.stagnant = False

    def record_usage(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens += input_tokens or 0
        self.output_tokens += output_tokens or 0

    def record_response(self, tool_calls: Sequence[dict[str, Any]]) -> None:
        """One model response; a response without tool calls ends any repetition."""
        if not tool_calls:
            self._signatures.clear()
            return
        self._signatures.append("".join(f"{c.get('name')}|{arguments_json(c.get('args') or {})};" for c in tool_calls))
        if len(self._signatures) == self.window and len(set(self._signatures)) == 1:
            self.stagnant = True  # stays true for the rest of the run

    def check(self) -> BudgetStatus:
        if self.stagnant:
            return BudgetStatus.STAGNATION_DETECTED
        if self.token_budget is not None and self.input_tokens + self.output_tokens >= self.token_budget:
            return BudgetStatus.TOKEN_BUDGET_EXCEEDED
        if self.hard_max_iterations is not None and self.iteration >= self.hard_max_iterations:
            return BudgetStatus.HARD_ITERATION_LIMIT
        return BudgetStatus.WITHIN_BUDGET

    def describe_exit(self, status: BudgetStatus) -> str:
        if status is BudgetStatus.TOKEN_BUDGET_EXCEEDED:
            return f"Token 预算已用尽（{self.input_tokens + self.output_tokens} / {self.token_budget}），将停止工具执行并收尾"
        if status is BudgetStatus.STAGNATION_DETECTED:
            return f"检测到连续 {self.window} 轮重复的工具调用，疑似死循环，将停止工具执行并收尾"
        if status is BudgetStatus.HARD_ITERATION_LIMIT:
            return f"达到显式硬轮数上限（{self.hard_max_iterations}），将停止工具执行并收尾"
        return ""


def partial_result(describe_exit: str, content: str | None) -> str:
    """reference (s.3) step 4: the assistant message that closes a finalized run."""
    text = f"⚠️ 部分完成（{describe_exit}）"
    return text + f"\n\n{content}" if content and content.strip() else text


class Reminder(enum.Enum):
    EXACT_ACTION_REPEAT = "exact_action_repeat"  # prompts/runtime/runaway-exact-repeat.md
    SAME_ERROR_FAMILY = "same_error_family"  # prompts/runtime/runaway-same-error.md


@dataclass(frozen=True)
class IterationResult:
    """One tool result of an iteration, before the boundary wrap."""

    name: str | None
    arguments: Any
    text: str | None
    success: bool
    decided: bool = False  # reference (s.3): a denial, refusal or cancellation, not the model's doing


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(arguments: Any) -> str:
    """Arguments JSON with keys sorted at every level; unparseable text is used trimmed."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments.strip()
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def error_family(text: str) -> str:
    lowered = text[:ERROR_TEXT_CHARS].lower()
    for name, pattern in ERROR_CATEGORIES:
        if pattern.search(lowered):
            return f"category:{name}"
    return "text:" + " ".join(lowered.split())[:ERROR_FAMILY_TEXT_CHARS]


class RunawayGuard:
    def __init__(self, remind_after: int = DEFAULT_REMIND_AFTER):
        if remind_after < DEFAULT_REMIND_AFTER:
            raise ValueError("remind_after must be at least 3")
        self.remind_after = remind_after
        self._actions: Counter[str] = Counter()
        self._errors: Counter[str] = Counter()
        self.reminded = False

    def observe(self, results: Iterable[IterationResult]) -> Reminder | None:
        """Feed one iteration (one response's results); returns the reminder to send, at most once."""
        actions, errors = Counter(), Counter()
        for result in results:
            if not result.name or result.text is None or result.decided:
                continue
            action = _sha(f"{result.name}\0{_canonical(result.arguments)}")
            actions[action] += 1
            if not result.success:
                errors[_sha(f"{error_family(result.text)}\0{action}")] += 1
        action_crossed = self._advance(self._actions, actions)
        error_crossed = self._advance(self._errors, errors)
        if self.reminded or not (action_crossed or error_crossed):
            return None
        self.reminded = True
        return Reminder.SAME_ERROR_FAMILY if error_crossed else Reminder.EXACT_ACTION_REPEAT

    def _advance(self, streaks: Counter[str], iteration: Counter[str]) -> bool:
        """New streak = old streak + occurrences now; keys absent from this iteration drop to 0."""
        crossed = any(streaks[key] < self.remind_after <= streaks[key] + n for key, n in iteration.items())
        updated = {key: streaks[key] + n for key, n in iteration.items()}
        streaks.clear()
        streaks.update(updated)
        return crossed
