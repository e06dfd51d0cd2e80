"""The reference MCP server from npm, ``@modelcontextprotocol/server-everything`` (issue 39), for
tests that need a server nobody here wrote: prompts with arguments, resource templates, tools
that return resource links. ``.ci/run`` installs it into ``.npm-test/`` (``npm install --prefix``);
``PAICLI_TEST_MCP_EVERYTHING`` may name another copy of its ``mcp-server-everything`` program.
Missing, a test is skipped saying how to install it, and fails under ``CI=true``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = "npm install --prefix .npm-test @modelcontextprotocol/server-everything@2026.8.31"


def everything() -> str:
    program = Path(os.environ.get("PAICLI_TEST_MCP_EVERYTHING") or ROOT / ".npm-test/node_modules/.bin/mcp-server-everything")
    if program.is_file() and shutil.which("node"):
        return str(program)
    reason = f"@modelcontextprotocol/server-everything 未安装（{INSTALL}）"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
