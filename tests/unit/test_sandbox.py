"""The command sandbox (issue 24): layout, mechanisms, sweep, explanations, and each mode.

Tests that run a real sandbox skip where this machine has none; the decision paths use a finder
that finds nothing, as a platform without a sandbox would.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from paicli.tools.base import ToolContext
from paicli.tools.registry import run_tool
from paicli.tools.sandbox import seatbelt
from paicli.tools.sandbox.command import (REQUIRED_REFUSAL, CommandSandbox, Mechanism, SandboxOptions, Unavailable,
                                   find_mechanism)
from paicli.tools.sandbox.explain import denied_paths, explain
from paicli.tools.sandbox.layout import layout
from paicli.tools.builtin.shell import execute_command

real = pytest.mark.skipif(not isinstance(find_mechanism(), Mechanism), reason="no command sandbox here")


def nothing() -> Unavailable:
    return Unavailable("模拟：本平台没有沙箱")


def files(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = (tmp_path / "p").resolve()
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "PAI.md").write_text("rules\n")
    (root / ".env").write_text("A=1\n")
    return root


def ctx(root: Path, settings: SandboxOptions | None = None, finder=find_mechanism) -> ToolContext:
    settings = settings or SandboxOptions(data=str(root.parent / "sandbox-data"))
    return ToolContext(root=root, sandbox=CommandSandbox(settings, finder=finder), command_timeout=10)


def test_layout_lists_writable_roots_protected_paths_and_what_does_not_exist_yet(project, tmp_path):
    home = tmp_path / "h"
    (home / ".cache").mkdir(parents=True)
    extra = tmp_path / "extra"
    extra.mkdir()
    data = tmp_path / "data"
    plan = layout(project, {"HOME": str(home), "TMPDIR": str(tmp_path)},
                  SandboxOptions(writable=(str(extra),), data=str(data)), "s1")
    assert plan.writable[0] == project and extra in plan.writable
    assert plan.caches == (home / ".cache",) and (home / ".npm") not in plan.caches  # missing caches
    assert plan.temp == (data / "tmp" / "s1" / "tmp", data / "tmp" / "s1" / "var-tmp")
    assert not any(p == home for p in plan.writable)
    assert {project / ".git/hooks", project / ".git/config", project / "PAI.md", project / ".env"} <= set(plan.protected)
    assert {project / ".mcp.json", project / ".paicli", project / "PAI.local.md"} <= set(plan.missing)
    assert project / ".git" in plan.pinned


def test_seatbelt_profile_allows_the_writable_roots_and_denies_protected_paths_and_network(project, tmp_path):
    plan = layout(project, {"HOME": str(tmp_path)}, SandboxOptions(data=str(tmp_path / "data")))
    text = seatbelt.profile(plan, network=False)
    assert text.startswith("(version 1)\n(allow default)\n(deny file-write*)")
    assert f'(allow file-write* (subpath "{project}"))' in text
    deny = next(line for line in text.splitlines() if line.startswith("(deny file-write* (subpath"))
    assert deny.startswith("(deny file-write*") and f'(subpath "{project}/.git/hooks")' in deny
    assert f'(subpath "{project}/PAI.md")' in deny and "\\.env[^/]*$" in deny
    assert text.index(f'(subpath "{project}"))') < text.index(deny)  # last match wins: denial after
    assert "(deny network-outbound" in text
    assert "network-outbound" not in seatbelt.profile(plan, network=True)
    assert seatbelt.argv(plan, "ls", False)[:2] == [seatbelt.SANDBOX_EXEC, "-p"]


def test_seatbelt_profile_quotes_a_project_path_with_quotes(tmp_path):
    odd = tmp_path / 'a"b'
    odd.mkdir()
    plan = layout(odd.resolve(), {}, SandboxOptions(data=str(tmp_path / "data")))
    assert '"' + str(odd).replace('"', '\\"') + '"' in seatbelt.profile(plan, False)


@real
def test_paicli_s_own_interpreter_and_code_run_inside_wherever_they_are_installed(project):
    """A checkout or venv under /tmp (as CI clones one) is hidden by the private /tmp unless it is
    shown again, read-only: language servers and paicli's helpers run from it."""
    import shlex
    import sys

    here = str(Path(__file__).resolve().parents[2])
    probe = f"{shlex.quote(sys.executable)} -c " + shlex.quote(f"import sys; sys.path.insert(0, {here!r}); import paicli.tools.sandbox")
    out = asyncio.run(execute_command({"command": f"{probe} && echo ran && touch {shlex.quote(here)}/x"}, ctx(project)))
    assert "ran" in out and out.artifact["sandbox"] == "sandboxed", out
    assert not (Path(here) / "x").exists()  # shown read-only


@real
def test_a_sandboxed_true_leaves_the_project_tree_unchanged(project):
    before = files(project)
    out = asyncio.run(execute_command({"command": "true"}, ctx(project)))
    assert "exit code: 0" in out and out.artifact["sandbox"] == "sandboxed"
    # paicli's own data directory, empty (git does not see it), is the only addition: mounted
    # read-only rather than swept, so a parallel task's offloaded output there is never removed.
    assert files(project) == {**before, ".paicli": None} and not any((project / ".paicli").iterdir())


@real
def test_protected_paths_that_do_not_exist_yet_are_removed_after_the_command(project):
    out = asyncio.run(execute_command({"command": "echo x > .mcp.json; echo y > .env.prod; echo ok > ok.txt"},
                                      ctx(project)))
    assert not (project / ".mcp.json").exists() and not (project / ".env.prod").exists()
    assert (project / "ok.txt").read_text() == "ok\n"
    assert "沙箱已撤销命令新建的受保护路径 .mcp.json" in out and ".env.prod" in out


@real
def test_the_git_directory_cannot_be_swapped_for_one_with_hooks(project):
    asyncio.run(execute_command({"command": "mv .git .g; mkdir -p .git/hooks; echo evil > .git/hooks/x"},
                                ctx(project)))
    assert not (project / ".g").exists() and not (project / ".git/hooks/x").exists()


@real
def test_the_result_names_the_refused_path_and_the_rule(project, tmp_path):
    outside = tmp_path / "outside.txt"  # tmp_path is a temp dir, so use a root-owned path instead
    out = asyncio.run(execute_command({"command": "echo x > /etc/paicli-test; echo y > PAI.md"}, ctx(project)))
    assert not out.ok and not outside.exists() and not Path("/etc/paicli-test").exists()
    assert "沙箱拒绝写入 /etc/paicli-test" in out and "sandbox: false" in out
    assert "沙箱拒绝写入受保护路径 PAI.md（项目指令文件" in out and "write_file" in out


@real
def test_no_network_is_explained(project):
    out = asyncio.run(execute_command({"command": "getent hosts example.com || curl -s -m 2 http://example.com"},
                                      ctx(project)))
    assert "network: true" in out


@real
def test_a_timeout_ends_everything_a_sandboxed_command_started(project):
    context = ToolContext(root=project, sandbox=CommandSandbox(SandboxOptions(data=str(project.parent / "d"))),
                          command_timeout=1)
    late = f"late-{os.getpid()}.txt"  # pgrep looks machine-wide: a name no other test process uses
    out = asyncio.run(execute_command({"command": f"(sleep 30; touch {late}) & sleep 30"}, context))
    assert "超时" in out
    # The pid namespace died with bwrap; nothing is left to write the file.
    assert subprocess.run(["pgrep", "-f", f"touch {late}"], capture_output=True).returncode != 0


def test_required_refuses_without_a_sandbox_with_the_reference_text(project):
    context = ctx(project, SandboxOptions(mode="required"), finder=nothing)
    out = asyncio.run(run_tool("execute_command", {"command": "touch made.txt"}, context))
    assert REQUIRED_REFUSAL.format(why="模拟：本平台没有沙箱") in out
    assert not (project / "made.txt").exists()


def test_auto_without_a_sandbox_runs_the_command_and_says_why_once_in_the_state(project):
    sandbox = CommandSandbox(SandboxOptions(), finder=nothing)
    out = asyncio.run(execute_command({"command": "touch made.txt"}, ToolContext(root=project, sandbox=sandbox)))
    assert (project / "made.txt").exists() and out.artifact["sandbox"] == "outside"
    assert sandbox.state(project).lines() == ["⚠️ 命令沙箱未启用：模拟：本平台没有沙箱；命令直接在本机执行"]


def test_off_and_the_skip_flag_run_outside_without_looking_for_a_sandbox(project):
    def fail() -> Unavailable:
        raise AssertionError("off must not probe")

    for settings in (SandboxOptions(mode="off"), SandboxOptions(mode="required", skipped=True)):
        sandbox = CommandSandbox(settings, finder=fail)
        assert sandbox.launch("ls", project, {}).argv == ["bash", "-c", "ls"]
    assert CommandSandbox(SandboxOptions(skipped=True)).why_outside() == "--dangerously-skip-sandbox"


def test_required_refuses_sandbox_false_even_when_a_person_approved_it(project):
    sandbox = CommandSandbox(SandboxOptions(mode="required"), finder=nothing)
    with pytest.raises(RuntimeError, match="sandbox: false"):
        sandbox.launch("ls", project, {}, outside=True)


@real
def test_state_shows_mechanism_writable_roots_and_network(project, tmp_path):
    home = tmp_path / "h"
    (home / ".cache").mkdir(parents=True)
    lines = CommandSandbox(SandboxOptions(network=True, data=str(tmp_path / "d"))).state(project, {"HOME": str(home)}).lines()
    assert lines[0].startswith("🔒 命令沙箱: bubblewrap") and "网络: 开启" in lines[0]
    assert str(project) in lines[1] and "~/.cache" in lines[1]


def test_denied_paths_are_read_from_the_usual_error_shapes():
    output = ("touch: cannot touch '/root/a': Read-only file system\n"
              "bash: line 1: /root/b: Read-only file system\n"
              "PermissionError: [Errno 30] Read-only file system: '/root/c'\n")
    assert denied_paths(output) == ["/root/a", "/root/b", "/root/c"]


def test_a_refused_move_names_the_protected_source_not_the_destination(project):
    (project / ".github" / "workflows").mkdir(parents=True)
    plan = layout(project, {}, SandboxOptions(data=str(project.parent / "data")), sockets=set())
    notes = explain(plan, "mv: cannot move '.git' to 'x': Device or resource busy\n", [], network=True)
    assert notes.startswith("🔒 沙箱拒绝移动 .git（git 仓库") and "x" not in notes.split("）")[0] and notes.count("🔒") == 1
    notes = explain(plan, "mv: cannot move '.github' to 'z': Device or resource busy\n", [], network=True)
    assert "拒绝移动 .github（其中有受保护路径 .github/workflows：CI 工作流" in notes and "z" not in notes
    notes = explain(plan, "mv: cannot move 'b' to 'PAI.md': Device or resource busy\n", [], network=True)
    assert notes.startswith("🔒 沙箱拒绝写入受保护路径 PAI.md（项目指令文件")  # the destination is the protected one
    notes = explain(plan, "mv: inter-device move failed: 'a' to '/etc/a'; unable to remove target: "
                          "Read-only file system\n", [], network=True)
    assert notes.startswith("🔒 沙箱拒绝写入 /etc/a（项目外") and "target" not in notes


@real
def test_mv_git_in_the_sandbox_is_explained_as_the_protected_git_dir(project):
    out = asyncio.run(execute_command({"command": "mv .git x"}, ctx(project)))
    assert "拒绝移动 .git（git 仓库" in out and "拒绝写入 x" not in out and (project / ".git" / "config").exists()


def test_secret_variables_never_reach_a_command(tmp_path):
    env = {"PATH": os.environ["PATH"], "GITHUB_ACCESS_TOKEN": "s1", "AWS_SECRET_ACCESS_KEY": "s2",
           "MY_CLIENT_SECRET_X": "s3", "ANTHROPIC_AUTH_TOKEN": "s4", "AUTHORIZATION": "s5", "DB_PASSWORD": "s6",
           "SSH_PRIVATE_KEY_PATH": "s7", "X_REFRESH_TOKEN": "s8", "OPENAI_API_KEY": "s9", "KEEP": "yes"}
    out = asyncio.run(execute_command({"command": "env"}, ToolContext(root=tmp_path.resolve(), env=env)))
    assert "KEEP=yes" in out and not any(f"s{i}\n" in out for i in range(1, 10))


@real
def test_a_linked_worktree_commits_but_its_repository_hooks_stay_closed(tmp_path):
    main, linked = tmp_path / "main", tmp_path / "linked"
    main.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@e"}
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "one"], ["worktree", "add", "-q", str(linked)]):
        subprocess.run(["git", *args], cwd=main, check=True, env=env)
    shutil.rmtree(main / ".git" / "hooks", ignore_errors=True)
    context = ToolContext(root=linked.resolve(), env=env, sandbox=CommandSandbox(SandboxOptions(data=str(tmp_path / "d"))))
    out = asyncio.run(execute_command({"command": "echo a > a.txt && git add a.txt && git commit -qm two && "
                                                  "mkdir -p ../main/.git/hooks && echo evil > ../main/.git/hooks/pre-commit"},
                                      context))
    assert "two" in subprocess.run(["git", "log", "--oneline"], cwd=linked, capture_output=True, text=True).stdout
    assert not (main / ".git" / "hooks").exists() and "沙箱已撤销" in out


@real
def test_agent_and_daemon_sockets_are_hidden(project, tmp_path):
    import socket

    path = tmp_path / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    env = {**os.environ, "SSH_AUTH_SOCK": str(path)}
    probe = f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\""
    sandbox = CommandSandbox(SandboxOptions(data=str(tmp_path / "d")))
    out = asyncio.run(execute_command({"command": probe}, ToolContext(root=project, env=env, sandbox=sandbox)))
    server.close()
    assert not out.ok and ("Connection refused" in out or "No such file" in out)
