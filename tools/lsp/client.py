"""One language server process and the conversation with it, through pygls's language client
(lsprotocol types): start, ``initialize``, open or change a document, wait for its diagnostics,
definition and references, shut down. Everything is bounded in time; nothing here raises at
the caller for what a server does (a crash, a hang, nonsense): the state and its reason say it.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from paicli.tools.lsp.resolve import ServerCommand

if TYPE_CHECKING:
    from paicli.tools.sandbox.command import Launch

STARTING, READY, FAILED, STOPPED = "starting", "ready", "failed", "stopped"
SETTLE, SETTLE_MOST = 0.3, 1.0  # seconds of quiet after an unversioned set (see ``diagnostics``)
STOP_WAIT = 2.0  # shutdown + exit, then the process group is killed
_QUIET = ("window/logMessage", "window/showMessage", "$/progress", "telemetry/event", "$/typescriptVersion",
          "textDocument/semanticTokens/refresh", "experimental/serverStatus", "language/status")


@dataclass
class Published:
    version: int | None
    sequence: int  # the order it arrived in, across documents
    diagnostics: list[Any]


def _client_class():
    """pygls's client, imported when a server first starts (it costs a tenth of a second)."""
    from pygls.lsp.client import BaseLanguageClient

    class Client(BaseLanguageClient):
        on_exit: Callable[[int | None], None] = staticmethod(lambda code: None)
        on_garbled: Callable[[Exception], None] = staticmethod(lambda error: None)

        async def server_exit(self, server: Any) -> None:
            self.on_exit(server.returncode)

        def report_server_error(self, error: Exception, source: Any) -> None:
            self.on_garbled(error)  # a message that does not parse is dropped; its request would time out

    return Client


class LanguageServer:
    """One server for one language and root. ``launch`` is the command sandbox's ``Launch`` that
    starts it (the sandbox and the leash around ``command.argv``; its contract: spawned with its
    ``env`` and ``fds``, ``started()`` right after, ``finish()`` once the process has ended);
    ``on_gone(server)`` is told when it fails."""

    def __init__(self, language: str, command: ServerCommand, root: str, launch: Launch,
                 *, startup: float, on_gone: Callable[["LanguageServer"], None] = lambda s: None):
        self.language, self.command, self.root = language, command, root
        self.launch, self.startup, self.on_gone = launch, startup, on_gone
        self._finished = False
        self.state, self.reason = STARTING, ""
        self.started_at = self.last_used = time.monotonic()
        self.versions: dict[str, int] = {}  # uri -> the version last sent
        self.published: dict[str, Published] = {}
        self._sequence = 0
        self._changed = asyncio.Event()
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._client: Any = None
        self._stopping = False
        self._ready = detached(self._start())

    @property
    def name(self) -> str:
        return self.command.name

    @property
    def pid(self) -> int | None:
        server = getattr(self._client, "_server", None)
        return server.pid if server is not None else None

    async def ready(self, timeout: float) -> bool:
        """True once initialized; False when it failed or is still starting after ``timeout``.
        Asking counts as use: the idle reaper leaves it alone meanwhile."""
        self.last_used = time.monotonic()
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError, Exception):
            if self._ready.cancelled() and asyncio.current_task().cancelling():
                raise  # our own caller is being cancelled (Ctrl-C), not the start
        self.last_used = time.monotonic()
        return self.state == READY

    async def _start(self) -> None:
        from lsprotocol import types as t

        client = self._client = _client_class()("paicli", "1")
        client.on_exit = self._exited
        client.on_garbled = self._garbled
        self._handlers(client, t)
        launch = self.launch
        try:
            await client.start_io(*launch.argv, env=launch.env, cwd=self.root, start_new_session=True,
                                  pass_fds=launch.fds, preexec_fn=launch.preexec)
        except OSError as exc:
            self._finish_launch()
            return self._fail(f"无法启动: {exc.strerror or exc}")
        try:
            launch.started()  # our copies of the child's descriptors closed
        except OSError as exc:  # (a network launch's link failed: never the case for a server)
            self._fail(f"无法启动: {exc.strerror or exc}")
            return await self._kill()
        detached(self._drain(client._server.stderr))
        try:
            await asyncio.wait_for(client.initialize_async(self._init_params(t)), self.startup)
        except asyncio.TimeoutError:
            self._fail(f"{self.startup:.0f} 秒内没有响应 initialize")
            return await self._kill()
        except Exception as exc:  # the process ended, or answered with an error
            if self.state == STARTING:
                self._fail(self._why(str(exc)))
            return
        client.initialized(t.InitializedParams())
        if self.command.settings:
            client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings=self.command.settings))
        if self.state == STARTING:
            self.state, self.last_used = READY, time.monotonic()

    def _handlers(self, client: Any, t: Any) -> None:
        @client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: Any) -> None:
            self._sequence += 1
            self.published[params.uri] = Published(params.version, self._sequence, list(params.diagnostics))
            self._changed.set()

        @client.feature(t.WORKSPACE_CONFIGURATION)
        def configuration(params: Any) -> list[Any]:
            return [self._setting(item.section) for item in params.items]

        for method in (t.CLIENT_REGISTER_CAPABILITY, t.CLIENT_UNREGISTER_CAPABILITY, t.WINDOW_WORK_DONE_PROGRESS_CREATE,
                       t.WINDOW_SHOW_MESSAGE_REQUEST, t.WORKSPACE_WORKSPACE_FOLDERS):
            client.feature(method)(lambda params: None)
        for method in _QUIET:
            client.feature(method)(lambda params: None)

    def _setting(self, section: str | None) -> Any:
        value: Any = self.command.settings
        for part in (section or "").split(".") if section else ():
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def _init_params(self, t: Any) -> Any:
        uri = Path(self.root).as_uri()
        capabilities = t.ClientCapabilities(
            general=t.GeneralClientCapabilities(position_encodings=[t.PositionEncodingKind.Utf16]),
            workspace=t.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
            text_document=t.TextDocumentClientCapabilities(
                synchronization=t.TextDocumentSyncClientCapabilities(),
                publish_diagnostics=t.PublishDiagnosticsClientCapabilities(version_support=True),
                definition=t.DefinitionClientCapabilities(), references=t.ReferenceClientCapabilities()))
        # process_id None: a server that watches paicli's pid could not see it from inside the
        # sandbox's pid namespace, and would stop at once; the leash ends it with paicli instead.
        return t.InitializeParams(capabilities=capabilities, process_id=None, root_uri=uri,
                                  root_path=self.root, workspace_folders=[t.WorkspaceFolder(uri=uri, name=Path(self.root).name)],
                                  client_info=t.ClientInfo("paicli"))

    async def _drain(self, stream: Any) -> None:
        """Keep the last lines of stderr (why it failed), so the pipe never fills and stalls it."""
        while stream is not None and (line := await stream.readline()):
            text = line.decode("utf-8", "replace").strip()
            if text:
                self._stderr.append(text)

    def _why(self, default: str) -> str:
        last = next((line for line in reversed(self._stderr) if line), "")
        return f"{default}：{last[:200]}" if last else default

    def _finish_launch(self) -> None:
        """The launch's end, once: what it holds released (a read-only server has nothing to sweep)."""
        if not self._finished:
            self._finished = True
            self.launch.finish("", ok=False)

    def _exited(self, code: int | None) -> None:
        self._finish_launch()
        if self._stopping:
            self.state = STOPPED
            return
        if self.state in (STARTING, READY):  # not after a failure already named (a start-up timeout)
            self._fail(self._why(f"进程意外退出（状态 {code}）"))

    def _garbled(self, error: Exception) -> None:
        """Before it is ready, an answer paicli cannot read is the answer to ``initialize``."""
        if self.state == STARTING:
            self._fail(f"无法解析它对 initialize 的回复（{type(error.__cause__ or error).__name__}）")

    def _fail(self, reason: str) -> None:
        self.state, self.reason = FAILED, reason
        self._changed.set()
        if not self._ready.done() and self._ready is not asyncio.current_task():
            self._ready.cancel()  # a request the dead process will never answer: stop waiting for it
        self.on_gone(self)

    # -- documents --------------------------------------------------------------------------
    def sync(self, path: str, text: str) -> tuple[str, int]:
        """Open ``path`` (absolute) with ``text``, or send its new text; (uri, version)."""
        from lsprotocol import types as t

        from paicli.tools.lsp.languages import language_id

        uri = Path(path).as_uri()
        version = self.versions.get(uri, 0) + 1
        self.versions[uri] = version
        self.last_used = time.monotonic()
        if version == 1:
            item = t.TextDocumentItem(uri=uri, language_id=language_id(path), version=version, text=text)
            self._client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=item))
        else:
            change = t.TextDocumentContentChangeWholeDocument(text=text)
            document = t.VersionedTextDocumentIdentifier(uri=uri, version=version)
            self._client.text_document_did_change(t.DidChangeTextDocumentParams(text_document=document, content_changes=[change]))
        return uri, version

    async def diagnostics(self, uri: str, version: int, after: int, timeout: float) -> list[Any] | None:
        """The diagnostics of ``uri`` for ``version`` (or, from a server that does not say which
        version, the first set after event ``after``, plus a fuller one within SETTLE); None
        when none came within ``timeout`` or the server failed."""
        started = time.monotonic()
        deadline = started + timeout
        while (found := self._current(uri, version, after)) is None:
            if not await self._wait_change(deadline):
                return None
        if found.version is None:
            # Unversioned sets may come in parts (typescript-language-server publishes tsserver's
            # syntax, then semantic, then suggestion diagnostics): take the last one before the
            # server stays quiet a while, longer when it was slow to send the first.
            quiet = min(SETTLE_MOST, max(SETTLE, (time.monotonic() - started) / 4))
            while await self._wait_change(min(deadline, time.monotonic() + quiet)):
                pass
            found = self._current(uri, version, after) or found
        return found.diagnostics

    def mark(self) -> int:
        """The sequence number before a change: what arrives after it is about the change."""
        return self._sequence

    def _current(self, uri: str, version: int, after: int) -> Published | None:
        if self.state != READY:
            return None
        found = self.published.get(uri)
        if found is None or found.sequence <= after:
            return None
        return found if found.version is None or found.version >= version else None

    async def _wait_change(self, deadline: float) -> bool:
        left = deadline - time.monotonic()
        if left <= 0 or self.state != READY:
            return False
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), left)
        except asyncio.TimeoutError:
            return False
        return self.state == READY

    # -- navigation --------------------------------------------------------------------------
    async def request(self, method: str, params: Any, timeout: float, unanswered: Any = None) -> Any:
        """One request by method name: the server's answer (None for its ``null``), or
        ``unanswered`` on a timeout, an error, or a server that is not ready."""
        if self.state != READY:
            return unanswered
        self.last_used = time.monotonic()
        try:
            return await asyncio.wait_for(self._client.protocol.send_request_async(method, params), timeout)
        except Exception:
            return unanswered

    # -- the end -----------------------------------------------------------------------------
    async def stop(self) -> None:
        """``shutdown`` and ``exit`` within STOP_WAIT, then the process group is killed."""
        self._stopping = True
        if not self._ready.done():
            self._ready.cancel()
        client, server = self._client, getattr(self._client, "_server", None)
        if server is not None and server.returncode is None and self.state == READY:
            try:
                await asyncio.wait_for(client.shutdown_async(None), STOP_WAIT / 2)
                client.exit(None)
                await asyncio.wait_for(server.wait(), STOP_WAIT / 2)
            except Exception:
                pass
        await self._kill()
        if client is not None:
            client._stop_event.set()
            for task in list(client._async_tasks):
                task.cancel()
        if self.state != FAILED:
            self.state = STOPPED

    async def _kill(self) -> None:
        server = getattr(self._client, "_server", None)
        if server is None or server.returncode is not None:
            return
        try:
            os.killpg(server.pid, signal.SIGKILL)  # its own session: the group is the server's
        except (ProcessLookupError, PermissionError):
            pass
        try:
            await asyncio.wait_for(server.wait(), STOP_WAIT)
        except asyncio.TimeoutError:
            return
        self._finish_launch()


def detached(coro: Any) -> asyncio.Task:
    """A task of the server's own, in an empty context: one started from a graph node would
    otherwise carry that run's config (its checkpointer, its stream) for as long as the server
    lives."""
    return asyncio.get_running_loop().create_task(coro, context=contextvars.Context())


def quiet_pygls() -> None:
    """pygls logs every message it cannot use; paicli names a failed server once, itself."""
    logging.getLogger("pygls").setLevel(logging.CRITICAL + 1)
