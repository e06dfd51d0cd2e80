import io
import json
import os
from datetime import datetime, timedelta, timezone

import pytest

from paicli.tools.policy.audit import AuditLog, clean, format_recent, recent_count, sanitize
from tests.support.named import is_audited

NOW = datetime(2026, 9, 24, 10, 15, 30, tzinfo=timezone(timedelta(hours=8)))


def make_log(directory, stderr=None):
    return AuditLog(directory, now=lambda: NOW, stderr=stderr or io.StringIO())


def test_entries_go_to_the_days_jsonl_file_with_the_reference_fields(tmp_path):
    log = make_log(tmp_path / "audit")
    assert log.write("execute_command", {"command": "ls"}, "allow", approver="hitl", duration_ms=12) is None
    [line] = (tmp_path / "audit" / "audit-2026-09-24.jsonl").read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    assert list(entry) == ["timestamp", "tool", "args", "outcome", "reason", "approver", "durationMs"]
    assert entry["timestamp"] == "2026-09-24T10:15:30+08:00"
    assert json.loads(entry["args"]) == {"command": "ls"}
    assert (entry["outcome"], entry["approver"], entry["durationMs"]) == ("allow", "hitl", 12)


def test_bearer_tokens_are_masked():
    assert sanitize("curl -H 'Authorization: Bearer sk-abc.def' x") == "curl -H 'Authorization: Bearer ***' x"


def test_json_style_secret_values_are_masked():
    text = json.dumps({"api_key": "sk-1", "password": "p\"w", "Authorization": "Basic x", "path": "a.py"})
    assert json.loads(sanitize(text)) == {"api_key": "***", "password": "***", "Authorization": "***", "path": "a.py"}


def test_assigned_token_values_are_masked():
    assert sanitize("GET /x?token=abc123&page=2") == "GET /x?token=***&page=2"
    assert sanitize("export GITHUB_TOKEN=ghp_x; SECRET_KEY=s3 make") == "export GITHUB_TOKEN=***; SECRET_KEY=*** make"


def test_sanitising_applies_to_logged_args_and_reasons(tmp_path):
    log = make_log(tmp_path)
    log.write("mcp__gh__call", {"headers": {"Authorization": "Bearer t0k"}, "url": "https://a.io?token=z"},
               "deny", reason="Bearer leaked")
    [entry] = log.recent()
    assert "t0k" not in entry["args"] and "token=***" in entry["args"]
    assert entry["reason"] == "Bearer ***"


def test_long_fields_are_cut_to_1000_chars_plus_marker():
    assert clean("x" * 1000) == "x" * 1000
    assert clean("x" * 1001) == "x" * 1000 + "...(truncated)"


def test_a_directory_under_a_file_gives_the_warning_and_no_exception(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    err = io.StringIO()
    warning = make_log(blocker / "audit", err).write("write_file", {"path": "a"}, "allow")
    assert warning.startswith("⚠️ 审计日志写入失败: ")
    assert err.getvalue().strip() == warning


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_a_read_only_directory_gives_the_warning(tmp_path):
    tmp_path.chmod(0o500)
    try:
        err = io.StringIO()
        assert make_log(tmp_path, err).write("write_file", {}, "allow").startswith("⚠️ 审计日志写入失败")
    finally:
        tmp_path.chmod(0o700)


def test_recent_reads_back_the_last_entries_and_skips_torn_lines(tmp_path):
    log = make_log(tmp_path)
    for index in range(5):
        log.write("execute_command", {"command": f"echo {index}"}, "allow")
    with log.path().open("a", encoding="utf-8") as out:
        out.write('{"torn": ')
    recent = log.recent(2)
    assert [json.loads(e["args"])["command"] for e in recent] == ["echo 3", "echo 4"]
    assert make_log(tmp_path / "empty").recent() == []


def test_format_recent_lists_entries_with_reason_and_browser_mode():
    entries = [
        {"timestamp": "t1", "tool": "write_file", "outcome": "allow", "approver": "hitl", "durationMs": 3, "reason": ""},
        {"timestamp": "t2", "tool": "web_fetch", "outcome": "deny", "approver": "policy", "durationMs": 0,
         "reason": "URL 不可信", "metadata": {"mode": "shared"}},
    ]
    assert format_recent(entries, 10) == "\n".join([
        "📋 最近 2 条危险工具审计：",
        "   [ALLOW] t1 write_file (3ms, approver=hitl)",
        "   [DENY] t2 web_fetch (0ms, approver=policy)",
        "        原因: URL 不可信",
        "        浏览器: mode=shared",
    ])
    assert format_recent(entries, 1).splitlines()[0] == "📋 最近 1 条危险工具审计："


def test_format_recent_without_entries():
    assert format_recent([], 10) == "📭 今日尚无审计记录"


@pytest.mark.parametrize("raw, n", [(None, 10), ("", 10), ("5", 5), ("0", 1), ("500", 100), ("abc", 10)])
def test_audit_count_defaults_and_clamps(raw, n):
    assert recent_count(raw) == n


def test_risky_tools_are_audited():
    for tool in ("write_file", "edit_file", "execute_command", "save_memory", "web_fetch", "save_skill_reference",
                 "revert_turn", "mcp__x__y"):
        assert is_audited(tool)
    for tool in ("read_file", "grep_code", "web_search"):
        assert not is_audited(tool)


def test_the_log_and_its_directory_are_owner_only(tmp_path):
    old = tmp_path / "audit" / "audit-2026-09-23.jsonl"
    make_log(tmp_path / "audit").write("write_file", {"path": "a"}, "allow")
    day = tmp_path / "audit" / "audit-2026-09-24.jsonl"
    assert ((tmp_path / "audit").stat().st_mode & 0o777, day.stat().st_mode & 0o777) == (0o700, 0o600)
    old.write_text("", encoding="utf-8")
    old.chmod(0o644)  # a file an older version left readable is narrowed on the next write
    AuditLog(tmp_path / "audit", now=lambda: NOW - timedelta(days=1)).write("write_file", {}, "allow")
    assert old.stat().st_mode & 0o777 == 0o600


def test_format_recent_shows_each_calls_command_path_or_url():
    entries = [{"timestamp": "t", "tool": tool, "outcome": "allow", "args": clean(args)}
               for tool, args in [("execute_command", {"command": "rm -rf build\nls"}),
                                  ("write_file", {"path": "src/a.py", "content": "x" * 5000}),
                                  ("web_fetch", {"url": "https://example.com"}), ("mcp__x", {"q": 1})]]
    lines = format_recent(entries).splitlines()
    assert [line.strip() for line in lines[2::2]] == [
        "command: rm -rf build ls", "path: src/a.py", "url: https://example.com", '{"q": 1}']
