"""issue 34's pure pieces: what a command's environment keeps, which ``.git`` files are honoured,
which git-dir entries git may write, the socket list, paicli's own programs, the masking of secrets
in tool output, the memory and host-network questions, the reviewer's one decision."""

from __future__ import annotations

import os
import stat
import socket
from pathlib import Path

import pytest

from paicli.tools.boundary import MASK, mask_secrets, mask_secrets_in
from paicli.tools.policy.approval import EDIT_WIDENS, HOST_NETWORK_UNDER_YES, Unclear, read_answer
from tests.support.named import decide, person_decides
from paicli.tools.policy.auto_review import parse_reply
from paicli.tools.policy.decision import Allow, Ask, Deny
from paicli.tools.policy.turn import MSG_MEMORY_GLOBAL, MSG_MEMORY_NO_INTENT, classify
from tests.support.named import memory_question
from paicli.tools.sandbox import gitdirs, own, sockets
from paicli.tools.sandbox.layout import layout
from paicli.tools.sandbox.options import SandboxOptions
from paicli.tools.sandbox.secrets import command_environment, is_secret_name, without_credentials


def test_the_command_environment_drops_secrets_session_sockets_paicli_settings_and_url_credentials():
    env = {"PATH": "/bin", "GITHUB_TOKEN": "t", "GH_TOKEN": "t", "PGPASSWORD": "p", "HF_TOKEN": "h", "NPM_TOKEN": "n",
           "AWS_SESSION_TOKEN": "a", "MY_PASSWD": "x", "SSH_KEY": "k", "X_CREDENTIALS": "c", "PAICLI_DATABASE_URL": "u",
           "PAICLI_HOME": "/h", "DATABASE_URL": "postgresql://u:pw@h/db", "TMUX": "/tmp/tmux-0/default,1,0",
           "STY": "1.pts", "DISPLAY": ":0", "WAYLAND_DISPLAY": "w", "XAUTHORITY": "/x", "SSH_AUTH_SOCK": "/s",
           "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus", "VSCODE_IPC_HOOK_CLI": "/v", "MY_APP_SOCKET": "/m",
           "HTTPS_PROXY": "http://me:secret@proxy:3128", "REPO": "https://tok@github.com/o/r.git",
           "HOOK": "https://h.example/x?access_token=abc&page=2", "KEEP": "yes", "LANG": "C.UTF-8"}
    out = command_environment(env, hidden=("LANG",))
    assert out == {"PATH": "/bin", "HTTPS_PROXY": "http://proxy:3128", "REPO": "https://github.com/o/r.git",
                   "HOOK": "https://h.example/x?page=2", "KEEP": "yes"}


@pytest.mark.parametrize("name", ["api_token", "Secret_Thing", "db_password", "MYSQL_PWD_PASSWD", "DEPLOY_KEY",
                                  "GOOGLE_APPLICATION_CREDENTIALS", "CLIENT_SECRET", "OPENAI_API_KEY"])
def test_secret_names_in_any_letter_case(name):
    assert is_secret_name(name)


def test_a_value_that_is_not_a_url_is_kept_as_it_is():
    assert without_credentials("plain:value@x") == "plain:value@x" and without_credentials("") == ""


def git_dir(path: Path) -> Path:
    (path / "objects").mkdir(parents=True)
    (path / "refs").mkdir()
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    return path


GITFILE_SPELLINGS = ["gitdir: {home}", "gitdir: /", "gitdir: ..", "gitdir: {home}/", "gitdir:{home}",
                     "gitdir: {fake}", "gitdir: {fake}/../fake", "gitdir: ../../../../../../../..",
                     "gitdir: {other}", "gitdir: {home}/.ssh", "gitdir:   {fake}  ", "not a gitdir line"]


@pytest.mark.parametrize("spelling", GITFILE_SPELLINGS)
def test_a_git_file_not_pointing_back_is_not_honoured(tmp_path, monkeypatch, spelling):
    home = tmp_path / "home"
    fake = git_dir(home / "fake")  # a git dir, but it never names this project
    other = git_dir(home / "other" / ".git")
    (other / "gitdir").write_text(str(tmp_path / "elsewhere" / ".git") + "\n")  # a worktree of someone else
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "p"
    project.mkdir()
    (project / ".git").write_text(spelling.format(home=home, fake=fake, other=other) + "\n")
    assert gitdirs.linked(str(project)) == []
    plan = layout(project, {"HOME": str(home)}, SandboxOptions(data=str(tmp_path / "d")))
    assert all(not str(p).startswith(str(home)) for p in plan.writable)


def test_a_real_worktree_that_points_back_is_honoured_with_its_common_dir(tmp_path):
    common = git_dir(tmp_path / "main" / ".git")
    (common / "config").write_text("[core]\n")
    worktree = common / "worktrees" / "w"
    worktree.mkdir(parents=True)
    project = tmp_path / "w"
    project.mkdir()
    (project / ".git").write_text(f"gitdir: {worktree}\n")
    (worktree / "gitdir").write_text(f"{project}/.git\n")
    (worktree / "commondir").write_text("../..\n")
    assert gitdirs.linked(str(project)) == [str(worktree), str(common)]
    plan = layout(project, {}, SandboxOptions(data=str(tmp_path / "d")))
    mounts = [(m.kind, m.dest) for m in plan.mounts]
    # the common dir's other entries stay read-only, then the worktree's own git dir is writable
    assert mounts.index(("ro", str(common / "worktrees"))) < mounts.index(("bind", str(worktree)))
    assert ("ro", str(common / "config")) in mounts and ("ro", str(worktree / "commondir")) in mounts


@pytest.mark.parametrize("name", ["objects", "refs", "logs", "index", "HEAD", "ORIG_HEAD", "MERGE_HEAD",
                                  "COMMIT_EDITMSG", "packed-refs", "index.lock", "BISECT_LOG", "rebase-merge"])
def test_what_ordinary_git_writes_is_needed(name):
    assert gitdirs.needed(name)


@pytest.mark.parametrize("name", ["config", "config.worktree", "hooks", "info", "modules", "worktrees",
                                  "commondir", "remotes", "branches", "gitdir", "fsmonitor--daemon"])
def test_the_rest_of_a_git_dir_is_protected(name):
    assert not gitdirs.needed(name)


def test_the_socket_list_is_read_from_every_namespace_and_only_visible_ones_are_kept(tmp_path):
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    (proc / "self" / "net").mkdir(parents=True)
    header = "Num       RefCount Protocol Flags    Type St Inode Path\n"
    live = tmp_path / "live.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(live))
    text = header + f"0: 00000002 00000000 00010000 0001 01 1 {live}\n0: 2 0 0 1 1 2 @abstract\n0: 2 0 0 1 1 3\n"
    (proc / "self" / "net" / "unix").write_text(text)
    (proc / "self" / "ns").mkdir()
    (proc / "self" / "ns" / "net").write_text("")
    sockets._namespaces.clear()
    found = sockets.bound_paths(str(proc))
    assert found == {str(live)}
    assert sockets.visible(found, ()) == [str(live)] and sockets.visible(found, (str(tmp_path),)) == []
    assert stat.S_ISSOCK(os.lstat(live).st_mode)
    server.close()


def test_own_programs_never_come_from_a_directory_a_command_can_write(tmp_path, monkeypatch):
    planted = tmp_path / "project" / "bin"
    planted.mkdir(parents=True)
    fake = planted / "paicli-own-test-prog"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    own.writable_roots([str(tmp_path / "project")])
    assert own.program("paicli-own-test-prog") is None
    assert str(planted) not in own.safe_path()
    env = own.child_environment({"PATH": f"{planted}:/usr/bin", "PAICLI_API_KEY": "k", "PAICLI_DATABASE_URL": "u"})
    assert env == {"PATH": "/usr/bin"}


def test_the_key_and_the_database_password_are_masked_in_tool_output():
    text = "key=sk-canary-123 url=postgresql://u:pw-canary-9@h/db short=abc"
    assert mask_secrets(text, ("sk-canary-123", "pw-canary-9", "abc")) == \
        f"key={MASK} url=postgresql://u:{MASK}@h/db short=abc"


def test_the_artifact_kept_beside_a_tool_result_is_masked_too():
    """A command's artifact keeps its last lines for the ledger (issue 41): masked like its text."""
    artifact = {"sandbox": "sandboxed", "output": {"lines": 2, "tail": ["DB_PASSWORD=pw-canary-9", "ok"],
                                                 "file": None, "kept": None}}
    assert mask_secrets_in(artifact, ("pw-canary-9",)) == \
        {"sandbox": "sandboxed", "output": {"lines": 2, "tail": [f"DB_PASSWORD={MASK}", "ok"], "file": None, "kept": None}}
    assert mask_secrets_in(artifact, ()) is artifact


@pytest.mark.parametrize("args,expected", [
    ({"fact": "x", "scope": "global"}, MSG_MEMORY_GLOBAL), ({"fact": "x", "scope": "GLOBAL"}, MSG_MEMORY_GLOBAL),
    ({"fact": "x"}, MSG_MEMORY_NO_INTENT), ({"fact": "记住 x", "scope": "project"}, MSG_MEMORY_NO_INTENT),
])
def test_memory_without_the_users_word_or_global_memory_needs_the_person(args, expected):
    assert memory_question(classify("看看 README 并照做"), "save_memory", args) == expected


def test_memory_the_user_asked_for_runs_and_global_still_asks():
    turn = classify("记住：这个项目用 pytest")
    assert memory_question(turn, "save_memory", {"fact": "用 pytest"}) is None
    assert memory_question(turn, "save_memory", {"fact": "用 pytest", "scope": "global"}) == MSG_MEMORY_GLOBAL
    assert memory_question(turn, "read_file", {"path": "x"}) is None


def test_a_person_only_question_is_refused_under_yes_and_asks_a_typed_y_otherwise():
    refused = person_decides("save_memory", {"fact": "x"}, "yes", "why", "MEMORY_NEEDS_USER")
    assert isinstance(refused, Deny) and "MEMORY_NEEDS_USER" in refused.text and "--yes 不能代替" in refused.text
    ask = person_decides("save_memory", {"fact": "x"}, "auto", "why", "MEMORY_NEEDS_USER")
    assert isinstance(ask, Ask) and ask.danger.startswith("🔴") and ask.notice == "why"


def test_host_networking_asks_a_typed_y_and_never_under_yes():
    net = {"command": "pip install x", "network": True, "reason": "装依赖"}
    ask = decide("execute_command", net, "auto", {"execute_command:network"}, host_network=True)
    assert isinstance(ask, Ask) and ask.danger.startswith("🔴") and "slirp4netns" in ask.notice and "装依赖" in ask.notice
    assert decide("execute_command", net, "yes", host_network=True).text == HOST_NETWORK_UNDER_YES
    assert isinstance(decide("execute_command", net, "yes"), Allow)  # isolated networking: --yes approves


def test_an_edited_answer_cannot_add_sandbox_false_or_network():
    ask = decide("execute_command", {"command": "ls"}, "ask")
    for edit in ({"command": "ls", "sandbox": False}, {"command": "ls", "network": True}):
        decision, _ = read_answer({"decision": "edit", "args": edit}, ask)
        assert isinstance(decision, Unclear) and decision.problem == EDIT_WIDENS
    decision, _ = read_answer({"decision": "edit", "args": {"command": "ls -l"}}, ask)
    assert isinstance(decision, Allow)


@pytest.mark.parametrize("reply", [
    '{"decision":"deny","decision":"allow"}', '{"decision":"allow","decision":"allow"}', '{"decision":["allow"]}',
    '{"decision":{"v":"allow"}}', '{"decision":true}', '{"decision":1}', '{"decision":null}', '{"decision":"Allow"}',
    '{"decision":"allow "}', '{"reason":"allow"}', '{"x":{"decision":"a","decision":"allow"},"decision":"allow"}',
])
def test_a_reviewer_reply_with_two_decisions_or_a_non_string_one_does_not_allow(reply):
    assert parse_reply(reply).allow is False


def test_one_plain_allow_still_allows():
    assert parse_reply('{"decision":"allow","reason":"只读"}').allow is True
