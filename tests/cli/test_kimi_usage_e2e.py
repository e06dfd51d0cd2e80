"""Kimi (Moonshot) streams its usage in the finish chunk's ``choices[0].usage``, not in the
top-level ``usage`` langchain-openai reads: `paicli -p` with the kimi preset against the local
server shows the server's exact figures, cache hits included, and counts them once when a
server sends them both ways."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.openai_server import Reply

KIMI = {"PAICLI_PROVIDER": "kimi", "PAICLI_API_KEY": None, "MOONSHOT_API_KEY": "test-kimi-key",
        "PAICLI_MODEL": None}


def _cached(previous: dict, request: dict) -> int:
    # The server's "kimi" prefix cache: the repeated start of the messages, 4 chars a token.
    texts = [json.dumps(r.get("messages", [])) for r in (previous, request)]
    return len(os.path.commonprefix(texts)) // 4


@pytest.mark.parametrize("place", ["choice", "both"])
def test_the_token_line_shows_usage_kimi_streams_in_its_choice(run_paicli, server, place):
    server.prefix_cache = "kimi"
    server.stream_usage_at = place
    server.script = [Reply("", tool_calls=[{"name": "list_dir", "arguments": {"path": "."}}], usage=(9000, 30)),
                     Reply("好了", usage=(9400, 20))]
    done = run_paicli("-p", "列一下目录", env=KIMI)
    assert done.returncode == 0, done.stderr
    server.assert_consumed()
    assert [r["model"] for r in server.requests] == ["kimi-k2.6", "kimi-k2.6"]  # the kimi preset
    assert all(r["stream"] for r in server.requests)
    cached = _cached(*server.requests)
    assert cached > 0
    line = [line for line in done.stderr.splitlines() if line.startswith("📊 Token:")][-1]
    assert line.startswith(f"📊 Token: 18400 输入 (缓存命中 {cached}, {cached / 18400:.0%}) / 50 输出 / 18450 合计 "), line
