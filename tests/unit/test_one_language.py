"""One language per surface (issue 26 item 8): what a person reads is Chinese, as PaiCLI's texts
are; setting names, commands, file names and protocol words stay as they are.

Two guards. The run-time one walks every error path of the settings loader (and of the MCP
configuration, the database URL and ``paicli studio``'s refusals) and fails when a message has no
Chinese or still carries an English phrase once the setting names, paths and the values the user
wrote are taken out. The static one reads the source: a user error raised with a literal message
(a ``PaicliError`` subclass) and a literal line printed to the screen must be Chinese."""

from __future__ import annotations

import ast
import json
import re
import socket
from pathlib import Path

import pytest

from paicli.__main__ import eval_parser, parser
from paicli.commands.db import parser as db_parser
from paicli.config.feature_settings import FLAG_SETTINGS, ConfigError
from paicli.config.settings import load_settings
from paicli.studio.command import RemoteRefused, check_host, studio_parser
from paicli.studio.gate import StudioGate
from paicli.studio.port import PortBusy, refuse_busy_port
from paicli.tools.mcp.config import parse_document

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
# Two English words in a row: a phrase, once names, paths, URLs and quoted values are gone.
PHRASE = re.compile(r"\b[A-Za-z]{2,}[ ,;]+[a-z]{2,}\b")
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\{.*\}")
NAMES = re.compile(r"[A-Z][A-Z0-9_]{2,}|\S+/\S*|https?://\S+")


def assert_chinese_line(message: str, *written: str) -> None:
    """One line, in Chinese: no English phrase outside what the user wrote and the names."""
    assert "\n" not in message, message
    assert CJK.search(message), message
    rest = message
    for value in written:
        rest = rest.replace(value, " ")
    rest = NAMES.sub(" ", QUOTED.sub(" ", rest))
    assert not PHRASE.search(rest), f"English left in: {message}"


def settings_error(tmp_path: Path, env: dict[str, str] | None = None, dotenv: str = "", config: str | None = None,
                   project: Path | None = None) -> str:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if config is not None:
        (home / "config.json").write_text(config, encoding="utf-8")
    if dotenv:
        (tmp_path / ".env").write_text(dotenv, encoding="utf-8")
    environ = {"PAICLI_HOME": str(home), "PAICLI_API_KEY": "k", **(env or {})}
    with pytest.raises(ConfigError) as caught:
        load_settings(project or tmp_path, environ)
    return str(caught.value)


ENVIRONMENT_CASES = [
    {"PAICLI_PROVIDER": "nope"},
    {"PAICLI_PROVIDER": "local", "PAICLI_BASE_URL": "http://127.0.0.1:1/v1"},  # a custom endpoint, no model
    {"PAICLI_HITL": "maybe"},
    {"PAICLI_COMMAND_SANDBOX": "maybe"},
    {"PAICLI_SANDBOX_NETWORK": "yes please"},
    {"PAICLI_SANDBOX_WRITABLE": "relative/dir"},
    {"PAICLI_CONTEXT_WINDOW": "lots"},
    {"PAICLI_CONTEXT_WINDOW": "0"},
    {"PAICLI_BASE_URL": "http://a b/v1"},
    {"PAICLI_BASE_URL": "http://[::1/v1"},
    {"PAICLI_BASE_URL": "ftp://example.org/v1"},
    {"PAICLI_BASE_URL": "http:///v1"},
    {"PAICLI_BASE_URL": "http://example.org:0/v1"},
    {"PAICLI_SEARXNG_URL": "searx.local"},
    {"PAICLI_STUDIO_ORIGINS": "https://x.example/path"},
    {"PAICLI_SKILL_BODY_BUDGET": "lots"},
    {"PAICLI_SKILL_BODY_BUDGET": "0"},
    {"PAICLI_SNAPSHOT_KEEP": "0"},
    {"PAICLI_TOOL_OFFLOAD_THRESHOLD_CHARS": "many"},
    {"PAICLI_ALLOW_REVERT": "maybe"},
    *({name: "maybe"} for name in sorted(FLAG_SETTINGS)),
]


@pytest.mark.parametrize("env", ENVIRONMENT_CASES, ids=lambda env: "+".join(f"{k}={v}" for k, v in env.items()))
def test_each_bad_setting_is_one_chinese_line(tmp_path, env):
    message = settings_error(tmp_path, env)
    assert_chinese_line(message, *env.values())


CONFIG_CASES = {
    "not JSON": "{not json",
    "not an object": "[1, 2]",
    "a number where text goes": json.dumps({"model": 5}),
    "prices not an object": json.dumps({"prices": ["glm-5.1"]}),
    "a price without output": json.dumps({"prices": {"m": {"input": 1}}}),
    "a negative price": json.dumps({"prices": {"m": {"input": -1, "output": 2}}}),
}


@pytest.mark.parametrize("text", CONFIG_CASES.values(), ids=CONFIG_CASES.keys())
def test_each_bad_config_json_is_one_chinese_line(tmp_path, text):
    message = settings_error(tmp_path, config=text)
    assert_chinese_line(message, str(tmp_path))


def test_a_config_json_in_another_encoding_is_one_chinese_line(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.json").write_bytes('{"model": "模型"}'.encode("gb18030"))
    message = settings_error(tmp_path)
    assert_chinese_line(message, str(tmp_path))
    assert "不是 UTF-8 文本" in message


@pytest.mark.parametrize("dotenv", ["PAICLI_BASE_URL=http://127.0.0.1:9/v1\n", "PAICLI_HITL=on\n"])
def test_what_a_project_may_not_choose_is_refused_in_chinese(tmp_path, dotenv):
    assert_chinese_line(settings_error(tmp_path, dotenv=dotenv), str(tmp_path))


def test_a_missing_project_and_a_missing_key_are_chinese(tmp_path):
    assert_chinese_line(settings_error(tmp_path, project=tmp_path / "gone"), str(tmp_path))
    settings = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path / "home"), "PAICLI_PROVIDER": "kimi"})
    with pytest.raises(ConfigError) as caught:
        settings.require_key()
    assert_chinese_line(str(caught.value), str(tmp_path))
    assert str(caught.value).count("PAICLI_API_KEY") == 1  # the setting named once


def test_mcp_configuration_problems_are_chinese(tmp_path):
    data = {"mcpServers": {"no_cmd": {"args": []}, "bad url": {"type": "http", "url": "ftp://x"},
                           "a__b": {"command": "x"}, "odd": {"type": "sse"}, "args": {"command": "x", "args": "-v"},
                           "env": {"command": "x", "env": {"A": 1}}, "list": []}}
    _, problems = parse_document(data, "project", tmp_path / ".mcp.json")
    assert len(problems) == 7
    for line in [*problems, *parse_document([], "user", tmp_path / "mcp.json")[1]]:
        assert_chinese_line(line, str(tmp_path), "bad url", "MCP server")
    (tmp_path / ".mcp.json").write_text("{\n  nope", encoding="utf-8")
    [line] = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path / "home")}).mcp.problems
    assert_chinese_line(line, str(tmp_path))
    assert line.endswith("不是合法 JSON: 第 2 行第 3 列有误")
    (tmp_path / ".mcp.json").write_bytes('{"mcpServers": {"名": {}}}'.encode("gb18030"))  # was a traceback
    [line] = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path / "home")}).mcp.problems
    assert line.endswith("不是合法 JSON: 不是 UTF-8 文本")


def test_a_database_url_of_another_kind_is_refused_in_chinese():
    from paicli.run.database import DatabaseError, open_database

    with pytest.raises(DatabaseError) as caught:
        open_database("mysql://me@db/app", "project")
    assert_chinese_line(str(caught.value))


def test_studio_refusals_and_warnings_are_chinese(tmp_path):
    with pytest.raises(RemoteRefused) as caught:
        check_host("0.0.0.0", 2024, allow_remote=False)
    assert_chinese_line(str(caught.value), "--allow-remote")
    assert_chinese_line(check_host("0.0.0.0", 2024, allow_remote=True), "paicli studio", "--allow-remote")
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        with pytest.raises(PortBusy) as caught:
            refuse_busy_port("127.0.0.1", listening.getsockname()[1], tmp_path / "none.pid")
    assert_chinese_line(str(caught.value), "--port")
    gate = StudioGate(app=None)
    scope = {"type": "http", "method": "POST", "server": ("127.0.0.1", 2024)}
    for headers in ({"host": "evil.example"}, {"host": "127.0.0.1:2024", "origin": "https://evil.example"},
                    {"host": "127.0.0.1:2024", "sec-fetch-site": "cross-site"},
                    {"host": "127.0.0.1:2024", "content-length": "2", "content-type": "text/plain"}):
        status, reason = gate.refusal(scope, headers)
        assert status in (403, 415)
        assert_chinese_line(reason, "paicli studio", "application/json")


@pytest.mark.parametrize("make", [parser, eval_parser, db_parser, studio_parser], ids=lambda f: f.__module__)
def test_every_help_text_is_chinese(make):
    p = make()
    assert CJK.search(p.description or "")
    for action in p._actions:
        assert action.help and CJK.search(action.help), (action.option_strings, action.help)


# --- the source: literal messages a person reads ----------------------------------------------

LAYERS = ("memory", "prompts", "tools", "nodes", "graphs", "paicli")
SCREEN_CALLS = {"print", "say", "fail", "notice", "write_line", "_say", "warn"}


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8")) for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}


def _user_errors(trees: dict[Path, ast.Module]) -> set[str]:
    """``PaicliError`` and every class that derives from it, by name."""
    names, grown = {"PaicliError"}, True
    while grown:
        grown = False
        for node in (n for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", None) for b in node.bases}
            if node.name not in names and bases & names:
                names.add(node.name)
                grown = True
    return names


def _literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " {} ".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return None


def _english_literals(names: set[str]) -> list[str]:
    found = []
    for path, tree in _trees().items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            text = _literal(node.args[0]) if name in names else None
            if text and PHRASE.search(NAMES.sub(" ", text)) and not CJK.search(text):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text[:80]!r}")
    return found


def test_every_user_error_with_a_literal_message_is_chinese():
    errors = _user_errors(_trees())
    assert {"ConfigError", "DatabaseError", "PortBusy", "RemoteRefused"} <= errors
    assert _english_literals(errors) == []


def test_every_literal_line_printed_for_a_person_is_chinese():
    assert _english_literals(SCREEN_CALLS) == []
