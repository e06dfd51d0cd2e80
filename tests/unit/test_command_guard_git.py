"""A script whose metadata alone changed since paicli started (``chmod +x gradlew``) is
pre-existing when git's index holds exactly its content (paicli.tools.policy.git_blob); otherwise it
stays fresh and is judged strictly.

Real git repositories and files in a temporary directory. The project's files are written and
back-dated an hour (a checkout made before paicli started); the start time is taken next, and
what the test then does to a file (``chmod``) moves its ctime past the start.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.support.wrappers import gradlew
from paicli.tools.policy.guards import UNPARSEABLE, CommandGuard
from paicli.tools.policy.script_files import fresh
from paicli.tools.policy.shell_parse import COMPUTED

CI = 'eval "$SETUP"\n$RUNNER --fast\n'  # pre-existing: runs; fresh: refused (a computed command)
HOUR = 3600


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def checkout(root: Path, name: str, text: str, tracked: bool = True) -> Path:
    """A file as a clone made an hour ago left it, not executable: its mtime an hour old, its
    ctime now (``os.utime`` cannot set that back), so only its metadata looks recent."""
    path = root / name
    path.write_text(text)
    path.chmod(0o644)
    if tracked:
        git(root, "add", name)
    old = time.time() - HOUR
    os.utime(path, (old, old))
    return path


def started_now() -> float:
    """paicli starts after the checkout; everything from here on is since the start."""
    started = time.time()
    time.sleep(0.01)  # a coarse file-system clock: the next change stamps at or after it
    return started


def refusal(command: str, root: Path, home: Path, started: float) -> str | None:
    return CommandGuard.refusal(command, str(root), str(home), started)


def test_chmod_plus_x_keeps_the_projects_gradlew_pre_existing(root, home):
    git(root, "init", "-q")
    path = checkout(root, "gradlew", gradlew())
    started = started_now()
    path.chmod(0o755)  # the model's fix for "permission denied"
    assert not fresh(str(path), started)
    assert refusal("./gradlew test", root, home, started) is None


def test_a_changed_gradlew_with_its_mtime_set_back_stays_fresh(root, home):
    git(root, "init", "-q")
    path = checkout(root, "gradlew", gradlew())
    started = started_now()
    path.write_text(gradlew() + "# one more line\n")  # after the start: differs from the index
    old = time.time() - HOUR
    os.utime(path, (old, old))  # `touch -d` hides the write from the mtime, not from the ctime
    path.chmod(0o755)
    assert fresh(str(path), started)
    verdict = refusal("./gradlew test", root, home, started)
    assert verdict is not None and verdict.startswith(UNPARSEABLE.split("{}")[0])


def test_an_untracked_script_whose_metadata_changed_stays_fresh(root, home):
    git(root, "init", "-q")
    checkout(root, "tracked.sh", CI)
    path = checkout(root, "ci.sh", CI, tracked=False)
    started = started_now()
    path.chmod(0o755)
    (root / "tracked.sh").chmod(0o755)
    assert refusal("bash ci.sh", root, home, started) == f"{COMPUTED}（脚本 ci.sh 第 1 行: eval \"$SETUP\"）"
    assert refusal("bash tracked.sh", root, home, started) is None


def test_without_a_git_repository_a_metadata_change_stays_fresh(root, home):
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--git-dir"], capture_output=True, check=False)
    assert done.returncode != 0, "the temporary directory must not be inside a git repository"
    path = checkout(root, "ci.sh", CI, tracked=False)
    started = started_now()
    path.chmod(0o755)
    assert refusal("bash ci.sh", root, home, started) == f"{COMPUTED}（脚本 ci.sh 第 1 行: eval \"$SETUP\"）"


def test_git_does_not_excuse_a_script_written_since_the_start(root, home):
    git(root, "init", "-q")
    started = started_now()
    (root / "ci.sh").write_text(CI)
    git(root, "add", "ci.sh")  # a model can stage its own script: the mtime still says fresh
    assert refusal("bash ci.sh", root, home, started) == f"{COMPUTED}（脚本 ci.sh 第 1 行: eval \"$SETUP\"）"

