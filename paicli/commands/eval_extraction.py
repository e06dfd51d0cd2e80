"""``paicli eval extraction``: score automatic fact extraction on the golden set (reference w).

The 18 samples (PaiCLI's ``auto-fact-eval-v2.json``, copied verbatim) go through the real
pipeline with the configured light model: filters, one model call, validation, and
``write_automatic`` into a fresh, empty memory per sample. The entries actually written are
scored, never the raw reply (w.2). Nothing touches the user's memory file.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from paicli.memory.errors import PaicliError
from paicli.memory.longterm.fact_extraction import Extraction, ExtractionPrompts, extract, facts_to_entries, write_facts
from paicli.nodes.extract_facts import extraction_prompts
from paicli.prompts import PromptSources

GOLDEN_FILE = Path(__file__).parents[1] / "data" / "extraction_golden.json"  # reference (w.1); package data
F1_GATE = 0.85  # reference (w.2) gates
EXACT_GATE = 15
# The validation's reasons (memory/longterm/fact_extraction.py, fact_filters.py) as a person reads them.
REASONS = {
    "no reply content": "回复没有内容",
    "reply is not a single JSON value": "回复不是单个 JSON 值",
    "reply is not a JSON object": "回复不是 JSON 对象",
    "reply object has keys other than 'facts'": "回复对象有 facts 以外的键",
    "reply has no 'facts'": "回复没有 facts",
    "'facts' is not an array": "facts 不是数组",
    'a fact is not exactly {"quote": "<text>"}': '有一条事实不是恰好 {"quote": "<文本>"}',
    "too short": "太短", "too long": "太长", "spans lines": "跨行",
    "not verbatim in the input": "不是输入里的原文", "sensitive": "含敏感信息", "temporary": "是临时状态",
    "inside a code fence": "在代码块里", "on a blockquote line": "在引用行上",
    "inside quotation marks": "在引号里", "in a question": "在问句里",
}
EVAL_PROJECT_KEY = "/paicli-eval/project"  # entries live only in memory; any fixed project key works


class EvalError(PaicliError):
    """The model could not be reached or refused the request; the message names the sample."""


@dataclass(frozen=True)
class Sample:
    id: str
    category: str
    input: str
    gold: list[str]


@dataclass(frozen=True)
class CaseResult:
    sample: Sample
    extraction: Extraction
    written: list[str]
    tp: int
    fp: int
    fn: int

    @property
    def exact(self) -> bool:
        return self.fp == 0 and self.fn == 0


@dataclass(frozen=True)
class Report:
    cases: list[CaseResult] = field(default_factory=list)

    def _sum(self, name: str) -> int:
        return sum(getattr(c, name) for c in self.cases)

    @property
    def precision(self) -> float:  # nothing written: no write was wrong
        tp, fp = self._sum("tp"), self._sum("fp")
        return tp / (tp + fp) if tp + fp else 1.0

    @property
    def recall(self) -> float:
        tp, fn = self._sum("tp"), self._sum("fn")
        return tp / (tp + fn) if tp + fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_writes(self) -> int:
        return self._sum("fp")

    @property
    def negative_false_writes(self) -> int:
        """reference (w.2): writes in samples whose gold is empty."""
        return sum(len(c.written) for c in self.cases if not c.sample.gold)

    @property
    def exact_cases(self) -> int:
        return sum(c.exact for c in self.cases)

    @property
    def calls(self) -> int:
        return sum(c.extraction.called for c in self.cases)

    @property
    def passed(self) -> bool:
        return self.f1 >= F1_GATE and self.exact_cases >= EXACT_GATE and self.negative_false_writes == 0


def load_golden() -> list[Sample]:
    raw = json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))
    return [Sample(s["id"], s["category"], s["input"], list(s["gold"])) for s in raw]


def score(written: Sequence[str], gold: Sequence[str]) -> tuple[int, int, int]:
    """reference (w.2): an entry containing a not-yet-matched gold span is one TP (tp, fp, fn)."""
    unmatched = list(gold)
    for content in written:
        hit = next((g for g in unmatched if g in content), None)
        if hit is not None:
            unmatched.remove(hit)
    tp = len(gold) - len(unmatched)
    return tp, len(written) - tp, len(unmatched)


async def run_case(model: BaseChatModel, prompts: ExtractionPrompts, sample: Sample,
                   now: datetime) -> CaseResult:
    extraction = await extract(model, sample.input, prompts)
    memory: list = []  # reference (w.2): a fresh, empty long-term memory per sample
    written = [e.content for e in write_facts(memory, facts_to_entries(extraction.quotes, EVAL_PROJECT_KEY, now))]
    return CaseResult(sample, extraction, written, *score(written, sample.gold))


async def evaluate(model: BaseChatModel, prompts: ExtractionPrompts, samples: Sequence[Sample], now: datetime,
                   on_case: Callable[[CaseResult], Any] = lambda _: None) -> Report:
    cases = []
    for sample in samples:
        try:
            case = await run_case(model, prompts, sample, now)
        except Exception as exc:  # a provider error: the user fixes the endpoint, key or model
            raise EvalError(f"extraction 评测在样本 '{sample.id}' 处停止：模型调用失败：{exc}") from exc
        on_case(case)
        cases.append(case)
    return Report(cases)


def describe_case(case: CaseResult) -> str:
    mark = "✓" if case.exact else "✗"
    lines = [f"{mark} {case.sample.id}: 写入 {len(case.written)}，标准 {len(case.sample.gold)}"
             f"（tp {case.tp}，fp {case.fp}，fn {case.fn}）"]
    extraction = case.extraction
    if not extraction.called:
        lines.append("    未调用模型（调用前已被过滤）")
    elif extraction.validation.void:
        lines.append(f"    整批作废：{reason_text(extraction.validation.void)}")
    lines += [f"    + {text}" for text in case.written]
    lines += [f"    - 拒绝 {quote!r}：{reason_text(reason)}" for quote, reason in extraction.validation.rejected]
    return "\n".join(lines)


def reason_text(reason: str) -> str:
    if reason.startswith("more than ") and reason.endswith(" facts"):
        return f"超过 {reason.removeprefix('more than ').removesuffix(' facts')} 条事实"
    return REASONS.get(reason, reason)


def describe_report(report: Report) -> str:
    usage = [c.extraction.usage or {} for c in report.cases]
    tokens_in, tokens_out = (sum(u.get(k, 0) for u in usage) for k in ("input_tokens", "output_tokens"))
    verdict = "通过" if report.passed else "未通过"
    return "\n".join([
        f"完全正确: {report.exact_cases}/{len(report.cases)}  模型调用: {report.calls}"
        f"  输入/输出 tokens: {tokens_in}/{tokens_out}",
        f"precision: {report.precision:.3f}  recall: {report.recall:.3f}  F1: {report.f1:.3f}",
        f"错误写入: {report.false_writes}  负样本错误写入: {report.negative_false_writes}",
        f"门槛（F1 >= {F1_GATE}，完全正确 >= {EXACT_GATE}/18，负样本错误写入 0）: {verdict}",
    ])


def run(settings: Any) -> int:
    """Exit 0 when the gates pass, 1 when they do not."""
    from paicli.run.models import make_chat_model

    # getattr: settings.py is being extended concurrently; fall back to the main model and the
    # built-in prompts if a field is missing.
    model_name = getattr(settings, "light_model", None) or settings.model
    sources = PromptSources.for_project(getattr(settings, "home", None), getattr(settings, "project_root", None))
    model = make_chat_model(settings, model=model_name)
    print(f"extraction 评测：{len(load_golden())} 个样本，模型 {model_name}", flush=True)
    report = asyncio.run(evaluate(model, extraction_prompts(sources), load_golden(), datetime.now(UTC),
                                  on_case=lambda case: print(describe_case(case), flush=True)))
    print(describe_report(report))
    return 0 if report.passed else 1
