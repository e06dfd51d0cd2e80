"""The auto reviewer on its own (reference v.2): fail-closed parsing, the timeout over real
HTTP, the allow cache, what it is sent."""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import AIMessage

from paicli.run.models import make_chat_model
from paicli.config.settings import load_settings
from paicli.prompts import PromptSources, load_resource
from tests.support.openai_server import FakeOpenAIServer, Hang, verdict
from tests.support.scripted_model import ScriptedChatModel
from paicli.tools.policy import auto_review
from paicli.tools.policy.auto_review import AutoReviewer, parse_reply


@pytest.mark.parametrize("text, allow", [
    ('{"decision":"allow","reason":"只读"}', True),
    ('好的 {"decision": "allow"} 以上', True),
    ('{"decision":"Allow"}', False),
    ('{"decision":"allow "}', False),
    ('{"decision":" allow"}', False),
    ('{"decision":true}', False),
    ('{"decision":"ask"}', False),
    ('["allow"]', False),
    ("allow", False),
    ('{"decision":"allow"} {"decision":"ask"}', False),  # greedy span: not one object
    ("", False),
])
def test_only_an_exact_allow_in_a_json_object_allows(text, allow):
    assert parse_reply(text).allow is allow


def test_reasons_are_cut_and_defaulted():
    assert parse_reply('{"decision":"allow"}').reason == auto_review.ALLOWED
    assert parse_reply('{"decision":"no"}').reason == auto_review.NEEDS_ASKING
    assert len(parse_reply('{"decision":"ask","reason":"' + "长" * 200 + '"}').reason) == 80
    assert parse_reply("not json").reason == auto_review.UNREADABLE


def prompts() -> tuple[str, str]:
    sources = PromptSources()
    return load_resource("approvals/reviewer-system.md", sources), load_resource("approvals/reviewer-user.md", sources)


async def test_the_reviewer_is_sent_the_request_the_tool_and_its_arguments_and_no_tools():
    model = ScriptedChatModel([AIMessage('{"decision":"allow","reason":"只读命令"}')])
    reviewer = AutoReviewer(model, *prompts())
    result = await reviewer.review("看一下 git 状态" + "x" * 3000, "execute_command", {"command": "git status"})
    assert result == auto_review.Verdict(True, "只读命令")
    (system, user), = model.seen
    assert system.content == prompts()[0].strip() and not model.seen_tools[0]
    assert '"tool": "execute_command"' in user.content and '"arguments": "{\\"command\\": \\"git status\\"}"' in user.content
    assert "…(已截断)" in user.content and "x" * 2001 not in user.content


async def test_allows_are_cached_until_the_request_changes_and_denials_never():
    model = ScriptedChatModel([AIMessage('{"decision":"allow"}'), AIMessage('{"decision":"ask"}'),
                               AIMessage('{"decision":"ask"}'), AIMessage('{"decision":"allow"}')])
    reviewer = AutoReviewer(model, *prompts())
    call = ("execute_command", {"command": "ls"})
    assert (await reviewer.review("r1", *call)).allow
    assert (await reviewer.review("r1", *call)).allow  # cached: no model call
    assert not (await reviewer.review("r1", "execute_command", {"command": "rm x"})).allow
    assert not (await reviewer.review("r2", *call)).allow  # a new request: asked again
    assert (await reviewer.review("r2", *call)).allow  # a denial is not cached
    model.assert_consumed()


async def test_arguments_too_long_and_no_client_fail_closed():
    reviewer = AutoReviewer(None, *prompts())
    assert await reviewer.review("r", "execute_command", {"command": "ls"}) == auto_review.Verdict(False, auto_review.UNAVAILABLE)
    long = {"command": "echo " + "a" * 40_000}
    assert (await reviewer.review("r", "execute_command", long)).reason == auto_review.TOO_LONG


async def test_a_reviewer_that_does_not_answer_in_time_is_a_refusal(tmp_path):
    with FakeOpenAIServer() as server:
        server.reviews = [Hang(5, verdict("allow"))]
        settings = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path), "PAICLI_API_KEY": "k",
                                            "PAICLI_BASE_URL": server.base_url, "PAICLI_MODEL": "m"})
        reviewer = AutoReviewer(make_chat_model(settings, max_retries=0), *prompts(), timeout=0.5)
        started = time.monotonic()
        result = await reviewer.review("r", "execute_command", {"command": "ls"})
    assert result == auto_review.Verdict(False, auto_review.TIMED_OUT)
    assert time.monotonic() - started < 3


async def test_the_reviewer_client_is_made_at_the_first_review_and_only_once():
    made: list[ScriptedChatModel] = []

    def make() -> ScriptedChatModel:
        made.append(ScriptedChatModel([AIMessage('{"decision":"allow"}'), AIMessage('{"decision":"ask"}')]))
        return made[-1]

    reviewer = AutoReviewer(None, *prompts(), make_model=make)
    assert made == []  # issue 30: a session that never reviews a command never builds its client
    assert (await reviewer.review("r", "execute_command", {"command": "ls"})).allow
    assert not (await reviewer.review("r", "execute_command", {"command": "rm x"})).allow
    assert len(made) == 1 and reviewer.model is made[0]
    made[0].assert_consumed()


async def test_a_reviewer_client_that_cannot_be_made_fails_closed():
    def broken() -> ScriptedChatModel:
        raise ValueError("no client")

    reviewer = AutoReviewer(None, *prompts(), make_model=broken)
    assert await reviewer.review("r", "execute_command", {"command": "ls"}) == auto_review.Verdict(False, auto_review.UNAVAILABLE)
