"""Fixtures the guard tests share: a project directory and a HOME beside it, both empty."""

from pathlib import Path

import pytest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path
