"""Writes to protected paths always ask (paicli issue 10, item 6)."""

from __future__ import annotations

import pytest

from paicli.ui.approve import describe
from paicli.tools.policy.approval import Allow, Ask, Deny, approval_request, read_answer
from tests.support.named import decide
from paicli.tools.base import PolicyError
from paicli.tools.policy.guards import PathGuard
from tests.support.named import protected_write

ROOT = "/srv/project"


@pytest.mark.parametrize("path", [
    ".git/hooks/pre-commit", ".git/config", "./.git/hooks/x", "src/../.git/hooks/x", "a//b/../../.git/x",
    f"{ROOT}/.git/hooks/x", ".GIT/hooks/pre-commit", "vendor/lib/.git/hooks/post-checkout",
    ".env", ".env.local", "services/api/.env", ".envrc", ".ENV",
    "PAI.md", "PAI.local.md", "docs/sub/PAI.md", "pai.md",
    ".paicli/settings.json", ".paicli/tool-outputs/s1/001-execute_command.txt",
    ".mcp.json", "pkg/.mcp.json", ".github/workflows/ci.yml", ".github/workflows",
])
def test_writes_to_protected_paths_are_flagged(path):
    notice = protected_write("write_file", {"path": path}, ROOT)
    assert notice is not None and notice.startswith("受保护路径 ")
    assert protected_write("edit_file", {"path": path}, ROOT) == notice


@pytest.mark.parametrize("path", [
    "src/app.py", "README.md", ".github/ISSUE_TEMPLATE/bug.md", "environment.yml", "docs/PAI.md.bak",
    "gitignore", ".gitignore", "notes/.git-tips.md", "../outside/.env", "~/.env", "/etc/.env", "",
])
def test_ordinary_and_outside_paths_are_not_flagged(path):
    assert protected_write("write_file", {"path": path}, ROOT) is None


def test_only_writes_are_flagged():
    assert protected_write("read_file", {"path": ".env"}, ROOT) is None
    assert protected_write("execute_command", {"command": "cat .env"}, ROOT) is None
    assert protected_write("write_file", "not a dict", ROOT) is None


def test_notice_names_the_normalised_path_and_the_reason():
    notice = protected_write("write_file", {"path": "src/../.git/hooks/pre-commit"}, ROOT)
    assert notice == "受保护路径 .git/hooks/pre-commit（git 内部文件：hooks 会被 git 执行，config 可改变 git 的行为），写入需要用户确认"


def test_protected_writes_ask_in_auto_mode_and_despite_approve_all():
    notice = protected_write("write_file", {"path": ".env"}, ROOT)
    asked = decide("write_file", {"path": ".env"}, "auto", protected=notice)
    assert isinstance(asked, Ask) and asked.notice == notice
    assert isinstance(decide("write_file", {"path": ".env"}, "ask", {"write_file"}, notice), Ask)
    assert decide("write_file", {"path": ".env"}, "yes", protected=notice) == Allow({"path": ".env"})
    assert decide("write_file", {"path": "a.txt"}, "auto") == Allow({"path": "a.txt"})


async def test_a_protected_write_is_high_risk_so_enter_alone_does_not_approve_it():
    from paicli.ui.approve import ask_approval
    from paicli.tools.policy.approval import approval_request

    notice = protected_write("write_file", {"path": ".git/hooks/pre-commit"}, ROOT)
    asked = decide("write_file", {"path": ".git/hooks/pre-commit"}, "auto", protected=notice)
    assert asked.danger.startswith("🔴")
    answers = iter(["", "", "", "", ""])

    async def read_line(_prompt):
        return next(answers, None)

    verdict = await ask_approval(approval_request(asked, "c1"), read_line, lambda _line: None)
    assert verdict["decision"] == "reject"


def test_the_dialog_and_the_rejection_carry_the_notice():
    notice = protected_write("write_file", {"path": "PAI.md"}, ROOT)
    ask = Ask("write_file", {"path": "PAI.md"}, "🟡 中危", "", notice)
    assert f"⚠️  {notice}" in describe(approval_request(ask, "c1"))
    denied, _ = read_answer({"decision": "reject", "reason": "输入流已关闭"}, ask)
    assert denied == Deny(f"[HITL] 操作已被拒绝：输入流已关闭。{notice}", "hitl")


def test_a_symlink_into_git_is_refused_at_write_time(tmp_path):
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "tools").symlink_to(tmp_path / ".git" / "hooks")
    guard = PathGuard(tmp_path)
    with pytest.raises(PolicyError) as info:
        guard.resolve_write("tools/pre-commit")
    assert "实际指向受保护路径 .git/hooks/pre-commit" in info.value.reason
    assert guard.resolve_write(".git/hooks/pre-commit") == guard.root / ".git" / "hooks" / "pre-commit"
    assert guard.resolve_write("src/a.py") == guard.root / "src" / "a.py"


def test_every_save_skill_reference_call_asks_as_a_protected_write():
    args = {"name": "notes", "file": "references/x.md", "content": "x"}
    notice = protected_write("save_skill_reference", args, ROOT)
    assert notice == ("写入 Skill 参考文件 notes/references/x.md（用户 Skill 的参考文件：以后加载该 Skill 时会作为资料读取），"
                      "写入需要用户确认")
    assert protected_write("save_skill_reference", "not a dict", ROOT).startswith("写入 Skill 参考文件 ?/?（")
    shown = protected_write("save_skill_reference", {"name": "a\x1b[2Jb", "file": "f" * 500}, ROOT)
    assert "\x1b" not in shown and "f" * 120 + "…" in shown and "f" * 121 not in shown
    asked = decide("save_skill_reference", args, "auto", protected=notice)
    assert isinstance(asked, Ask) and asked.danger == "🔴 高危" and asked.notice == notice
    assert asked.risk == "将写入用户 Skill 的参考文件，以后加载该 Skill 的会话会读到这些内容"
    assert isinstance(decide("save_skill_reference", args, "ask", {"save_skill_reference"}, notice), Ask)
    assert decide("save_skill_reference", args, "yes", protected=notice) == Allow(args)
