"""``paicli studio``: the LangGraph dev server (Studio's backend) for the current project.

The server is ``langgraph dev`` from ``langgraph-cli[inmem]``, run as a child process with a
config written for this run that names paicli's installed modules, so the server never treats a
source checkout as the project. It runs only installed code: an isolated interpreter (``-I``: no
working directory, ``PYTHONPATH`` or user site on ``sys.path``), working in a folder of
``$PAICLI_HOME`` (``studio/projects/<name>-<hash>/``, which holds that config and the in-memory
runtime's ``.langgraph_api/``), so nothing the project ships (a ``langgraph_cli/`` package, a
``sitecustomize.py``) can be imported; the project root reaches the graph as
``PAICLI_PROJECT_ROOT``. Its front door (``paicli/studio/gate.py``) serves this machine's clients
only, and it listens on loopback unless ``--allow-remote`` says otherwise. Checkpoints are the
session ledger and the store is long-term memory, as in the CLI. CLI sessions are registered as
threads. Ctrl-C (or SIGTERM) is passed to the server's process group, and the command exits
quietly. The server runs on a leash (``tools/leash.py``): it stops when paicli dies, even
by SIGKILL. A port something already listens on is refused before starting
(``paicli/studio/port.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from paicli.memory.errors import PaicliError
from paicli.ui.arguments import Parser
from paicli.modes import MODES
from paicli.studio.gate import cors_config
from paicli.tools.leash import leash_command, python_command
from paicli.studio.port import connect_host, pid_file, refuse_busy_port, write_pid

STARTUP_SECONDS = 120  # the first start compiles the graph and imports LangGraph: a few seconds
STOP_SECONDS = 10  # then the server is killed
SYNC_SECONDS = 3.0  # how often sessions made meanwhile in the CLI are registered
STUDIO_URL = "https://smith.langchain.com/studio/?baseUrl={api}"
DEFAULT_PORT = 2024  # langgraph dev's


def studio_parser() -> argparse.ArgumentParser:
    p = Parser(prog="paicli studio", description="把项目提供给 LangGraph Studio 和 LangGraph SDK"
                                "（langgraph dev，离线，不打开浏览器）；Ctrl-C 停止。", add_help=False)
    p.add_argument("-h", "--help", action="help", help="显示本帮助并退出")  # argparse's own is English
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"API 服务器的端口（默认 {DEFAULT_PORT}）")
    p.add_argument("--host", default="127.0.0.1", help="监听的网络接口（默认 127.0.0.1）；"
                   "回环地址以外的都需要 --allow-remote")
    p.add_argument("--allow-remote", action="store_true", help="允许其他机器能访问的 --host："
                   "能访问该端口的任何人都能用你的 key 在这里运行命令")
    p.add_argument("--project", metavar="DIR", help="工具工作的项目根目录（默认当前目录）")
    p.add_argument("--debug", action="store_true", help="意外错误时显示 traceback")
    return p


class RemoteRefused(PaicliError):
    """A --host beyond loopback without --allow-remote; the message names the fix."""


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def check_host(host: str, port: int, allow_remote: bool) -> str | None:
    """The warning to print for a reachable server, or None on loopback; refuses one not allowed."""
    if is_loopback(host):
        return None
    if not allow_remote:
        raise RemoteRefused(f"--host {host} 会让其他机器访问到服务器，能访问它的任何人都能用你的 key 在这里运行命令："
                            "请保留默认的 127.0.0.1；确有此意时加上 --allow-remote")
    return (f"⚠️ paicli studio: 正在监听 {host}:{port}（--allow-remote）：能访问该端口的任何人都能用你的 key "
            "在这台机器上运行命令；API 没有登录")


def start_notices(settings: Any, host: str, port: int, allow_remote: bool, sandbox: Any = None) -> list[str]:
    """The lines printed before the server starts: a reachable host, and the REPL banner's ⚠️
    when commands will not run in the command sandbox (issue 24; ``sandbox``: see
    ``paicli.app.sandbox_lines``). Refuses a remote host not allowed."""
    from paicli.app import sandbox_lines

    warning = check_host(host, port, allow_remote)
    first = sandbox_lines(settings, sandbox)[0]
    return [line for line in (warning, first if first.startswith("⚠️") else None) if line]


def state_dir_of(home: Path, project_root: Path) -> Path:
    """The server's folder for this project, under ``$PAICLI_HOME`` (never inside the project):
    its config and the in-memory runtime's thread registry, kept per project."""
    digest = hashlib.sha256(str(project_root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in project_root.name)[:40] or "root"
    return home / "studio" / "projects" / f"{name}-{digest}"


def write_config(state_dir: Path, port: int = DEFAULT_PORT, origins: tuple[str, ...] = ()) -> Path:
    """The langgraph config: module paths resolve in the server's interpreter, which is this one,
    wherever paicli is installed (editable or not). ``http.app`` is the front door
    (``paicli/studio/gate.py``), ``http.cors`` answers with the exact allowed origins."""
    package_root = Path(__file__).resolve().parents[2]  # where `paicli`, `memory`, ... are installed
    config = {
        "dependencies": [str(package_root)],
        "graphs": {m.studio_graph: f"paicli.studio.graphs:{m.studio_graph}" for m in MODES},
        "checkpointer": {"path": "paicli.studio.stores.make_checkpointer"},
        "store": {"path": "paicli.studio.stores.make_store"},
        "http": {"app": "paicli.studio.gate:app", "cors": cors_config(port, origins)},
    }
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "langgraph.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def server_command(config: Path, host: str, port: int) -> list[str]:
    return python_command("-m", "langgraph_cli", "dev", "--config", str(config), "--host", host, "--port", str(port),
                          "--no-browser", "--no-reload", "--server-log-level", "WARNING")


def run_studio(argv: list[str]) -> int:
    args = studio_parser().parse_args(argv)
    from paicli.config.settings import load_settings, studio_environ

    settings = load_settings(args.project)
    settings.require_key()  # the server would fail to load the graph, with a traceback
    notices = start_notices(settings, args.host, args.port, args.allow_remote)
    pids = pid_file(settings.home, args.port)
    refuse_busy_port(args.host, args.port, pids)
    for notice in notices:
        print(notice, file=sys.stderr, flush=True)
    sessions = None  # with a database, its sessions are the threads to register (a bad URL stops here)
    if settings.database_url:
        from paicli.run.database import open_database, project_key

        sessions = open_database(settings.database_url, project_key(settings.project_root)).saver
    state_dir = state_dir_of(settings.home, settings.project_root)
    config = write_config(state_dir, args.port, settings.studio_origins)
    command = leash_command(server_command(config, args.host, args.port), os.getpid())
    child = subprocess.Popen(command, cwd=state_dir, env=studio_environ(settings), stdin=subprocess.DEVNULL,
                             process_group=0)  # its own group: Ctrl-C is ours to pass on, after we stop syncing
    try:
        write_pid(pids, child.pid)
        return Supervisor(child, args.host, args.port, settings.home / "history" / "raw", sessions).run()
    finally:
        pids.unlink(missing_ok=True)


class Supervisor:
    """Waits for the server, registers sessions, and stops the server on SIGINT/SIGTERM."""

    def __init__(self, child: subprocess.Popen, host: str, port: int, ledger_dir: Path, sessions: Any = None) -> None:
        self.child, self.ledger_dir, self.sessions = child, ledger_dir, sessions  # sessions: the database's, if any
        self.api = f"http://{connect_host(host)}:{port}"
        self.stopping = False

    def run(self) -> int:
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            if self._wait_ready():
                self._serve()
            return self._finish()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if self.stopping:  # a second Ctrl-C: no more waiting
            self._send(signal.SIGKILL)
        self.stopping = True
        self._send(signum)

    def _send(self, signum: int) -> None:
        try:
            os.killpg(self.child.pid, signum)
        except ProcessLookupError:  # already gone
            pass

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not self.stopping and self.child.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.api}/ok", timeout=1) as response:
                    if response.status == 200:
                        return True
            except OSError:
                time.sleep(0.2)
        if self.child.poll() is None and not self.stopping:
            print(f"paicli studio: 服务器 {STARTUP_SECONDS} 秒内没有响应，正在停止它", file=sys.stderr)
            self.stopping = True
            self._send(signal.SIGTERM)
        return False

    def _serve(self) -> None:
        from langgraph_sdk import get_sync_client

        from paicli.studio.threads import SessionRegistrar

        registrar = SessionRegistrar(self.ledger_dir, get_sync_client(url=self.api, api_key=None), self.sessions)
        added = registrar.sync()
        print(f"\n🚀 API: {self.api}\n🎨 Studio: {STUDIO_URL.format(api=self.api)}", flush=True)
        print(f"📚 已把 {added} 个 CLI 会话登记为 react 图的 thread", flush=True)
        if registrar.legacy:
            ids = sorted(registrar.legacy)  # --session's own names (s1, notes) as well as old session-… ids
            named = "、".join(ids[:3]) + ("等" if len(ids) > 3 else "")
            print(f"ℹ️ {len(ids)} 个会话的 id 不是 UUID（{named}），只能在 CLI 中使用"
                  "（服务器只接受 UUID 形式的 thread id）：用 paicli --session ID 继续它们", flush=True)
        print("按 Ctrl-C 停止。", flush=True)
        while not self.stopping and self.child.poll() is None:
            try:
                self.child.wait(timeout=SYNC_SECONDS)  # returns as soon as the server exits
            except subprocess.TimeoutExpired:
                if not self.stopping:
                    self._quietly(registrar.sync)

    def _quietly(self, sync: Any) -> None:
        try:
            sync()
        except Exception as exc:  # the server going down mid-sync is not worth a traceback
            if not self.stopping and self.child.poll() is None:
                print(f"paicli studio: 无法登记新会话：{exc}", file=sys.stderr)

    def _finish(self) -> int:
        try:
            code = self.child.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._send(signal.SIGKILL)
            code = self.child.wait()
        if self.stopping:
            print("paicli studio: 已停止", flush=True)
            return 0
        print(f"paicli studio: 服务器已退出，退出码 {code}", file=sys.stderr)
        return code or 1
