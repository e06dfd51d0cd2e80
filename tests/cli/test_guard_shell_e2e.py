"""The command guard reads shell as bash does, through `paicli -p --yes` (paicli issue 23, item 4).

The child gets a throwaway HOME with canary files; each hostile command would also create a
canary in the project if any of it ran. The model's commands go through the real tool, the
real guard and, where allowed, a real bash.
"""

from __future__ import annotations

import pytest

from tests.cli.test_oneshot import call, tool_results
from tests.support.openai_server import Reply


@pytest.fixture
def fake_home(tmp_path):
    home = tmp_path / "userhome"
    (home / "docs").mkdir(parents=True)
    (home / "keep.txt").write_text("precious\n", encoding="utf-8")
    (home / "docs" / "thesis.txt").write_text("years of work\n", encoding="utf-8")
    return home


def run_commands(server, run_paicli, fake_home, commands):
    server.script = [Reply("", tool_calls=[call("execute_command", {"command": c}, f"c{i}") for i, c in enumerate(commands)]),
                     Reply("Done.")]
    done = run_paicli("-p", "clean up", "--yes", env={"HOME": str(fake_home)})
    assert done.returncode == 0, done.stderr
    server.assert_consumed()
    return done, [r["content"] for r in tool_results(server.requests[1])]


def test_with_yes_an_escaped_home_inside_bash_c_is_refused_and_nothing_runs(server, run_paicli, project, fake_home):
    commands = ['bash -c "touch canary-1; rm -rf \\$HOME"',
                'sh -c "touch canary-2 && cd \\"\\$HOME\\" && rm -rf ./*"',
                "bash -c $'touch canary-3; rm -rf \\x7e'",
                "trap 'rm -rf ~' EXIT; touch canary-4"]
    done, results = run_commands(server, run_paicli, fake_home, commands)
    assert sorted(p.name for p in project.iterdir() if p.name.startswith("canary")) == []
    assert (fake_home / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    assert all("🛡️ 策略拒绝: 禁止 rm -rf 删除全盘或用户目录" in r and "命令执行完成" not in r for r in results), results
    assert "🛡️ 策略拒绝: 禁止 rm -rf 删除全盘或用户目录" in done.stderr + done.stdout


def test_with_yes_a_symlink_out_of_the_project_is_judged_by_where_it_leads(server, run_paicli, project, fake_home):
    (project / "build").symlink_to(fake_home / "docs")
    commands = ["touch canary-1; rm -rf build/*", "touch canary-2; rm -rf build/", "touch canary-3; find build/ -delete",
                "rm -rf build && touch unlinked"]
    done, results = run_commands(server, run_paicli, fake_home, commands)
    assert (fake_home / "docs" / "thesis.txt").read_text(encoding="utf-8") == "years of work\n"
    assert sorted(p.name for p in project.iterdir() if p.name.startswith("canary")) == []
    assert all("🛡️ 策略拒绝: 禁止 rm -rf 删除全盘或用户目录" in r for r in results[:3]), results
    # rm of the link itself only unlinks it: that runs, and the directory it pointed at stays
    assert "命令执行完成 (exit code: 0)" in results[3], results[3]
    assert not (project / "build").is_symlink() and (project / "unlinked").exists()
    assert (fake_home / "docs" / "thesis.txt").exists()


def test_with_yes_make_and_npm_run_only_what_their_files_allow(server, run_paicli, project, fake_home):
    (project / "package.json").write_text('{"scripts": {"test": "touch tested", "posttest": "rm -rf ~"}}\n',
                                          encoding="utf-8")
    makefile = "all:\n\ttouch built\nclean:\n\ttouch cleaned\n\trm -rf $(HOME)/*\n"
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "Makefile", "content": makefile}, "w")]),
                     Reply("", tool_calls=[call("execute_command", {"command": c}, f"c{i}")
                                           for i, c in enumerate(["make", "make clean", "npm test"])]),
                     Reply("Done.")]
    done = run_paicli("-p", "build and test", "--yes", env={"HOME": str(fake_home)})
    assert done.returncode == 0, done.stderr
    results = [r["content"] for r in tool_results(server.requests[2])]
    assert "命令执行完成 (exit code: 0)" in results[0] and (project / "built").exists()
    assert "🛡️ 策略拒绝: 禁止 rm -rf 删除全盘或用户目录（脚本 Makefile 第 5 行: rm -rf $(HOME)/*）" in results[1]
    assert "🛡️ 策略拒绝: 禁止 rm -rf 删除全盘或用户目录（脚本 package.json 第 1 行: rm -rf ~）" in results[2]
    assert not (project / "cleaned").exists() and not (project / "tested").exists()
    assert (fake_home / "keep.txt").read_text(encoding="utf-8") == "precious\n"
