"""Imports point one way: memory, prompts -> tools -> nodes -> graphs -> paicli, and each folder keeps to
its subsystem (the import-linter contracts in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_layers_are_respected():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.fail("import-linter is not installed (pip install -e '.[test]')")
    done = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_paicli_keeps_a_handful_of_top_level_modules():
    """Issue 36 item 2: paicli/ is grouped by purpose (config/, run/, ui/, commands/, studio/); a
    new module goes into the sub-package it serves."""
    modules = sorted(p.name for p in (ROOT / "paicli").glob("*.py"))
    assert len(modules) <= 12, modules
