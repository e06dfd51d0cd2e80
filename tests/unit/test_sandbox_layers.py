"""The caches' copy-on-write layers (issue 34, its cost): a build cache's layer persists for every
command, a download cache's only for a network command; an offline command reads what a network
command left there, and its own writes end with it. Nothing reaches the real cache either way."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from paicli.tools.sandbox import bwrap
from paicli.tools.sandbox.command import Mechanism, find_mechanism
from paicli.tools.sandbox.layout import cache_layer, layout, prepare
from paicli.tools.sandbox.options import SandboxOptions

CI = os.environ.get("CI") == "true"  # there a missing bubblewrap fails these tests instead of skipping them
real = pytest.mark.skipif(not CI and (not isinstance(find_mechanism(), Mechanism) or find_mechanism().kind != "bwrap"),
                          reason="no bubblewrap here")


@pytest.fixture
def setup(tmp_path: Path):
    home = (tmp_path / "home").resolve()
    for cache in (".cache", ".npm"):
        (home / cache).mkdir(parents=True)
    (home / ".npm" / "cached.txt").write_text("from the real cache\n")
    project = (tmp_path / "p").resolve()
    project.mkdir()
    return home, project, SandboxOptions(data=str(tmp_path / "data"))


def cache_mounts(plan) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {Path(m.dest).name: (m.kind, m.above) for m in plan.mounts if m.kind in ("overlay", "tmp-overlay")}


def test_offline_a_download_cache_gets_a_layer_that_ends_with_the_command(setup):
    home, project, options = setup
    plan = layout(project, {"HOME": str(home)}, options)
    assert cache_mounts(plan) == {".cache": ("overlay", ()), ".npm": ("tmp-overlay", ())}
    upper, work = cache_layer(options, str(project), str(home / ".npm"))
    assert upper not in plan.make and str(home / ".npm") in map(str, plan.caches)


def test_a_network_command_gets_every_persistent_layer(setup):
    home, project, options = setup
    plan = layout(project, {"HOME": str(home)}, options, network=True)
    assert cache_mounts(plan) == {".cache": ("overlay", ()), ".npm": ("overlay", ())}


def test_offline_a_download_layer_with_content_is_read_beneath_the_commands_own(setup):
    home, project, options = setup
    upper, _ = cache_layer(options, str(project), str(home / ".npm"))
    os.makedirs(upper)
    assert cache_mounts(layout(project, {"HOME": str(home)}, options))[".npm"] == ("tmp-overlay", ())  # empty
    Path(upper, "downloaded.txt").write_text("x")
    assert cache_mounts(layout(project, {"HOME": str(home)}, options))[".npm"] == ("tmp-overlay", (upper,))


def test_without_copy_on_write_every_cache_gets_a_layer_of_its_own_command(setup):
    home, project, options = setup
    plan = layout(project, {"HOME": str(home)}, options, copy_on_write=False, network=True)
    assert cache_mounts(plan) == {".cache": ("tmp-overlay", ()), ".npm": ("tmp-overlay", ())}


def run(home: Path, project: Path, options: SandboxOptions, script: str, network: bool) -> str:
    plan = layout(project, {"HOME": str(home)}, options, sockets=set(), network=network)
    prepare(plan)
    argv = bwrap.argv(find_mechanism().path, plan, ["bash", "-c", script])  # the sandbox's own network either way
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
    assert done.returncode == 0, done.stderr
    return done.stdout


@real
def test_what_a_network_command_downloads_stays_and_an_offline_write_does_not(setup):
    home, project, options = setup
    npm = home / ".npm"
    run(home, project, options, f"echo tarball > {npm}/pkg.tgz && rm {npm}/cached.txt", network=True)
    seen = run(home, project, options, f"ls {npm}; echo mine > {npm}/offline.txt && cat {npm}/offline.txt", network=False)
    assert seen.split() == ["pkg.tgz", "mine"]  # the download (and the removal) kept, the real cache beneath
    again = run(home, project, options, f"ls {npm}", network=False)
    assert again.split() == ["pkg.tgz"]  # the offline write ended with its command
    assert sorted(p.name for p in npm.iterdir()) == ["cached.txt"]  # the real cache untouched throughout


@real
def test_a_build_cache_keeps_what_an_offline_command_wrote(setup):
    home, project, options = setup
    run(home, project, options, f"mkdir -p {home}/.cache/go-build && echo obj > {home}/.cache/go-build/a", network=False)
    assert run(home, project, options, f"cat {home}/.cache/go-build/a", network=False) == "obj\n"
    assert not (home / ".cache" / "go-build").exists()
