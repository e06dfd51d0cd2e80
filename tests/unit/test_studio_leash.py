"""The leash `paicli studio` runs its server on, with real processes: a stand-in for paicli starts
a stand-in server on the leash and is SIGKILLed; the server must go too. Both ways: the kernel's
PDEATHSIG (Linux) and the fallback that watches its parent (`--watch`, what macOS gets)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paicli.tools.leash import PARENT_GONE, leash_command

GONE_SECONDS = 10
LINUX = sys.platform.startswith("linux")
MODES = [pytest.param(False, id="pdeathsig", marks=pytest.mark.skipif(not LINUX, reason="Linux only")),
         pytest.param(True, id="watch")]
SERVER = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"
PAICLI = ("import subprocess, sys, os, time; from paicli.tools.leash import leash_command; "
          "subprocess.Popen(leash_command([sys.executable, '-c', {server!r}, {pid_path!r}], os.getpid(), "
          "watch={watch})); time.sleep(120)")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper has stopped
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def wait_for(check, seconds: float = GONE_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # bounded by the deadline: polling another process
    return True


def server_pid(path: Path) -> int:
    assert wait_for(lambda: path.is_file() and path.read_text() != ""), "the server did not start"
    return int(path.read_text())


@pytest.mark.process
@pytest.mark.parametrize("watch", MODES)
def test_the_server_stops_when_paicli_is_sigkilled(tmp_path, watch):
    pid_path = tmp_path / "server.pid"
    paicli = subprocess.Popen([sys.executable, "-c", PAICLI.format(server=SERVER, pid_path=str(pid_path),
                                                                   watch=watch)])
    server = None
    try:
        server = server_pid(pid_path)
        paicli.kill()
        paicli.wait()
        assert wait_for(lambda: not alive(server)), "the server outlived its parent"
    finally:
        paicli.kill()
        if server is not None and alive(server):
            os.kill(server, signal.SIGKILL)


@pytest.mark.process
@pytest.mark.parametrize("watch", MODES)
def test_nothing_starts_when_paicli_died_before_the_leash_was_on(tmp_path, watch):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()  # not our parent, and no longer running
    marker = tmp_path / "started"
    command = leash_command([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], int(gone), watch=watch)
    done = subprocess.run(command, timeout=60)
    assert done.returncode == PARENT_GONE and not marker.exists()


@pytest.mark.process
def test_the_watching_leash_passes_a_stop_on_and_exits_with_the_server(tmp_path):
    """As paicli stops it: SIGINT to the process group, which the leash and the server are both in."""
    pid_path = tmp_path / "server.pid"
    handled = ("import os, signal, sys, time; signal.signal(signal.SIGTERM, lambda *a: sys.exit(7)); "
               "signal.signal(signal.SIGINT, signal.SIG_IGN); "
               "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)")
    leash = subprocess.Popen(leash_command([sys.executable, "-c", handled, str(pid_path)], os.getpid(), watch=True),
                             process_group=0)
    try:
        server = server_pid(pid_path)
        os.killpg(leash.pid, signal.SIGINT)
        assert leash.wait(timeout=GONE_SECONDS) == 7  # the server's own status, after the forwarded SIGTERM
        assert not alive(server)
    finally:
        leash.kill()
