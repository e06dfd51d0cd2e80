"""Automatic fact extraction (reference n): local filters, quote validation, the model call."""

from __future__ import annotations

import json
from pathlib import Path
from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from paicli.memory.longterm.fact_extraction import (extract, extract_quotes, facts_to_entries, saved_notice, validate,
                                    validate_quotes, write_facts)
from paicli.memory.longterm.fact_filters import safe_input
from paicli.memory.longterm.entry import PENDING_KEY, SOURCE_AUTO, new_fact, to_json
from paicli.nodes.extract_facts import extraction_prompts
from tests.support.scripted_model import ScriptedChatModel

NOW = datetime(2026, 9, 24, 8, 0, tzinfo=UTC)
PROJECT = "/work/demo"
PROMPTS = extraction_prompts()


def facts(*quotes: str) -> str:
    return json.dumps({"facts": [{"quote": q} for q in quotes]}, ensure_ascii=False)


def reasons(reply: str, text: str) -> dict[str, str]:
    return dict(validate(reply, text).rejected)


def scripted(*replies: str) -> ScriptedChatModel:
    return ScriptedChatModel([AIMessage(r) for r in replies])


# -- n.4 batch rules ---------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    '{"facts":[{"quote":"我喜欢中文回答"}],"reason":"stable"}',
    '{"facts":[{"quote":"我喜欢中文回答","confidence":0.9}]}',
])
def test_extra_json_fields_void_the_whole_batch(reply):
    outcome = validate(reply, "我喜欢中文回答。")
    assert outcome.accepted == [] and outcome.void


def test_more_than_three_facts_void_the_whole_batch():
    text = "我喜欢中文回答。本项目使用 Java 17。仓库用 Gradle 构建。团队默认用 Git。"
    quotes = ["我喜欢中文回答", "本项目使用 Java 17", "仓库用 Gradle 构建", "团队默认用 Git"]
    assert validate_quotes(facts(*quotes), text) == []
    assert validate_quotes(facts(*quotes[:3]), text) == quotes[:3]


@pytest.mark.parametrize("reply", [
    '[{"quote":"我喜欢中文回答"}]', '{"fact":[]}', '{"facts":{"quote":"我喜欢中文回答"}}',
    '{"facts":[{"quote":42}]}', '{"facts":["我喜欢中文回答"]}',
    '{"facts":[],"facts":[{"quote":"我喜欢中文回答"}]}',  # a repeated key is an extra key
])
def test_any_other_shape_voids_the_batch(reply):
    assert validate_quotes(reply, "我喜欢中文回答。") == []


@pytest.mark.parametrize("reply", [
    "```json\n" + facts("我喜欢中文回答") + "\n```", "好的：" + facts("我喜欢中文回答"),
    facts("我喜欢中文回答") + " 以上。", "", None])
def test_a_reply_that_is_not_exactly_one_json_value_saves_nothing(reply):
    assert validate_quotes(reply, "我喜欢中文回答。") == []


# -- n.4 per-quote rules -----------------------------------------------------------------------

def test_a_quote_that_is_not_verbatim_is_dropped_and_the_rest_kept():
    text = "我平时使用 Java 17，请帮我检查代码。"
    reply = facts("我平时用 Java 17", "我平时使用 Java 17")
    assert validate_quotes(reply, text) == ["我平时使用 Java 17"]
    assert reasons(reply, text) == {"我平时用 Java 17": "not verbatim in the input"}


def test_a_quote_inside_a_code_fence_is_dropped():
    text = "看这个配置：\n```\n本项目使用 Java 17\n```\n我们团队默认用 Maven。"
    reply = facts("本项目使用 Java 17", "我们团队默认用 Maven")
    assert validate_quotes(reply, text) == ["我们团队默认用 Maven"]
    assert reasons(reply, text) == {"本项目使用 Java 17": "inside a code fence"}


def test_a_quote_on_a_blockquote_line_is_dropped():
    text = "引用资料：\n> 我长期使用 Java 8。\n我长期使用 Java 21。"
    reply = facts("我长期使用 Java 8", "> 我长期使用 Java 8", "我长期使用 Java 21")
    assert validate_quotes(reply, text) == ["我长期使用 Java 21"]
    assert set(reasons(reply, text).values()) == {"on a blockquote line"}


@pytest.mark.parametrize("text, quote", [
    ("读者留言说：‘我喜欢英文回答’。", "我喜欢英文回答"),
    ("他写道：“本项目采用 Go”，这不是真的。", "本项目采用 Go"),
    ("他写道：“本项目采用 Go”，这不是真的。", "“本项目采用 Go”"),  # the marks inside the quote
])
def test_a_quote_inside_quotation_marks_is_dropped(text, quote):
    assert reasons(facts(quote), text) == {quote: "inside quotation marks"}


@pytest.mark.parametrize("text, quote", [
    ("我们项目使用 Redis 吗？", "我们项目使用 Redis"),
    ("我们项目使用 Redis, right?", "我们项目使用 Redis"),
    ("你确定吗？我们项目使用 Redis。", "我们项目使用 Redis"),  # reference: the sentence starts at the line
])
def test_a_quote_in_a_question_is_dropped(text, quote):
    assert reasons(facts(quote), text) == {quote: "in a question"}


def test_a_question_in_another_sentence_does_not_reject_the_quote():
    text = "我们项目使用 Redis。你能看看缓存吗？"
    assert validate_quotes(facts("我们项目使用 Redis"), text) == ["我们项目使用 Redis"]


@pytest.mark.parametrize("word", ["现在", "这次", "今天", "明天", "刚才", "临时", "马上", "立刻"])
def test_temporary_wording_is_dropped(word):
    text = f"我们{word}使用 Java 21 构建。"
    assert reasons(facts(f"我们{word}使用 Java 21 构建"), text) == {f"我们{word}使用 Java 21 构建": "temporary"}


def test_a_quote_shorter_than_five_characters_is_dropped():
    text = "我用Vi。我用 Vim 写代码。"
    outcome = validate(facts("我用Vi", "我用 Vim"), text)
    assert outcome.accepted == ["我用 Vim"] and outcome.rejected == [("我用Vi", "too short")]


def test_a_quote_longer_than_180_characters_is_dropped():
    exact, over = "我" + "习" * 179, "我" + "习" * 180
    assert validate_quotes(facts(exact), over + "。") == [exact]
    assert validate(facts(over), over + "。").rejected == [(over, "too long")]


def test_quotes_are_trimmed_and_deduplicated_in_order():
    text = "我更喜欢简洁的回答。本项目统一使用 PostgreSQL 16。"
    reply = facts("本项目统一使用 PostgreSQL 16", " 我更喜欢简洁的回答 ", "本项目统一使用 PostgreSQL 16")
    assert validate_quotes(reply, text) == ["本项目统一使用 PostgreSQL 16", "我更喜欢简洁的回答"]


# -- n.2 local filters -------------------------------------------------------------------------

def test_sensitive_sentences_are_removed_with_their_delimiter():
    text = "我的 API_KEY 是 abc123；我喜欢中文回答。我的手机号是 13800000000\n邮箱 a@b.c;团队默认用 Maven。"
    assert safe_input(text) == "我喜欢中文回答。团队默认用 Maven。"


@pytest.mark.parametrize("text", [None, "我用Vi", "我" * 4_001, "我的密码是 example-only-123。",
                                  "Please fix the bug in main.py.", "token 过期了。password 也错了。"])
def test_nothing_safe_or_fact_like_is_left(text):
    assert safe_input(text) is None


def test_input_at_the_limits_is_kept():
    assert safe_input("我" * 4_000) == "我" * 4_000
    assert safe_input("我用 Vi") == "我用 Vi"


# -- the model call (n.3) and the n.6 test facts ------------------------------------------------

@pytest.mark.parametrize("text", ["我的密码是 example-only-123。", "请修复这个 bug。", "我", "我" * 4_001])
async def test_no_model_call_when_the_filters_leave_nothing(text):
    model = ScriptedChatModel([])
    assert await extract_quotes(model, text, PROMPTS) == []
    assert model.calls == 0


async def test_an_invented_fact_next_to_the_real_quote_is_not_saved():
    model = scripted(facts("我平时使用 Java 17", "用户是资深 Java 工程师"))
    assert await extract_quotes(model, "我平时使用 Java 17，请帮我检查代码。", PROMPTS) == ["我平时使用 Java 17"]


async def test_a_credential_is_never_sent_and_the_preference_next_to_it_is_saved():
    model = scripted(facts("我喜欢中文回答"))
    assert await extract_quotes(model, "我的 API_KEY 是 abc123；我喜欢中文回答。", PROMPTS) == ["我喜欢中文回答"]
    [system, user] = model.seen[0]
    assert isinstance(system, SystemMessage) and isinstance(user, HumanMessage)
    assert "abc123" not in system.content + user.content and "API_KEY" not in user.content
    assert "我喜欢中文回答。" in user.content and '{"facts":[{"quote":' in user.content


async def test_the_call_offers_no_tools_and_reports_usage():
    model = ScriptedChatModel([AIMessage(facts(), usage_metadata={"input_tokens": 120, "output_tokens": 8,
                                                                  "total_tokens": 128})])
    outcome = await extract(model, "本项目使用 Java 17。", PROMPTS)
    assert model.seen_tools == [[]] and model.bindings == []
    assert outcome.called and outcome.quotes == [] and outcome.usage["input_tokens"] == 120


@pytest.mark.parametrize("text, quote", [
    ("引用资料：\n> 我长期使用 Java 8。", "我长期使用 Java 8"),
    ("```text\n本项目使用 Java 17\n```", "本项目使用 Java 17"),
    ("我们项目使用 Redis 吗？", "我们项目使用 Redis"),
    ("我现在请你检查代码。", "我现在请你检查代码"),
])
async def test_blockquote_fence_question_and_now_save_nothing(text, quote):
    assert await extract_quotes(scripted(facts(quote)), text, PROMPTS) == []


def test_a_repeated_or_conflicting_fact_writes_nothing_and_keeps_the_verification_time():
    first = new_fact("本项目使用 Java 17", project=PROJECT, now=NOW - timedelta(days=40))
    memory = [first]
    later = NOW
    assert write_facts(memory, facts_to_entries(["本项目使用 Java 17"], PROJECT, later)) == []
    assert write_facts(memory, facts_to_entries(["本项目使用 Java 21"], PROJECT, later)) == []
    assert memory == [first] and memory[0].last_verified_at == NOW - timedelta(days=40)


# -- n.5 writing ---------------------------------------------------------------------------------

def test_extracted_facts_become_unverified_auto_extracted_project_entries():
    [entry] = facts_to_entries(["我喜欢中文回答"], PROJECT, NOW)
    assert entry.metadata == {"source": SOURCE_AUTO, "scope": "project", "project": PROJECT,
                              "verification": "unverified"}
    assert entry.verification_pending and PENDING_KEY not in entry.metadata
    assert to_json(entry)["type"] == "FACT" and entry.timestamp == entry.last_verified_at == NOW
    assert entry.id.startswith("fact-") and len(entry.id) == 13


def test_the_saved_notice_names_the_count():
    assert saved_notice(2) == "💾 自动提取并保存 2 条项目事实（待核实；可用 /memory list 查看和删除）。"


def test_every_reason_the_validation_gives_reads_in_chinese_in_the_eval():
    # `paicli eval extraction` printed these English codes: "整批作废：reply is not a single JSON value".
    import re

    from paicli.memory.longterm import fact_extraction, fact_filters
    from paicli.commands.eval_extraction import reason_text

    sources = Path(fact_extraction.__file__).read_text(encoding="utf-8") + Path(
        fact_filters.__file__).read_text(encoding="utf-8")
    reasons = set(re.findall(r'(?:return |void=|else )"([a-z\'][^"\n]*)"', sources))
    reasons |= {"too long", "more than 3 facts", 'a fact is not exactly {"quote": "<text>"}'}
    assert len(reasons) >= 15, reasons
    for reason in reasons:
        assert re.search(r"[\u4e00-\u9fff]", reason_text(reason)), reason
