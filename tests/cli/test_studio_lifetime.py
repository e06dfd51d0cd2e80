"""`paicli studio` never leaves its server behind: the real command, SIGKILLed, takes the server
along; a port held by a server an earlier run left behind is named, not talked to."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.cli.conftest import run_timeout
from tests.cli.test_studio_command import environment, start_studio
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # the Studio server and its signals

GONE_SECONDS = 10  # the server stops gracefully on SIGTERM: a second or two
OFFLINE_MODEL = "http://127.0.0.1:9/v1"  # never called: the server only starts


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill(0)
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_SECONDS
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)  # bounded by the deadline: polling for the process to end
    return True


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def pid_file(home: Path, url: str) -> Path:
    return home / "studio" / f"server-{url.rsplit(':', 1)[1]}.pid"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's pid from /proc")
def test_a_sigkilled_paicli_studio_takes_its_server_along(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    proc, url = start_studio(project, environment(home, OFFLINE_MODEL), tmp_path / "log")
    [server] = [int(p) for t in Path(f"/proc/{proc.pid}/task").iterdir()
                for p in (t / "children").read_text().split()]
    try:
        proc.kill()
        proc.wait()
        assert wait_gone(server), "the server outlived paicli studio"
        assert not listening(int(url.rsplit(":", 1)[1]))
        assert pid_file(home, url).read_text().strip() == str(server)  # what the user can `kill`
    finally:
        if alive(server):  # never leave it behind, even when the test fails
            os.kill(server, signal.SIGKILL)


def test_sigterm_stops_the_server_and_removes_the_pid_file(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    proc, url = start_studio(project, environment(home, OFFLINE_MODEL), tmp_path / "log")
    try:
        server = int(pid_file(home, url).read_text())
    finally:
        proc.terminate()
    assert proc.wait(timeout=patience(20)) == 0
    assert not alive(server) and not pid_file(home, url).exists()
    assert "paicli studio: 已停止" in (tmp_path / "log").read_text(errors="replace")


class _Stale(BaseHTTPRequestHandler):
    """Answers like a LangGraph server would (`/ok` is 200), as a server left behind does."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"ok":true}')

    def log_message(self, *_args) -> None:
        pass


@pytest.fixture
def stale_port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stale)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def run_studio(tmp_path: Path, port: int) -> subprocess.CompletedProcess[str]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "paicli", "studio", "--port", str(port)], cwd=project,
                          env=environment(home, OFFLINE_MODEL), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=run_timeout())


def test_a_port_held_by_a_server_left_behind_names_its_pid(tmp_path, stale_port):
    (tmp_path / "home" / "studio").mkdir(parents=True)
    (tmp_path / "home" / "studio" / f"server-{stale_port}.pid").write_text(f"{os.getpid()}\n")
    done = run_studio(tmp_path, stale_port)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"端口 {stale_port}" in done.stderr and f"pid {os.getpid()}" in done.stderr
    assert f"kill {os.getpid()}" in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr and "API:" not in done.stdout


def test_a_port_held_by_something_else_is_refused_before_starting_a_server(tmp_path, stale_port):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()  # a pid file whose process is gone
    (tmp_path / "home" / "studio").mkdir(parents=True)
    (tmp_path / "home" / "studio" / f"server-{stale_port}.pid").write_text(f"{dead}\n")
    done = run_studio(tmp_path, stale_port)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"127.0.0.1 上的端口 {stale_port} 已被占用" in done.stderr
    assert "pid" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "project" / ".paicli" / "studio").exists()  # nothing started, nothing written
