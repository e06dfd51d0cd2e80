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
quietly. The server runs on a leash (``paicli/studio/leash.py``): it stops when paicli dies, even
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

from memory.errors import PaicliError
from paicli.modes import MODES
from paicli.studio.gate import cors_config
from paicli.studio.leash import leash_command, python_command
from paicli.studio.port import connect_host, pid_file, refuse_busy_port, write_pid

STARTUP_SECONDS = 120  # the first start compiles the graph and imports LangGraph: a few seconds
STOP_SECONDS = 10  # then the server is killed
SYNC_SECONDS = 3.0  # how often sessions made meanwhile in the CLI are registered
STUDIO_URL = "https://smith.langchain.com/studio/?baseUrl={api}"
DEFAULT_PORT = 2024  # langgraph dev's


def studio_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="paicli studio", description="Serve the project to LangGraph Studio and the "
                                "LangGraph SDK (langgraph dev, offline, no browser); Ctrl-C stops it.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port of the API server (default: {DEFAULT_PORT})")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1); "
                   "anything but loopback needs --allow-remote")
    p.add_argument("--allow-remote", action="store_true", help="allow a --host other machines can reach: "
                   "anyone who can reach the port can then run commands here, with your key")
    p.add_argument("--project", metavar="DIR", help="project root the tools work in (default: current directory)")
    p.add_argument("--debug", action="store_true", help="show tracebacks for unexpected errors")
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
        raise RemoteRefused(f"--host {host} would let other machines reach the server, and anyone who can reach "
                            "it can run commands here with your key: keep the default 127.0.0.1, or add "
                            "--allow-remote if that is what you want")
    return (f"⚠️ paicli studio: listening on {host}:{port} (--allow-remote): anyone who can reach this port can "
            "run commands on this machine with your key; the API has no login")


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
    from paicli.settings import load_settings, studio_environ

    settings = load_settings(args.project)
    settings.require_key()  # the server would fail to load the graph, with a traceback
    warning = check_host(args.host, args.port, args.allow_remote)
    pids = pid_file(settings.home, args.port)
    refuse_busy_port(args.host, args.port, pids)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    state_dir = state_dir_of(settings.home, settings.project_root)
    config = write_config(state_dir, args.port, settings.studio_origins)
    command = leash_command(server_command(config, args.host, args.port), os.getpid())
    child = subprocess.Popen(command, cwd=state_dir, env=studio_environ(settings), stdin=subprocess.DEVNULL,
                             process_group=0)  # its own group: Ctrl-C is ours to pass on, after we stop syncing
    try:
        write_pid(pids, child.pid)
        return Supervisor(child, args.host, args.port, settings.home / "history" / "raw").run()
    finally:
        pids.unlink(missing_ok=True)


class Supervisor:
    """Waits for the server, registers sessions, and stops the server on SIGINT/SIGTERM."""

    def __init__(self, child: subprocess.Popen, host: str, port: int, ledger_dir: Path) -> None:
        self.child, self.ledger_dir = child, ledger_dir
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
            print(f"paicli studio: the server did not answer within {STARTUP_SECONDS}s; stopping it", file=sys.stderr)
            self.stopping = True
            self._send(signal.SIGTERM)
        return False

    def _serve(self) -> None:
        from langgraph_sdk import get_sync_client

        from paicli.studio.threads import SessionRegistrar

        registrar = SessionRegistrar(self.ledger_dir, get_sync_client(url=self.api, api_key=None))
        added = registrar.sync()
        print(f"\n🚀 API: {self.api}\n🎨 Studio: {STUDIO_URL.format(api=self.api)}", flush=True)
        print(f"📚 {added} CLI session(s) registered as threads of graph 'react'", flush=True)
        if registrar.legacy:
            print(f"ℹ️ {len(registrar.legacy)} older session(s) with session-… ids are CLI-only "
                  "(the server accepts UUID thread ids): continue them with paicli --session ID", flush=True)
        print("Press Ctrl-C to stop.", flush=True)
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
                print(f"paicli studio: could not register new sessions: {exc}", file=sys.stderr)

    def _finish(self) -> int:
        try:
            code = self.child.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._send(signal.SIGKILL)
            code = self.child.wait()
        if self.stopping:
            print("paicli studio: stopped", flush=True)
            return 0
        print(f"paicli studio: the server exited with code {code}", file=sys.stderr)
        return code or 1
