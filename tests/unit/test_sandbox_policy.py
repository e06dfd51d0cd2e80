"""issue 24's decisions outside the sandbox itself: the approval questions for `network: true` and
`sandbox: false`, what counts as external content, and where the settings may come from."""

from __future__ import annotations

import json

import pytest

from paicli.config.settings import ConfigError, load_settings
from paicli.tools.policy.approval import NETWORK_DANGER, NETWORK_KEY, OUTSIDE_UNDER_YES, read_answer
from tests.support.named import approval_key, covered, decide
from paicli.tools.policy.decision import Allow, Ask, Deny
from paicli.tools.policy.external_context import NETWORK_COMMAND_SOURCE
from tests.support.named import external_source
from paicli.tools.sandbox.flags import command_flags

NET = {"command": "pip install x", "network": True, "reason": "安装依赖"}
OUT = {"command": "echo x > ~/f", "sandbox": False, "reason": "写 HOME"}


def test_a_network_call_asks_with_its_reason_even_after_approve_all_of_commands():
    first = decide("execute_command", NET, "auto")
    assert isinstance(first, Ask) and first.danger.startswith("🔴") and "安装依赖" in first.risk
    later = decide("execute_command", NET, "auto", {"execute_command"})
    assert isinstance(later, Ask) and later.danger == NETWORK_DANGER and "安装依赖" in later.risk
    assert not covered(later, {"execute_command"})


def test_approve_all_of_a_network_call_covers_network_and_plain_commands_for_the_session():
    assert approval_key("execute_command", NET) == NETWORK_KEY
    assert approval_key("execute_command", {"command": "ls"}) == "execute_command"
    assert isinstance(decide("execute_command", NET, "auto", {NETWORK_KEY}), Allow)
    assert isinstance(decide("execute_command", {"command": "ls"}, "auto", {NETWORK_KEY}), Allow)
    assert covered(decide("execute_command", NET, "auto"), {NETWORK_KEY})


def test_yes_approves_network():
    assert isinstance(decide("execute_command", NET, "yes"), Allow)


def test_leaving_the_sandbox_asks_a_typed_y_every_time_and_never_under_yes():
    ask = decide("execute_command", OUT, "auto", {"execute_command", NETWORK_KEY})
    assert isinstance(ask, Ask) and ask.danger.startswith("🔴") and "写 HOME" in ask.notice
    assert not covered(ask, {"execute_command", NETWORK_KEY})
    refused = decide("execute_command", OUT, "yes")
    assert isinstance(refused, Deny) and refused.text == OUTSIDE_UNDER_YES
    assert "（未说明原因）" in decide("execute_command", {"command": "ls", "sandbox": "false"}, "ask").notice


def test_a_refused_outside_call_stays_refused():
    ask = decide("execute_command", OUT, "auto")
    decision, _ = read_answer({"decision": "reject"}, ask)
    assert isinstance(decision, Deny)


def test_flags_keep_the_safe_side_when_unclear():
    assert command_flags({"network": "maybe", "sandbox": "maybe"}) == command_flags({})
    assert command_flags({"network": "true", "sandbox": "0"}).outside and command_flags({"network": 1}).network
    assert command_flags("not a dict").network is False


def test_a_network_commands_output_is_external_content():
    assert external_source("execute_command", NET) == NETWORK_COMMAND_SOURCE
    assert external_source("execute_command", {"command": "ls"}) is None


def settings_env(tmp_path, **values):
    return {"PAICLI_HOME": str(tmp_path / "home"), "PAICLI_API_KEY": "k", **values}


def test_sandbox_settings_come_from_the_user_never_from_a_project_env(tmp_path):
    (tmp_path / ".env").write_text("PAICLI_COMMAND_SANDBOX=off\nPAICLI_SANDBOX_NETWORK=on\nPAICLI_SANDBOX_WRITABLE=/\n")
    s = load_settings(tmp_path, settings_env(tmp_path)).sandbox
    assert (s.mode, s.network, s.writable) == ("auto", False, ())
    s = load_settings(tmp_path, settings_env(tmp_path, PAICLI_COMMAND_SANDBOX="Required",
                                             PAICLI_SANDBOX_NETWORK="on", PAICLI_SANDBOX_WRITABLE="/a:~/b")).sandbox
    assert (s.mode, s.network, s.writable) == ("required", True, ("/a", "~/b"))


def test_config_json_may_list_writable_roots(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"sandbox_writable": ["/data/a", "/data/b"],
                                                  "command_sandbox": "off"}))
    s = load_settings(tmp_path, settings_env(tmp_path)).sandbox
    assert (s.mode, s.writable) == ("off", ("/data/a", "/data/b"))


@pytest.mark.parametrize("name, value, message", [
    ("PAICLI_COMMAND_SANDBOX", "maybe", "auto、required、off"),
    ("PAICLI_SANDBOX_NETWORK", "yes please", "只能是 on 或 off"),
    ("PAICLI_SANDBOX_WRITABLE", "relative/dir", "需要绝对路径"),
])
def test_bad_sandbox_settings_name_the_fix(tmp_path, name, value, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path, settings_env(tmp_path, **{name: value}))


def test_the_session_deps_carry_the_users_sandbox_to_every_graph(tmp_path):
    from paicli.run.wiring import make_deps

    settings = load_settings(tmp_path, settings_env(tmp_path, PAICLI_COMMAND_SANDBOX="required",
                                                    PAICLI_BASE_URL="http://127.0.0.1:9/v1", PAICLI_MODEL="m"))
    assert make_deps(settings, auto_extract=False).sandbox.settings == settings.sandbox


def test_a_network_call_is_a_plain_command_when_every_command_has_network():
    granted = decide("execute_command", NET, "auto", network_granted=True)
    assert isinstance(granted, Ask) and granted.review and "安装依赖" not in granted.risk  # the reviewer's, as plain
    assert isinstance(decide("execute_command", NET, "auto", {"execute_command"}, network_granted=True), Allow)
