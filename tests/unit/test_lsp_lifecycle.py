"""Language servers end with paicli however paicli ends (issue 38): a stand-in for paicli starts
a server the way the session does (through ``paicli.run.wiring``'s leash, inside the sandbox or not)
and is then SIGKILLed, interrupted or left to exit; the server must be gone each time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.waiting import patience

pytestmark = pytest.mark.process

FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_lsp.py")
PAICLI = """
import asyncio, os, sys, threading
from pathlib import Path
from paicli.config.settings import load_settings
from paicli.run.wiring import make_language_servers
from paicli.tools.sandbox.command import CommandSandbox

async def main(project, how):
    settings = load_settings(project)
    lsp = make_language_servers(settings, CommandSandbox(settings.sandbox))
    found = await lsp.diagnose(project, [("app.py", os.path.join(project, "app.py"))], {})
    print("diagnosed", len(found.reports), flush=True)
    if how == "exit":
        await lsp.close()
        return
    if how == "crash":
        raise SystemExit("paicli crashed")
    await asyncio.sleep(600)

if sys.argv[2] == "thread":  # started off the main thread (a Studio run's loop): the leash watches paicli
    threading.Thread(target=asyncio.run, args=(main(sys.argv[1], "kill"),), daemon=True).start()
    threading.Event().wait(600)
else:
    asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose (its parent has not reaped it yet)
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sandbox", ["auto", "off"])
@pytest.mark.parametrize("how", ["kill", "interrupt", "crash", "exit", "thread"])
def test_the_server_ends_with_paicli(tmp_path, sandbox, how):
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("ERROR\n")
    # The sandbox's /tmp is its own, the project read-only: a writable root of the user's lets the
    # server tell its pid.
    pids = tmp_path / "pids"
    pids.mkdir()
    pidfile = pids / "server.pid"
    env = {**os.environ, "PAICLI_HOME": str(tmp_path / "home"), "PAICLI_COMMAND_SANDBOX": sandbox,
           "PAICLI_SANDBOX_WRITABLE": str(pids),
           "PAICLI_LSP_PYTHON": f"{sys.executable} {FAKE} pidfile {pidfile}", "PAICLI_LSP_WAIT_SECONDS": "60",
           "PAICLI_API_KEY": "k"}
    child = subprocess.Popen([sys.executable, "-c", PAICLI, str(project.resolve()), how], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "diagnosed 1", child.stderr.read()
    server = int(pidfile.read_text())  # the server's pid in its own namespace when sandboxed...
    if sandbox == "auto":
        server = _host_pid(server, child.pid)
    assert alive(server)
    if how in ("kill", "thread"):
        child.kill()
    elif how == "interrupt":
        child.send_signal(signal.SIGINT)
    child.wait(timeout=patience(30))
    deadline = time.monotonic() + patience(20)
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(server)


def _host_pid(inner: int, paicli: int) -> int:
    """The host pid of the sandboxed server: the descendant of paicli whose namespace pid is ``inner``."""
    deadline = time.monotonic() + patience(5)
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            pids = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
            if len(pids) > 1 and pids[-1] == str(inner) and _descends(int(entry.name), paicli):
                return int(entry.name)
        time.sleep(0.1)
    raise AssertionError("the sandboxed server was not found")


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[1])
        except OSError:
            return False
    return False
