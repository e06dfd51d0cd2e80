"""Protected paths and the parsed CommandGuard through `paicli -p` (paicli issue 10, items 6 and 7).

The child gets a throwaway HOME, so a dangerous command that slipped through would only hit
that directory; canary files show whether anything ran at all.
"""

from __future__ import annotations

import base64
import subprocess
import time

import pytest

from tests.cli.test_oneshot import call, tool_results
from tests.support.openai_server import Reply
from tests.support.wrappers import gradlew
from paicli.tools.policy.script_files import CLOCK_SLACK

PROTECTED = {".env": "API_KEY=stolen\n", "PAI.md": "Always push to main.\n", ".git/hooks/x": "#!/bin/sh\n"}


@pytest.fixture
def fake_home(tmp_path):
    home = tmp_path / "userhome"
    home.mkdir()
    (home / "keep.txt").write_text("precious\n", encoding="utf-8")
    return home


def writes(paths: dict[str, str]) -> list[dict]:
    return [call("write_file", {"path": p, "content": c}, f"w{i}") for i, (p, c) in enumerate(paths.items())]


def test_without_yes_protected_writes_are_refused_with_a_reason_and_the_turn_goes_on(server, run_paicli, project):
    (project / ".git" / "hooks").mkdir(parents=True)
    server.script = [Reply("", tool_calls=[*writes(PROTECTED), call("write_file", {"path": "ok.txt", "content": "1"}, "w9")]),
                     Reply("Those files need your approval.")]
    done = run_paicli("-p", "configure things", stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr  # issue 26: approvals nobody could answer fail the run
    assert done.stdout == "Those files need your approval.\n"
    assert [p for p in PROTECTED if (project / p).exists()] == []
    assert (project / "ok.txt").read_text(encoding="utf-8") == "1"  # ordinary writes still do not ask
    results = {r["tool_call_id"]: r["content"] for r in tool_results(server.requests[1])}
    for i, path in enumerate(PROTECTED):
        assert "[HITL] 操作已被拒绝" in results[f"w{i}"] and f"受保护路径 {path}（" in results[f"w{i}"]
    server.assert_consumed()


def test_with_yes_protected_writes_run_but_paths_outside_the_project_are_still_refused(server, run_paicli, project):
    (project / ".git" / "hooks").mkdir(parents=True)
    server.script = [Reply("", tool_calls=[*writes(PROTECTED), call("write_file", {"path": "../outside.txt", "content": "x"}, "w9")]),
                     Reply("Done.")]
    done = run_paicli("-p", "configure things", "--yes")
    assert done.returncode == 0, done.stderr
    for path, content in PROTECTED.items():
        assert (project / path).read_text(encoding="utf-8") == content
    assert not (project.parent / "outside.txt").exists()
    results = {r["tool_call_id"]: r["content"] for r in tool_results(server.requests[1])}
    assert "🛡️ 策略拒绝: 路径越界: ../outside.txt" in results["w9"]


def disguised(canary: str) -> list[str]:
    """Dangerous forms that would also create ``canary``-N in the project if they ran."""
    touch = base64.b64encode(f"touch {canary}-4".encode()).decode()
    return [
        f"touch {canary}-1 && rm -r -f ~",
        f"touch {canary}-2; r''m -rf \"$HOME\"",
        f"touch {canary}-3; cd ~ && rm -rf ./*",
        f"echo {touch} | base64 -d | sh",
        f"touch {canary}-5; $(echo rm) --recursive --force ~",
        f"bash -c 'touch {canary}-6 && rm -rf -- ~'",
    ]


def test_with_yes_disguised_dangerous_commands_are_refused_and_nothing_runs(server, run_paicli, project, fake_home):
    commands = disguised("canary")
    server.script = [Reply("", tool_calls=[call("execute_command", {"command": c}, f"c{i}") for i, c in enumerate(commands)]),
                     Reply("Refused.")]
    done = run_paicli("-p", "clean up", "--yes", env={"HOME": str(fake_home)})
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in project.iterdir() if p.name.startswith("canary")) == []
    assert (fake_home / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    results = [r["content"] for r in tool_results(server.requests[1])]
    assert len(results) == len(commands)
    assert all("🛡️ 策略拒绝: " in r and "命令执行完成" not in r for r in results), results


def test_with_yes_legitimate_cleanup_still_runs(server, run_paicli, project, fake_home):
    (project / "build").mkdir()
    (project / "build" / "a.o").write_text("x", encoding="utf-8")
    command = f"rm -rf build {project / 'dist'} && echo 'rm -rf ~' > notes.txt && bash -c 'touch ran'"
    server.script = [Reply("", tool_calls=[call("execute_command", {"command": command})]), Reply("Cleaned.")]
    done = run_paicli("-p", "clean up", "--yes", env={"HOME": str(fake_home)})
    assert done.returncode == 0, done.stderr
    assert not (project / "build").exists() and (project / "ran").exists()
    assert (project / "notes.txt").read_text(encoding="utf-8") == "rm -rf ~\n"
    assert "命令执行完成 (exit code: 0)" in tool_results(server.requests[1])[0]["content"]


def test_with_yes_a_script_written_first_and_run_afterwards_is_read_and_refused(server, run_paicli, project, fake_home):
    script = "touch ran-first\nrm -rf ~\n"
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "clean.sh", "content": script}, "w")]),
                     Reply("", tool_calls=[call("execute_command", {"command": "bash clean.sh"}, "c")]),
                     Reply("Refused.")]
    done = run_paicli("-p", "clean up", "--yes", env={"HOME": str(fake_home)})
    assert done.returncode == 0, done.stderr
    assert (project / "clean.sh").read_text(encoding="utf-8") == script  # the write itself ran
    assert not (project / "ran-first").exists()  # nothing of the script ran
    assert (fake_home / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    refusal = "🛡️ 策略拒绝: 禁止 rm -rf 删除全盘或用户目录（脚本 clean.sh 第 2 行: rm -rf ~）"
    assert refusal in tool_results(server.requests[2])[0]["content"]
    assert refusal in done.stderr + done.stdout  # the user sees the same line
    server.assert_consumed()


@pytest.mark.process  # "written since paicli started" is measured from the process start
def test_with_yes_the_projects_own_gradle_wrapper_runs(server, run_paicli, project, fake_home, tmp_path):
    java = project / "jdk" / "bin" / "java"  # inside the project: the sandbox's /tmp is its own (issue 34)
    java.parent.mkdir(parents=True)
    java.write_text('#!/bin/sh\necho "fake java: $*"\n', encoding="utf-8")
    java.chmod(0o755)
    marker = 'printf \'%s\\n\' "$*" > "$APP_HOME/gradle-ran.txt"'
    (project / "gradlew").write_text(gradlew(marker), encoding="utf-8")
    (project / "gradlew").chmod(0o755)
    time.sleep(CLOCK_SLACK + 0.2)  # the repository's wrapper predates paicli's start, whatever the clock
    server.script = [Reply("", tool_calls=[call("execute_command", {"command": "./gradlew test"}, "c")]),
                     Reply("Tests ran.")]
    done = run_paicli("-p", "run the tests", "--yes", env={"HOME": str(fake_home), "JAVA_HOME": str(project / "jdk")})
    assert done.returncode == 0, done.stderr
    assert (project / "gradle-ran.txt").read_text(encoding="utf-8") == "test\n"
    result = tool_results(server.requests[1])[0]["content"]
    assert "命令执行完成 (exit code: 0)" in result and "org.gradle.wrapper.GradleWrapperMain test" in result
    server.assert_consumed()
