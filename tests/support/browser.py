"""What the browser tests need (paicli issue 40): a real Chromium and the real chrome-devtools MCP
server, and a second Chromium standing in for the user's own Chrome.

``.ci/run`` installs both (Debian's ``chromium``, npm's ``chrome-devtools-mcp`` into a folder it
names in ``PAICLI_TEST_BROWSER_MCP``). Without them a test is skipped with the reason, and fails
under ``CI=true``, as the PostgreSQL tests do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from paicli.tools.browser.launch import CHROME_ARGS, find_browser, find_server


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {what} is missing (.ci/run installs it)")
    pytest.skip(f"{what} is not installed")


def browser_env(mode: str = "isolated") -> dict[str, str]:
    """The child's environment for a browser test: the mode and where the server is."""
    if not find_browser(None, dict(os.environ)):
        _missing("Chromium")
    node = shutil.which("node") or ""
    server = find_server(os.environ.get("PAICLI_TEST_BROWSER_MCP"), Path("/nonexistent"), node, dict(os.environ))
    if not node or not server:
        _missing("chrome-devtools-mcp (npm) or Node.js")
    # node starts the server slowly from a fresh npm install on a busy machine: paicli waits for it
    return {"PAICLI_BROWSER": mode, "PAICLI_BROWSER_MCP": server, "PAICLI_MCP_STARTUP_WAIT_SECONDS": "60"}


class UserChrome:
    """A second, real Chromium with a debugging port the kernel picks, in ``profile`` (the
    user's profile folder: its ``DevToolsActivePort`` is how ``/browser connect`` finds it)."""

    def __init__(self, profile: Path, url: str):
        executable = find_browser(None, dict(os.environ))
        if not executable:
            _missing("Chromium")
        profile.mkdir(parents=True, exist_ok=True)
        extra = ["--no-sandbox"] if os.geteuid() == 0 else []
        self.profile = profile
        self.proc = subprocess.Popen([executable, "--headless", *CHROME_ARGS, *extra, f"--user-data-dir={profile}",
                                      "--remote-debugging-port=0", url],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.port = self._port()

    def _port(self) -> int:
        deadline = time.monotonic() + 30
        marker = self.profile / "DevToolsActivePort"
        while time.monotonic() < deadline:
            try:
                lines = marker.read_text().splitlines()
            except OSError:
                lines = []
            if len(lines) >= 2:
                return int(lines[0])
            time.sleep(0.1)
        self.close()
        raise AssertionError("the user's Chromium never wrote DevToolsActivePort")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def chromium_processes(marker: str) -> list[str]:
    """Command lines of running processes that mention ``marker`` (a profile path of the test's)."""
    found = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    return [line for line in found.splitlines() if "pgrep" not in line]
