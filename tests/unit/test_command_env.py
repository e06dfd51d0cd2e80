"""execute_command runs without the variables settings marks as secret (issue 10 item 8)."""

import os

from paicli.tools.base import ToolContext
from paicli.tools.sandbox.secrets import command_environment
from paicli.tools.builtin.shell import execute_command


async def test_hidden_variables_are_not_in_the_commands_environment(tmp_path):
    env = {"PATH": os.environ["PATH"], "PAICLI_API_KEY": "sk-secret", "KEPT": "yes"}
    ctx = ToolContext(root=tmp_path.resolve(), env=env, hidden_env=frozenset({"PAICLI_API_KEY"}))
    out = await execute_command({"command": "env"}, ctx)
    assert "KEPT=yes" in out and "sk-secret" not in out
    assert env["PAICLI_API_KEY"] == "sk-secret"  # the caller's mapping is copied, not changed


def test_command_env_copies_this_process_environment_when_none_is_given(tmp_path):
    hidden = next(iter(os.environ))
    env = ToolContext(root=tmp_path, hidden_env=frozenset({hidden})).command_env()
    assert hidden not in env and set(env) == set(command_environment(os.environ, frozenset({hidden})))
