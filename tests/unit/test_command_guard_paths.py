"""The guard judges a target by its real path (paicli issue 23, item 4): symlinks resolved,
then ``..`` applied, before deciding inside or outside the project.

A real project with ``build -> <HOME>/docs``; nothing here runs a command.
"""

from __future__ import annotations

import pytest

from paicli.tools.policy.command_rules import CHMOD, RM
from paicli.tools.policy.guards import CommandGuard


@pytest.fixture
def linked(root, home):
    (home / "docs").mkdir()
    (home / "docs" / "thesis.txt").write_text("years of work\n")
    (root / "build").symlink_to(home / "docs")
    (root / "src").mkdir()
    (root / "alias").symlink_to(root / "src")
    return root


def refusal(command, root, home):
    return CommandGuard.refusal(command, str(root), str(home))


@pytest.mark.parametrize(("command", "reason"), [
    ("rm -rf build/*", RM),
    ("rm -rf build/", RM),
    ("rm -rf build/.", RM),
    ("rm -rf build/thesis.txt build/sub", RM),
    ("rm -rf ./build/../x", RM),  # build/.. is HOME, not the project
    ("cd build && rm -rf ./*", RM),
    ("cd build/ && rm -rf thesis.txt", RM),
    ("find build/ -delete", RM),
    ("find -L build -delete", RM),
    ("find build/ -name '*.txt' -exec rm -rf {} +", RM),
    ("chmod -R 777 build", CHMOD),
    ("bash -c 'rm -rf build/*'", RM),
])
def test_a_symlink_out_of_the_project_is_outside(linked, home, command, reason):
    assert refusal(command, linked, home) == reason


def test_an_absolute_path_through_the_link_is_outside(linked, home):
    assert refusal(f"rm -rf {linked}/build/thesis.txt", linked, home) == RM


@pytest.mark.parametrize("command", [
    "rm -rf build",  # rm unlinks the link itself; ~/docs stays
    "rm -f build/thesis.txt",  # not recursive
    "find build -delete",  # find -P removes the link, it does not descend into it
    "rm -rf alias/ alias/*",  # a link to a directory inside the project
    "rm -rf src/../src/x",
    "cd alias && rm -rf ./*",
])
def test_links_that_stay_inside_and_the_link_itself_are_fine(linked, home, command):
    assert refusal(command, linked, home) is None


def test_a_project_reached_through_a_symlinked_path_is_still_the_project(linked, home, tmp_path):
    (tmp_path / "via").symlink_to(linked)
    assert refusal("rm -rf src/x alias/", tmp_path / "via", home) is None
    assert refusal(f"rm -rf {tmp_path / 'via'}", tmp_path / "via", home) == RM  # the root itself
    assert refusal("rm -rf build/", tmp_path / "via", home) == RM


def test_find_from_a_link_to_home_is_a_scan_of_home(linked, home):
    (linked / "h").symlink_to(home)
    assert refusal("find h/ -name '*.pem'", linked, home) is not None
