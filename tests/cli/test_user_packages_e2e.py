"""A project with packages of its own named like paicli's folders (issue 36 item 5).

``python -m paicli`` puts the working directory, the user's project, first on ``sys.path``, and a
``PYTHONPATH`` may name it too. paicli's packages are ``paicli.tools``, ``paicli.memory``... so a
project's own ``tools/`` (or ``memory/``, ``nodes/``, ``graphs/``, ``prompts/``) is never imported in
their place: before issue 36 such a project stopped every run with a ``ModuleNotFoundError`` (its
``tools`` has no ``base`` module). Here each look-alike package refuses to be imported at all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import run_timeout
from tests.support.openai_server import Reply

pytestmark = pytest.mark.process  # sys.path is the child's: a real process

LOOK_ALIKES = ("tools", "memory", "nodes", "graphs", "prompts")


@pytest.fixture
def project_with_packages(project: Path) -> Path:
    for name in LOOK_ALIKES:
        (project / name).mkdir()
        (project / name / "__init__.py").write_text(
            f"raise ImportError('the project\\'s own {name} package was imported')\n", encoding="utf-8")
        (project / name / "base.py").write_text("MINE = True\n", encoding="utf-8")
    (project / "notes.txt").write_text("the build runs with make\n", encoding="utf-8")
    return project


def script_a_read(server) -> None:
    server.script = [Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}]),
                     Reply("用 make 构建。")]


def assert_read_with_paicli_s_tools(done: subprocess.CompletedProcess[str], server) -> None:
    assert done.returncode == 0, done.stderr
    assert done.stdout == "用 make 构建。\n"
    server.assert_consumed()
    result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "the build runs with make" in result[0]["content"]


def test_paicli_p_in_a_project_with_its_own_tools_package(server, run_paicli, project_with_packages):
    script_a_read(server)
    done = run_paicli("-p", "怎么构建？")  # python -m paicli in the project: it is sys.path[0]
    assert_read_with_paicli_s_tools(done, server)


def test_the_paicli_command_with_the_project_on_pythonpath(server, paicli_env, project_with_packages):
    script_a_read(server)
    command = Path(sys.executable).with_name("paicli")
    env = {**paicli_env(server.base_url), "PYTHONPATH": str(project_with_packages)}
    done = subprocess.run([str(command), "-p", "怎么构建？"], cwd=project_with_packages, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=run_timeout())
    assert_read_with_paicli_s_tools(done, server)
