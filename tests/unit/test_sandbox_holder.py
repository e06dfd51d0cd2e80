"""A session's commands join one sandbox set up once (``paicli.tools.sandbox.holder``, issue 34's
fixed cost): each still gets no capability, the seccomp filter, a pid namespace of its own that
nothing it starts outlives, and the layout of the moment (a changed one gets a new holder)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext
from paicli.tools.builtin.shell import execute_command
from paicli.tools.sandbox import holder as holders
from paicli.tools.sandbox.command import CommandSandbox, Mechanism, SandboxOptions, find_mechanism
from paicli.tools.sandbox.network import find_helper
from tests.support.waiting import patience

CI = os.environ.get("CI") == "true"  # there a missing bubblewrap, util-linux or slirp4netns fails these tests
real = pytest.mark.skipif(not CI and (not isinstance(find_mechanism(), Mechanism) or find_mechanism().kind != "bwrap"
                                      or holders.find_tools() is None or find_helper() is None),
                          reason="no bubblewrap, nsenter/unshare/setpriv or slirp4netns here")


@pytest.fixture
def project(tmp_path: Path):
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "PAI.md").write_text("rules\n")
    sandbox = CommandSandbox(SandboxOptions(data=str(tmp_path / "home" / "sandbox"), hidden=(str(tmp_path / "home"),)))
    yield root, sandbox
    sandbox.close()


def run(root: Path, sandbox: CommandSandbox, command: str, network: bool = False) -> str:
    ctx = ToolContext(root=root, sandbox=sandbox, session_id="holder-test")
    return str(asyncio.run(execute_command({"command": command, "network": network}, ctx)))


def holder_of(sandbox: CommandSandbox, how: str) -> holders.Holder:
    (found,) = [h for slot, h in sandbox._holders.items() if slot[1] == how]
    return found  # type: ignore[return-value]


STATUS = "grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\\t ' ' '; echo pid $$"


@real
def test_a_sessions_commands_share_a_holder_each_in_a_pid_namespace_without_capabilities(project):
    root, sandbox = project
    first = run(root, sandbox, STATUS)
    held = holder_of(sandbox, "none")
    second = run(root, sandbox, STATUS)
    assert holder_of(sandbox, "none") is held and held.alive()
    for out in (first, second):
        assert "exit code: 0" in out, out
        assert "CapEff: 0000000000000000" in out and "CapBnd: 0000000000000000" in out
        assert "NoNewPrivs: 1" in out and "Seccomp: 2" in out and "pid 1" in out
    refused = run(root, sandbox, "mount -t tmpfs x /mnt; unshare -U true; echo hi > PAI.md; cat /proc/1/environ")
    assert "Read-only file system" in refused and "Permission denied" in refused and "PATH=" not in refused
    assert (root / "PAI.md").read_text() == "rules\n"


@real
def test_nothing_a_command_starts_outlives_it(project):
    root, sandbox = project
    out = run(root, sandbox, "setsid sh -c 'sleep 1; echo late > late.txt' > /dev/null 2>&1 & "
                             "nohup sh -c 'sleep 1; touch PAI.local.md' > /dev/null 2>&1 & echo started")
    assert "started" in out
    time.sleep(2.5)
    assert not (root / "late.txt").exists() and not (root / "PAI.local.md").exists()
    assert "sleep" not in run(root, sandbox, "ps -e -o comm=")


@real
def test_a_changed_layout_gets_a_new_holder_and_the_old_one_ends(project):
    root, sandbox = project
    run(root, sandbox, "true")
    old = holder_of(sandbox, "none")
    (root / ".mcp.json").write_text("{}\n")  # a protected path the user made: read-only from now on
    out = run(root, sandbox, "echo '{\"x\":1}' > .mcp.json")
    assert "Read-only file system" in out and (root / ".mcp.json").read_text() == "{}\n"
    assert holder_of(sandbox, "none") is not old
    old.process.wait(timeout=patience(10))  # retired once its last command had ended


@real
def test_network_commands_have_a_holder_of_their_own_joined_to_the_internet_once(project):
    root, sandbox = project
    run(root, sandbox, "true")
    first = run(root, sandbox, "cat /etc/resolv.conf; ip route", network=True)
    held = holder_of(sandbox, "isolated")
    second = run(root, sandbox, "ip route; echo pid $$", network=True)
    assert holder_of(sandbox, "isolated") is held and held is not holder_of(sandbox, "none")
    assert "nameserver 10.0.2.3" in first and "unreachable 169.254.0.0/16" in first
    assert "unreachable 169.254.0.0/16" in second and "pid 1" in second
    offline = run(root, sandbox, "cat /etc/resolv.conf 2>/dev/null; ip route 2>&1; echo done")
    assert "10.0.2.3" not in offline and "tap0" not in offline


@real
def test_without_holders_every_command_gets_a_bwrap_of_its_own(project, tmp_path):
    root, _ = project
    sandbox = CommandSandbox(SandboxOptions(data=str(tmp_path / "home2" / "sandbox"), holders=False))
    launch = sandbox.launch("true", root, {"PATH": "/usr/bin:/bin"}, session="s")
    try:
        assert launch.argv[0] == find_mechanism().path and "--as-pid-1" not in launch.argv  # type: ignore[union-attr]
    finally:
        launch.close()
    assert "exit code: 0" in run(root, sandbox, "echo hi > mine.txt") and (root / "mine.txt").exists()
    assert sandbox._holders == {}
