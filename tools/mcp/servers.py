"""The MCP servers of one process: started in the background, watched, restarted.

The servers live on an event loop of their own, in a daemon thread, so neither the REPL's
prompt nor ``paicli --help`` waits for them, and the MCP libraries are imported there, after
start-up. Each server is one task that holds its session open (``connect.open_session``),
lists its tools through ``langchain_mcp_adapters.tools.load_mcp_tools`` and waits to be
stopped. ``on_change`` receives the tool specs whenever a server becomes ready or goes away;
the session swaps its tool table (one attribute assignment, so a reader sees the old table or
the new one). A server that announced ``resources`` also gets the two resource tools
(``paicli.tools.mcp.resource_tools``). A tool of a server that died stays advertised and answers
``MCP 工具调用失败: …`` with the fix (``/mcp restart``), so the model learns why.

States: starting, ready, failed, untrusted (a project server not trusted for this entry),
disabled (``"disabled": true`` or ``/mcp disable``, for this process), unhealthy (a call to it
timed out, issue 41: every later call fails at once with that reason, instead of waiting the full
timeout again, until ``/mcp restart``).

A server that failed (or went unhealthy) is said once in each session's run that follows
(``unreported``: ``Deps.notices``, the model call's notice), so a Studio run knows why a server's
tools are missing or failing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from paicli.tools.base import ToolSpec, ToolText, failed
from paicli.tools.mcp.adapter import content_text, tool_spec
from paicli.tools.mcp.config import McpSetup, ServerConfig
from paicli.tools.mcp.connect import ServerLog, describe_error, open_session
from paicli.tools.mcp.requests import Unavailable
from paicli.tools.mcp.trust import TrustStore

START_TIMEOUT = 30.0  # seconds a server has to answer initialize and tools/list
CLOSE_WAIT = 3.0


@dataclass
class ServerState:
    config: ServerConfig
    status: str = "starting"
    error: str = ""
    tools: dict[str, Any] = field(default_factory=dict)  # MCP tool name -> LangChain tool
    specs: dict[str, ToolSpec] = field(default_factory=dict)
    session: Any = None  # the live ClientSession while ready (resources, prompts)
    stop: Any = None  # asyncio.Event on the servers' loop
    task: Any = None  # its concurrent future
    running: Any = None  # the asyncio task of ``_serve`` on the servers' loop, to cancel at close


class McpServers:
    def __init__(self, setup: McpSetup, root: Path, on_change: Callable[[dict[str, ToolSpec]], None] | None = None):
        self.setup, self.root, self.on_change = setup, root, on_change
        self.trust = TrustStore(setup.state_dir / "trust.json" if setup.state_dir else None, str(root))
        self.servers = {c.name: ServerState(c) for c in setup.servers}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started_at = 0.0
        self._reported: dict[str, set[tuple[str, str, str]]] = {}  # session -> (server, status, error) said

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Launch every trusted, enabled server in the background; returns at once."""
        for state in self.servers.values():
            if state.config.disabled:
                state.status = "disabled"
            elif not self.trust.trusted(state.config):
                state.status = "untrusted"
        if not any(s.status == "starting" for s in self.servers.values()):
            return
        for state in self.servers.values():
            if state.status == "starting":
                self._launch(state)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=self._loop.run_forever, name="paicli-mcp", daemon=True).start()
        return self._loop

    def _launch(self, state: ServerState) -> None:
        self._started_at = time.monotonic()  # the next turn waits for it as for a first start
        state.status, state.error = "starting", ""
        state.task = asyncio.run_coroutine_threadsafe(self._serve(state), self._ensure_loop())

    async def _serve(self, state: ServerState) -> None:
        """Hold the server's session until it is stopped. Nothing here blocks the servers' loop
        (``langgraph dev`` refuses a blocking call on any event loop of its process, issue 41):
        the log file is opened and written in a worker thread."""
        from langchain_mcp_adapters.tools import load_mcp_tools

        name, log = state.config.name, ServerLog(self.setup.state_dir, state.config.name)
        state.stop, state.running = asyncio.Event(), asyncio.current_task()
        timer = asyncio.get_running_loop().call_later(START_TIMEOUT, _timeout, state, asyncio.current_task())
        try:
            await _note(log, f"启动 {state.config.describe()}")
            errlog = await asyncio.to_thread(log.open)
            try:
                async with open_session(state.config, self.root, errlog) as session:
                    from paicli.tools.mcp.resource_links import keep_resource_links  # issue 39: links keep URI and name

                    tools = await load_mcp_tools(session, server_name=name, handle_tool_errors=False,
                                                 tool_interceptors=[keep_resource_links])
                    timer.cancel()
                    state.session = session
                    self._ready(state, tools)
                    await state.stop.wait()
            finally:
                await asyncio.to_thread(errlog.close)
        except asyncio.CancelledError:
            await self._failed(state, state.error or "已停止", log)
            if state.error != f"启动超时（{START_TIMEOUT:g} 秒）":
                raise
        except BaseException as exc:  # noqa: BLE001 - a server's failure is its state, never ours
            await self._failed(state, describe_error(exc), log)
        finally:
            timer.cancel()
            state.session = None
        if state.status == "ready":  # stopped on purpose
            await _note(log, "已停止")

    def _ready(self, state: ServerState, tools: list[Any]) -> None:
        specs: dict[str, ToolSpec] = {}
        for tool in tools:
            spec = tool_spec(state.config.name, tool, self.call)
            specs.setdefault(spec.name, spec)  # two names the same after sanitising: the first wins
        capabilities = state.session.get_server_capabilities() if state.session is not None else None
        if capabilities is not None and capabilities.resources is not None:
            from paicli.tools.mcp.resource_tools import resource_specs

            for name, spec in resource_specs(state.config.name, self).items():
                specs.setdefault(name, spec)  # the server's own tool of that name wins
        state.tools = {tool.name: tool for tool in tools}
        state.specs, state.status = specs, "ready"
        self._changed()

    async def _failed(self, state: ServerState, error: str, log: ServerLog) -> None:
        if state.status in ("disabled", "ready") and state.stop is not None and state.stop.is_set():
            return  # stopped on purpose (disable, restart, exit)
        state.status, state.error = "failed", state.error or error
        self._changed()
        await _note(log, f"失败: {state.error}")

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.specs())

    def _stop(self, state: ServerState) -> None:
        self._end_now([state])

    def _end_now(self, states: list[ServerState]) -> None:
        """``_end`` on the servers' loop, waited for from this (another) thread."""
        if self._loop is None:
            return
        ending = asyncio.run_coroutine_threadsafe(self._end(states), self._loop)
        try:
            ending.result(timeout=2 * CLOSE_WAIT + 1)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            pass

    def close(self) -> None:
        """Stop every server, then the loop. A ready server's session closes (its process ends
        with it); one still starting, or hung in its start (issue 41), is cancelled, and the SDK
        ends its process as the cancellation unwinds. Whatever outlives that, and a paicli killed
        before it could close them, is ended by the leash (``tools/leash.py``)."""
        if self._loop is None:
            return
        self._end_now(list(self.servers.values()))
        # the worker threads of the log writes (asyncio.to_thread) end with the loop
        ending = asyncio.run_coroutine_threadsafe(self._loop.shutdown_default_executor(), self._loop)
        try:
            ending.result(timeout=CLOSE_WAIT)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)

    async def _end(self, states: list[ServerState]) -> None:
        """Stop ``states``' servers: a ready one's session closes when its stop event is set; one
        that is still starting (or hangs in its start) is cancelled after CLOSE_WAIT."""
        running = [s.running for s in states if s.running is not None and not s.running.done()]
        for state in states:
            if state.stop is not None:
                state.stop.set()
        if not running:
            return
        _, left = await asyncio.wait(running, timeout=CLOSE_WAIT)
        for task in left:  # still starting: nothing waits on its stop event
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=CLOSE_WAIT)

    async def wait_started(self) -> None:
        """Before a turn: wait for servers still starting, until the startup wait since launch."""
        deadline = self._started_at + self.setup.startup_wait
        while any(s.status == "starting" for s in self.servers.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    # -- /mcp ------------------------------------------------------------------------------
    def restart(self, name: str) -> None:
        state = self.servers[name]
        self._stop(state)
        self._launch(state)

    def reconfigure(self, name: str, config: ServerConfig) -> None:
        """Start ``name`` again under another configuration (the browser's isolated and shared
        modes, ``paicli.tools.browser.session``); blocks until the old one stopped (``CLOSE_WAIT``)."""
        state = self.servers[name]
        self._stop(state)
        state.config = config
        self._launch(state)

    def disable(self, name: str) -> None:
        state = self.servers[name]
        state.status = "disabled"
        self._stop(state)
        state.specs = {}
        self._changed()

    def enable(self, name: str) -> None:
        state = self.servers[name]
        if self.trust.trusted(state.config):
            self._launch(state)
        else:
            state.status = "untrusted"

    def trust_server(self, name: str, start: bool) -> None:
        state = self.servers[name]
        self.trust.trust(state.config)
        if start and state.status in ("untrusted", "failed", "unhealthy"):
            self._launch(state)

    def logs(self, name: str) -> list[str]:
        return ServerLog(self.setup.state_dir, name).tail()

    def counts(self) -> tuple[int, int]:
        """(ready, configured and not disabled), for ``MCP <ready>/<total>`` (reference u.4)."""
        live = [s for s in self.servers.values() if s.status != "disabled"]
        return sum(1 for s in live if s.status == "ready"), len(live)

    def status_label(self) -> str:
        ready, total = self.counts()
        return f"MCP {ready}/{total}" if total else "MCP 0"

    def specs(self) -> dict[str, ToolSpec]:
        return {name: spec for s in self.servers.values() if s.status != "disabled" for name, spec in s.specs.items()}

    # -- calls -----------------------------------------------------------------------------
    async def on_session(self, server: str, request: Callable[[Any], Awaitable[Any]]) -> Any:
        """``request(session)`` run on the servers' loop within the call timeout; ``Unavailable``
        when the server is not ready, times out or the request fails (its message says why)."""
        state = self.servers.get(server)
        if state is None or state.status != "ready" or state.session is None or self._loop is None:
            raise Unavailable(unavailable_reason(server, state))
        timeout = self.setup.call_timeout
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(request(state.session), timeout), self._loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.TimeoutError:
            reason = f"超过 {timeout:g} 秒未响应"
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._unhealthy(state, reason), self._loop))
            raise Unavailable(f"MCP server {server} {reason}，已标记为无响应（/mcp restart {server} 重启）") from None
        except Unavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - the server's error, told as one line
            raise Unavailable(f"MCP server {server} 返回错误: {describe_error(exc)}") from None

    async def call(self, server: str, tool: str, args: dict[str, Any]) -> ToolText:
        """One tool call, run on the servers' loop; every failure is a typed failed result."""
        state = self.servers.get(server)
        if state is None or state.status != "ready" or self._loop is None:
            status = state.status if state else "未配置"
            detail = f"：{state.error}" if state and state.error else ""
            return failed(f"MCP 工具调用失败: server {server} 当前不可用（{status}{detail}），"
                          f"用户可用 /mcp restart {server} 重启")
        future = asyncio.run_coroutine_threadsafe(self._call(state, tool, args), self._loop)
        return await asyncio.wrap_future(future)

    async def _call(self, state: ServerState, tool: str, args: dict[str, Any]) -> ToolText:
        from langchain_core.tools import ToolException

        name, timeout = state.config.name, self.setup.call_timeout
        try:
            content = await asyncio.wait_for(state.tools[tool].ainvoke(args), timeout)
        except asyncio.TimeoutError:
            await self._unhealthy(state, f"{tool} 超过 {timeout:g} 秒未返回")
            return failed(f"MCP 工具调用失败: {name}.{tool} 超过 {timeout:g} 秒未返回，已放弃本次调用；"
                          f"server {name} 已标记为无响应，之后的调用会立即失败，用户可用 /mcp restart {name} 重启")
        except ToolException as exc:  # the server answered isError: the tool failed, the server is fine
            return failed(f"MCP 工具返回错误: {exc}")
        except Exception as exc:  # noqa: BLE001 - a broken connection: the server is gone
            error = describe_error(exc)
            state.status, state.error = "failed", error
            state.stop.set()
            self._changed()
            await _note(ServerLog(self.setup.state_dir, name), f"失败: {error}")
            return failed(f"MCP 工具调用失败: {name}.{tool}: {error}（server 已断开，用户可用 /mcp restart {name} 重启）")
        return ToolText(content_text(content))


    async def _unhealthy(self, state: ServerState, reason: str) -> None:
        """A call timed out: the server may be stuck, and every later call would wait as long
        (issue 41). It is marked, and answers at once with the reason until restarted."""
        state.status, state.error = "unhealthy", reason
        self._changed()
        await _note(ServerLog(self.setup.state_dir, state.config.name), f"无响应: {reason}")

    async def unreported(self, session: str) -> list[str]:
        """After the start-up wait for servers still starting, one line per server that failed or
        went unhealthy since ``session`` was last told."""
        await self.wait_started()
        told, lines = self._reported.setdefault(session, set()), []
        for name, state in self.servers.items():
            if state.status in ("failed", "unhealthy") and (key := (name, state.status, state.error)) not in told:
                told.add(key)
                lines.append(problem_line(name, state))
        return lines


async def _note(log: ServerLog, text: str) -> None:
    """A line in the server's log, written in a worker thread; a log is best effort, and its
    failure must not become the server's (nor escape the task unseen)."""
    try:
        await asyncio.to_thread(log.note, text)
    except Exception:  # noqa: BLE001
        pass


def problem_line(server: str, state: ServerState) -> str:
    what = "无响应" if state.status == "unhealthy" else "启动失败或已断开"
    return f"⚠️ MCP server {server} {what}：{state.error}（它的工具暂不可用；/mcp restart {server} 重启）"


def unavailable_reason(server: str, state: ServerState | None) -> str:
    if state is None:
        return f"未找到 MCP server: {server}（/mcp 查看已配置的 server）"
    if state.status == "untrusted":
        return f"MCP server {server} 来自项目的 .mcp.json，尚未信任（/mcp trust {server}）"
    detail = f"：{state.error}" if state.error else ""
    return f"MCP server {server} 当前不可用（{state.status}{detail}），可用 /mcp restart {server} 重启"


def _timeout(state: ServerState, task: asyncio.Task) -> None:
    state.error = f"启动超时（{START_TIMEOUT:g} 秒）"
    task.cancel()
