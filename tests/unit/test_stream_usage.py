"""Streamed usage in Moonshot's place (``choices[0].usage``) through the real client and the local
server: read when it is the only usage, counted once when a server also sends it at the top level."""

from __future__ import annotations

import json
from functools import reduce
from operator import add

import pytest
from langchain_core.messages import HumanMessage

from paicli.run.cache_usage import choice_usage
from paicli.run.models import make_chat_model
from paicli.config.settings import load_settings
from tests.support.openai_server import FakeOpenAIServer, Reply

QUESTION = [HumanMessage("数一下这个目录里的文件")]


def model(tmp_path, server):
    settings = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path), "PAICLI_API_KEY": "k",
                                        "PAICLI_BASE_URL": server.base_url, "PAICLI_MODEL": "m"})
    return make_chat_model(settings, max_retries=0)


def expected(cached: int) -> dict:
    return {"input_tokens": 300, "output_tokens": 12, "total_tokens": 312,
            "input_token_details": {"cache_read": cached}, "output_token_details": {}}


def sync_usage(chat) -> dict:
    return reduce(add, chat.stream(QUESTION)).usage_metadata


async def async_usage(chat) -> dict:
    return reduce(add, [chunk async for chunk in chat.astream(QUESTION)]).usage_metadata


@pytest.mark.parametrize("place", ["top", "choice", "both"])
async def test_streamed_usage_is_counted_once_wherever_the_server_puts_it(tmp_path, place):
    with FakeOpenAIServer([Reply("3 个", usage=(300, 12))] * 3, prefix_cache="kimi", stream_usage_at=place) as server:
        chat = model(tmp_path, server)
        first = sync_usage(chat)
        second, third = sync_usage(chat), await async_usage(chat)
        server.assert_consumed()
    # The same question again: the server reports all of it as cached (4 chars a token).
    repeated = len(json.dumps(server.requests[1]["messages"])) // 4
    assert repeated > 0
    assert first == expected(0)
    assert second == third == expected(repeated)


def test_the_choice_usage_is_not_taken_beside_a_top_level_one_nor_when_malformed():
    usage = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6, "cached_tokens": 2}
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": usage}]}
    assert choice_usage(finish) == usage
    assert choice_usage({**finish, "usage": usage}) is None
    assert choice_usage({"choices": [], "usage": usage}) is None
    for odd in ({"choices": None}, {"choices": ["x"]}, {"choices": [{"usage": "many"}]}, {"choices": [{"usage": {}}]},
                {"choices": [{"usage": {**usage, "prompt_tokens": "many"}}]}):
        assert choice_usage(odd) is None
