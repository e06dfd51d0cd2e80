"""The port of ``paicli studio``: refused up front when something already listens on it, naming
the pid of a server an earlier run left behind when there is one.

Checked before the server starts because the server would not fail: ``langgraph dev`` quietly
moves to another free port, while paicli would wait for, and register sessions with, whatever
answers on the one asked for. The pid of each running server is kept in
``$PAICLI_HOME/studio/server-<port>.pid`` (one file per port: the port is the machine's, not the
project's) so the message can say what to stop.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from paicli.memory.errors import PaicliError

CONNECT_SECONDS = 1.0  # a local listener accepts at once


class PortBusy(PaicliError):
    """The port is taken; the message names the fix."""


def connect_host(host: str) -> str:
    """Where a client reaches a server listening on ``host`` (all interfaces: loopback)."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def pid_file(home: Path, port: int) -> Path:
    return home / "studio" / f"server-{port}.pid"


def refuse_busy_port(host: str, port: int, pids: Path) -> None:
    try:
        socket.create_connection((connect_host(host), port), timeout=CONNECT_SECONDS).close()
    except OSError:
        return  # nobody listens: the server can have it
    pid = _running_pid(pids)
    if pid is not None:
        raise PortBusy(f"{host} 上的端口 {port} 已被占用，可能是之前的 paicli studio 留下的服务器（pid {pid}）："
                       f"用 `kill {pid}` 停止它，或用 --port 换一个端口")
    raise PortBusy(f"{host} 上的端口 {port} 已被占用：停止在那里监听的程序，或用 --port 换一个端口")


def _running_pid(pids: Path) -> int | None:
    try:
        pid = int(pids.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):  # no file, or not ours
        return None
    if pid <= 0:  # kill(0) would reach our own process group
        return None
    try:
        os.kill(pid, 0)
    except PermissionError:  # running, as another user
        return pid
    except OSError:  # gone
        return None
    return pid


def write_pid(pids: Path, pid: int) -> None:
    pids.parent.mkdir(parents=True, exist_ok=True)
    pids.write_text(f"{pid}\n", encoding="utf-8")
