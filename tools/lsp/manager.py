"""The session's language servers (issue 38): found once, started lazily, one per language and
root, shut down after idle, never restarted in a loop.

``LanguageServers`` is what the rest of paicli holds (``Deps.lsp``): the diagnostics node asks
it for a step's edited files (``diagnose``), the router in front of it asks whether a file is
served at all (``serves``, a dictionary look-up, so an edit costs nothing when no server is
installed), ``/lsp`` reads ``status`` and calls ``restart`` / ``turn_off``, and the application
calls ``close`` on its way out. A server that fails is named once (``notices``) and stays failed
until a person restarts it. Servers run confined (``tools/lsp/sandboxed.py``: the command
sandbox's ``wrap``, the project read-only) and on a leash to paicli's process (``launcher``), so
they end with paicli however paicli ends.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from paicli.tools.lsp.client import FAILED, READY, STARTING, STOPPED, LanguageServer, detached, quiet_pygls
from paicli.tools.lsp.languages import BY_KEY, LANGUAGES, Language, language_of, root_of
from paicli.tools.lsp.options import LspOptions
from paicli.tools.lsp.report import FileReport, compare, problems
from paicli.tools.lsp.resolve import Missing, ServerCommand, find_server
from paicli.tools.lsp.sandboxed import confined
from paicli.tools.sandbox.command import CommandSandbox
from paicli.tools.sandbox.secrets import command_environment

OFF = "off"  # a language a person turned off with /lsp
# (argv, the descriptors it must inherit) -> argv on a leash to paicli (paicli.tools.leash)
Launcher = Callable[[list[str], tuple[int, ...]], list[str]]
NOT_CONFINED = "{icon} 语言服务器不在沙箱中运行（{why}）"


@dataclass(frozen=True)
class ServerStatus:
    language: str  # the language's name
    key: str
    server: str  # the program (missing: the programs looked for; "" when a setting named one)
    root: str
    state: str  # starting | ready | failed | stopped | off | missing
    reason: str = ""
    pid: int | None = None


@dataclass
class Diagnosis:
    """What ``diagnose`` found for one step's files: a report per file that was diagnosed, the
    files whose server did not answer within the bound (tried again on the next step), and the
    lines a person reads (a server missing, failing, or slow: once each)."""

    reports: list[FileReport] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


class LanguageServers:
    def __init__(self, options: LspOptions, sandbox: CommandSandbox, *, launcher: Launcher | None = None,
                 env: Mapping[str, str] | None = None, hidden_env: frozenset[str] = frozenset(),
                 path: str | None = None):
        """``sandbox``: the session's (its settings' data folder holds the servers' private temp
        dirs and cache layers); ``hidden_env``: the variables holding paicli's key."""
        self.options, self.sandbox = options, sandbox
        self.launcher = launcher or (lambda argv, fds: argv)
        self._path = path
        # The environment a server runs with: a command's (no key, nothing named like a secret, no
        # PAICLI_* setting, no session socket, no credentials inside URLs).
        self.env = command_environment(os.environ if env is None else env, hidden_env)
        self.servers: dict[tuple[str, str], LanguageServer] = {}
        self.turned_off: set[str] = set()
        self._commands: dict[str, ServerCommand | Missing] = {}
        self._said: set[str] = set()  # lines a person has been shown once
        self._lines: list[str] = []  # lines to show at the next diagnose
        self._lock = threading.Lock()
        self._reaper: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- what serves what --------------------------------------------------------------------
    def command(self, language: Language) -> ServerCommand | Missing:
        with self._lock:
            if language.key not in self._commands:
                self._commands[language.key] = find_server(language, self.options, self._path)
            return self._commands[language.key]

    def serves(self, path: str) -> bool:
        """Whether an edit of ``path`` is worth a diagnostics step: its language has a server
        that is not off, or there is still something to say about it (missing, once)."""
        language = language_of(path)
        if language is None or not self.options.on or language.key in self.turned_off:
            return False
        found = self.command(language)
        return not isinstance(found, Missing) or f"missing:{language.key}" not in self._said

    def _server(self, language: Language, root: str, project: str) -> LanguageServer | None:
        """The server for (language, root), started if it is not running; None when there is
        none to start (missing, off, failed: each said once)."""
        found = self.command(language)
        if isinstance(found, Missing):
            self._say(f"missing:{language.key}", f"🩺 {found.why}，跳过 {language.name} 诊断")
            return None
        self._same_loop()
        key = (language.key, root)
        server = self.servers.get(key)
        if server is not None and server.state in (STARTING, READY, FAILED):
            return server if server.state != FAILED else None
        try:
            launch, why_outside = confined(found.argv, Path(project), self.env, self.sandbox,
                                           session=server_session(project))
        except RuntimeError as exc:  # PAICLI_COMMAND_SANDBOX=required without a sandbox: nothing starts
            self._say(f"refused:{language.key}", f"🩺 {found.name} 未启动：{exc}")
            return None
        chosen_off = self.sandbox.settings.mode == "off" and not self.sandbox.settings.skipped
        if why_outside and not chosen_off:  # as for commands: the user's own "off" is not news
            self._say("outside", NOT_CONFINED.format(icon="🩺", why=why_outside))
        quiet_pygls()
        launch.argv = self.launcher(launch.argv, launch.fds)
        server = LanguageServer(language.key, found, root, launch,
                                startup=max(self.options.startup, self.options.wait), on_gone=self._gone)
        self.servers[key] = server
        self._start_reaper()
        return server

    def _same_loop(self) -> None:
        """A server's pipes belong to the event loop that started it. A host that runs each
        graph run on a loop of its own (a server's isolated background loops) gets new servers
        on the new loop; the old ones are killed, their loop being gone."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            for server in self.servers.values():
                if server.pid is not None:
                    try:
                        os.killpg(server.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
            self.servers, self._reaper = {}, None
        self._loop = loop

    def _gone(self, server: LanguageServer) -> None:
        self._say(f"failed:{server.language}:{server.root}:{server.started_at}",
                  f"🩺 {server.name} 已停止（{server.reason}），本会话不再自动重启；/lsp restart {server.language} 可重试")

    def _say(self, key: str, line: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self._lines.append(line)

    def warm(self, project: str, paths: Sequence[str]) -> None:
        """Start the servers of files the model is reading, so their first edit finds them ready."""
        for path in paths:
            language = language_of(path)
            if language is not None and self.serves(path) and not isinstance(self.command(language), Missing):
                self._server(language, root_of(path, project, language), project)

    def server_for(self, path: str, project: str) -> LanguageServer | None:
        """The server of ``path`` (absolute), started if need be; None when none serves it."""
        language = language_of(path)
        if language is None or not self.serves(path):
            return None
        return self._server(language, root_of(path, project, language), project)

    async def servers_ready(self, path: str, project: str, timeout: float) -> bool:
        """Start the server of ``path`` and wait until it is ready (tests, the benchmark)."""
        server = self.server_for(path, project)
        return server is not None and await server.ready(timeout)

    # -- diagnostics -------------------------------------------------------------------------
    async def diagnose(self, project: str, files: Sequence[tuple[str, str]], seen: Mapping[str, Sequence[str]],
                       timeout: float | None = None) -> Diagnosis:
        """``files``: (project-relative path, absolute path) edited in one step; ``seen``: the
        problem keys each was last reported with. Waits at most ``timeout`` (the options' bound)
        in all, every server at the same time."""
        timeout = self.options.wait if timeout is None else timeout
        deadline = time.monotonic() + timeout
        jobs = []
        for rel, path in files:
            language = language_of(path)
            if language is None or not self.serves(path):
                continue
            server = self._server(language, root_of(path, project, language), project)
            if server is not None:
                jobs.append(self._one(server, rel, path, seen.get(rel, ()), deadline))
        results = await asyncio.gather(*jobs)
        done = Diagnosis(lines=self.take_lines())
        for rel, report, slow in results:
            if report is not None:
                done.reports.append(report)
            elif slow is not None:
                done.late.append(rel)
                done.lines.append(slow)
        return done

    async def _one(self, server: LanguageServer, rel: str, path: str, seen: Sequence[str],
                   deadline: float) -> tuple[str, FileReport | None, str | None]:
        slow = f"🩺 {rel}: {server.name} {self.options.wait:g} 秒内没有给出诊断，先继续"
        if not await server.ready(max(0.0, deadline - time.monotonic())):
            return rel, None, slow if server.state == STARTING else None
        try:
            text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8", errors="replace")
        except OSError:
            return rel, None, None
        after = server.mark()
        uri, version = server.sync(path, text)
        found = await server.diagnostics(uri, version, after, max(0.0, deadline - time.monotonic()))
        if found is None:
            return rel, None, slow if server.state == READY else None
        return rel, compare(rel, server.name, problems(found, text), seen), None

    def take_lines(self) -> list[str]:
        lines, self._lines = self._lines, []
        return lines

    # -- /lsp ------------------------------------------------------------------------------
    def status(self) -> list[ServerStatus]:
        rows = []
        for language in LANGUAGES:
            running = [s for (key, _), s in self.servers.items() if key == language.key]
            if running:
                rows += [ServerStatus(language.name, language.key, s.name, s.root, s.state, s.reason, s.pid)
                         for s in running]
                continue
            found = self.command(language)
            if language.key in self.turned_off or not self.options.on:
                state = OFF
            else:
                state = "missing" if isinstance(found, Missing) else "idle"
            if isinstance(found, Missing):  # the programs looked for in the server's column, else why
                program, why = found.looked_for, "" if found.looked_for else found.why
            else:
                program, why = found.name, ""
            rows.append(ServerStatus(language.name, language.key, program, "", state, why))
        return rows

    async def restart(self, key: str) -> int:
        """Stop the language's servers and forget their failures: the next edit starts them anew.
        Returns how many were running or failed."""
        self.turned_off.discard(key)
        with self._lock:
            self._commands.pop(key, None)  # found again: the user may have just installed it
        self._said = {s for s in self._said if not s.startswith((f"missing:{key}", f"failed:{key}:"))}
        return await self._stop_language(key)

    async def turn_off(self, key: str) -> int:
        self.turned_off.add(key)
        return await self._stop_language(key)

    async def _stop_language(self, key: str) -> int:
        chosen = [(k, s) for k, s in self.servers.items() if k[0] == key]
        await asyncio.gather(*(s.stop() for _, s in chosen))
        for k, _ in chosen:
            self.servers.pop(k, None)
        return len(chosen)

    # -- the end ---------------------------------------------------------------------------
    def _start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = detached(self._reap())

    async def _reap(self) -> None:
        """Stop servers nobody asked anything for ``options.idle`` seconds (started again on need)."""
        while self.servers:
            await asyncio.sleep(max(0.05, min(self.options.idle / 4, 30.0)))
            now = time.monotonic()
            for key, server in list(self.servers.items()):
                if server.state == READY and now - server.last_used >= self.options.idle:
                    await server.stop()
                    self.servers.pop(key, None)

    async def close(self) -> None:
        """Every server shut down (bounded), their processes gone."""
        if self._reaper is not None:
            self._reaper.cancel()
        servers, self.servers = list(self.servers.values()), {}
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)


def language_keys() -> tuple[str, ...]:
    return tuple(BY_KEY)


def server_session(project: str) -> str:
    """The sandbox session a project's servers share: their private ``/tmp`` under the sandbox's
    data folder, apart from every command session's and from other projects' servers."""
    return "lsp-" + hashlib.sha256(project.encode("utf-8", "surrogateescape")).hexdigest()[:16]


__all__ = ["FAILED", "READY", "STARTING", "STOPPED", "Diagnosis", "LanguageServers", "ServerStatus", "language_keys",
           "server_session"]
