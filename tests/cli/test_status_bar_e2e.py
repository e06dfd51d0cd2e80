"""The status bar under the REPL's prompt (reference u.4) on a real terminal: its fields, its
figures after a turn, the cost from config.json's price table, and PAICLI_STATUS_BAR=off."""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.openai_server import Reply
from tests.support.pty_terminal import PtyTerminal

pytestmark = pytest.mark.process  # the REPL on a pty


def start(project, paicli_env, server, **env: str) -> PtyTerminal:
    environ = paicli_env(server.base_url, TERM="xterm", **env)
    return PtyTerminal([sys.executable, "-m", "paicli"], cwd=str(project), env=environ, answer_cpr=True)


def test_the_status_bar_shows_its_fields_and_the_last_turns_figures(project, paicli_env, server, paicli_home):
    (paicli_home / "config.json").write_text(json.dumps({"prices": {"m": {"input": 2, "output": 8}}}))
    server.script = [Reply("hello there", usage=(120_000, 50_000))]
    repl = start(project, paicli_env, server)
    try:
        repl.expect("❯")
        repl.expect("m · 上下文 -/128.0k · 本轮 输入 0 输出 0 缓存 0 · ¥0.0000 · HITL default · 0.0s · 模式 auto · MCP 0 · Skill")
        repl.type("say hello\r")
        repl.expect("hello there")
        # 120k input at ¥2/M + 50k output at ¥8/M = ¥0.64
        line = repl.expect(" · HITL default")
        assert "本轮 输入 120000 输出 50000 缓存 0 · ¥0.6400" in line
        assert "idle" not in repl.text  # no phase: at the prompt it could only ever be idle
        assert "上下文 -/" not in line.rsplit("m · 上下文", 1)[1]  # the next request's estimate is known now
        repl.type("\x1b[Z")  # Shift+Tab: the bar follows the mode
        repl.expect("模式 plan")
    finally:
        repl.close()


def test_an_unknown_model_shows_no_cost_and_the_bar_can_be_turned_off(project, paicli_env, server):
    repl = start(project, paicli_env, server)
    try:
        repl.expect("HITL default")
        assert "¥" not in repl.text
    finally:
        repl.close()
    repl = start(project, paicli_env, server, PAICLI_STATUS_BAR="off")
    try:
        repl.expect("❯")
        repl.type("/mode\r")
        repl.expect("当前模式")
        repl.expect("❯")
        assert "HITL default" not in repl.text and "本轮 输入" not in repl.text
    finally:
        repl.close()
