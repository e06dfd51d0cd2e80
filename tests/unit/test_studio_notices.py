"""What ``paicli studio`` prints before the server starts: the REPL banner's ⚠️ when commands
will not run in the command sandbox (issue 24), beside the reachable-host warning."""

from __future__ import annotations

from paicli.config.settings import load_settings
from paicli.studio.command import start_notices
from paicli.tools.sandbox.command import CommandSandbox, Mechanism, Unavailable


def settings(monkeypatch, tmp_path):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PAICLI_COMMAND_SANDBOX", raising=False)
    return load_settings(tmp_path)


def test_studio_warns_in_one_chinese_line_when_the_sandbox_is_unavailable(monkeypatch, tmp_path):
    s = settings(monkeypatch, tmp_path)
    missing = CommandSandbox(s.sandbox, finder=lambda: Unavailable("找不到 bubblewrap（bwrap）"))
    assert start_notices(s, "127.0.0.1", 2024, False, missing) == [
        "⚠️ 命令沙箱未启用：找不到 bubblewrap（bwrap）；命令直接在本机执行"]
    notices = start_notices(s, "0.0.0.0", 2024, True, missing)
    assert len(notices) == 2 and "--allow-remote" in notices[0] and notices[1].startswith("⚠️ 命令沙箱未启用")


def test_studio_says_nothing_of_a_working_sandbox(monkeypatch, tmp_path):
    s = settings(monkeypatch, tmp_path)
    working = CommandSandbox(s.sandbox, finder=lambda: Mechanism("bwrap", "/usr/bin/bwrap"))
    assert start_notices(s, "127.0.0.1", 2024, False, working) == []
