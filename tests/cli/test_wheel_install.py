"""paicli installed from its wheel, not from the checkout: every sub-package and the package data
ship, all inside ``paicli/`` (issue 36: nothing generic at the top of site-packages).

The wheel is built from a copy of the sources, symlinks kept as in the checkout (``paicli/tools`` ->
``../tools``...; so the checkout gets no build/ or egg-info) and
installed with ``pip install --target``. The children run with ``python -S`` and a PYTHONPATH of
that target plus the environment's site-packages: ``-S`` skips the .pth files, among them the
editable install's finder, which would otherwise fill a sub-package missing from the wheel from
a checkout; their cwd is outside every checkout, so the sources cannot be imported by accident.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.cli.conftest import run_timeout
from tests.support.openai_server import Reply

# An installed wheel, made once for the module: one xdist worker runs all its tests.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("wheel")]

ROOT = Path(__file__).resolve().parents[2]
# In the checkout beside paicli/, installed as paicli.<name>: every paicli/<root> symlink (codeindex too).
ROOTS = tuple(sorted(p.name for p in (ROOT / "paicli").iterdir() if p.is_symlink()))
BUILD_TIMEOUT = 120  # seconds; building and installing take a few on an idle machine


def source_files(base: Path) -> set[str]:
    """Every module and data file of the package, as installed under ``base``: any suffix, so the
    thesaurus (``memory/longterm/data/thesaurus.txt``) and a skill's scripts count too. In the
    checkout ``paicli/<root>`` is a symlink to ``<root>/``, which ``rglob`` does not follow."""
    found = set()
    places = [(base / "paicli", "paicli")] + [(base / "paicli" / root, f"paicli/{root}") for root in ROOTS]
    for folder, name in places:
        for path in folder.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                found.add(f"{name}/{path.relative_to(folder).as_posix()}")
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packages as ``pip install`` of a freshly built wheel lays them out."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("paicli", *ROOTS):
        shutil.copytree(ROOT / folder, src / folder, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"), str(src)],
                   check=True, cwd=work, capture_output=True, timeout=BUILD_TIMEOUT)
    (wheel,) = (work / "dist").glob("paicli-*.whl")
    target = work / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, cwd=work, capture_output=True, timeout=BUILD_TIMEOUT)
    return target


def wheel_env(base: dict[str, str], target: Path) -> dict[str, str]:
    return {**base, "PYTHONPATH": f"{target}:{sysconfig.get_paths()['purelib']}"}


def test_the_wheel_holds_every_module_and_data_file(installed):
    assert source_files(installed) == source_files(ROOT)


def test_the_wheels_only_top_level_package_is_paicli(installed):
    (wheel,) = (installed.parent / "dist").glob("paicli-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
        info = next(top for top in tops if top.endswith(".dist-info"))
        assert archive.read(f"{info}/top_level.txt").decode().split() == ["paicli"]
    assert tops == {"paicli", info}
    assert sorted(p.name for p in installed.iterdir() if p.name != "bin") == sorted(tops)


def test_paicli_help_runs_from_the_wheel(installed, paicli_env, server, tmp_path):
    script = installed / "bin" / "paicli"
    done = subprocess.run([sys.executable, "-S", str(script), "--help"], cwd=tmp_path,
                          env=wheel_env(paicli_env(server.base_url), installed),
                          capture_output=True, text=True, timeout=run_timeout())
    assert done.returncode == 0, done.stderr
    assert "用法:  paicli" in done.stdout


def test_a_turn_with_a_tool_call_runs_from_the_wheel(installed, paicli_env, server, project, paicli_home):
    (project / "notes.txt").write_text("the build runs with make\n", encoding="utf-8")
    server.script = [
        Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}]),
        Reply("It runs with make."),
    ]
    code = ("import sys, paicli, paicli.memory as memory; from paicli.__main__ import main\n"
            f"assert all(m.__file__.startswith({str(installed)!r}) for m in (memory, paicli))\n"
            "sys.exit(main())")
    done = subprocess.run([sys.executable, "-S", "-c", code, "-p", "how does the build run?"], cwd=project,
                          env=wheel_env(paicli_env(server.base_url), installed),
                          capture_output=True, text=True, encoding="utf-8", timeout=run_timeout())
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It runs with make.\n"
    server.assert_consumed()
    tool_message = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "the build runs with make" in tool_message[0]["content"]  # the prompt files shipped too
    assert list((paicli_home / "history" / "raw").glob("*.jsonl"))  # the ledger wrote the session
