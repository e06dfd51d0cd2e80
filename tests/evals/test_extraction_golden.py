"""The 18-sample golden set (reference w) through the whole pipeline with adversarial replies.

Each sample runs filters → scripted model → validation → ``write_automatic`` into a fresh memory,
and the entries actually written are scored (w.2). A well-formed reply carries the gold quotes
plus a weak model's wrong candidates; a void reply must save nothing and is scored against an
empty gold set (see tests/evals/adversarial_replies.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from langchain_core.messages import AIMessage

from paicli.memory.longterm.fact_filters import SENSITIVE, safe_input
from paicli.nodes.extract_facts import extraction_prompts
from paicli.commands.eval_extraction import CaseResult, Report, load_golden, run_case
from tests.evals.adversarial_replies import VOID, WELL_FORMED
from tests.support.scripted_model import ScriptedChatModel

NOW = datetime(2026, 9, 24, 8, 0, tzinfo=UTC)
SAMPLES = {s.id: s for s in load_golden()}
SECRETS = ("sk-example-only", "example-only-123", "API_KEY", "密码")


async def run(sample_id: str, reply: str | None) -> tuple[CaseResult, ScriptedChatModel]:
    model = ScriptedChatModel([] if reply is None else [AIMessage(reply)])
    case = await run_case(model, extraction_prompts(), SAMPLES[sample_id], NOW)
    model.assert_consumed()
    return case, model


def sentences(text: str) -> list[str]:
    """reference (n.2): a sentence ends after 。 ； ; or a newline."""
    return [s for s in re.split(r"(?<=[。；;\n])", text) if s]


def test_the_golden_set_is_the_reference_v2_data():
    assert len(SAMPLES) == 18
    assert sum(bool(s.gold) for s in SAMPLES.values()) == 10
    assert sum(len(s.gold) for s in SAMPLES.values()) == 12
    assert set(WELL_FORMED) == set(SAMPLES)


def test_every_well_formed_reply_holds_the_gold_and_something_wrong():
    for sample_id, reply in WELL_FORMED.items():
        if reply is None:
            continue
        quotes = [f["quote"] for f in json.loads(reply)["facts"]]
        assert set(SAMPLES[sample_id].gold) <= set(quotes), sample_id
        assert len(quotes) > len(SAMPLES[sample_id].gold), sample_id


async def test_adversarial_replies_write_exactly_the_gold_facts():
    cases = [(await run(sample_id, reply))[0] for sample_id, reply in WELL_FORMED.items()]
    report = Report(cases)
    assert [c.written for c in cases] == [c.sample.gold for c in cases]
    assert (report.precision, report.recall, report.f1) == (1.0, 1.0, 1.0)
    assert report.exact_cases == 18
    assert report.false_writes == report.negative_false_writes == 0
    assert report.calls == 17  # reference (w.3): only secret_only is skipped before the call
    assert report.passed


async def test_the_wrong_candidates_are_rejected_for_the_expected_reasons():
    reasons = set()
    for sample_id, reply in WELL_FORMED.items():
        case, _ = await run(sample_id, reply)
        reasons |= {reason for _, reason in case.extraction.validation.rejected}
    assert reasons == {"not verbatim in the input", "temporary", "in a question", "inside a code fence",
                       "on a blockquote line", "inside quotation marks", "spans lines", "too short"}


@pytest.mark.parametrize("sample_id, reply", VOID, ids=[f"{i}-{s}" for i, (s, _) in enumerate(VOID)])
async def test_a_void_batch_saves_nothing(sample_id, reply):
    case, model = await run(sample_id, reply)
    assert model.calls == 1
    assert case.extraction.validation.void
    assert case.written == []


async def test_void_batches_count_as_nothing_expected_and_no_false_writes():
    cases = [(await run(sample_id, reply))[0] for sample_id, reply in WELL_FORMED.items()]
    for sample_id, reply in VOID:
        case, _ = await run(sample_id, reply)
        cases.append(replace(case, sample=replace(case.sample, gold=[]), tp=0, fn=0))
    report = Report(cases)
    assert (report.precision, report.recall) == (1.0, 1.0)
    assert report.false_writes == 0
    assert len(cases) == 18 + len(VOID)


async def test_no_request_carries_a_credential_sentence():
    models = [(await run(sample_id, reply))[1] for sample_id, reply in WELL_FORMED.items()]
    models += [(await run(sample_id, reply))[1] for sample_id, reply in VOID]
    shown = [m.content for model in models for prompt in model.seen for m in prompt]
    assert shown
    for text in shown:
        assert not any(SENSITIVE.search(s) for s in sentences(text)), text
        assert not any(secret in text for secret in SECRETS), text


def test_the_safe_input_of_every_sample_is_what_the_model_is_shown():
    assert safe_input(SAMPLES["secret_only"].input) is None
    assert safe_input(SAMPLES["safe_fact_next_to_secret"].input) == "我希望所有回答都用中文。"
