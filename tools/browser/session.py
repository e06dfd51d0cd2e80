"""The session's browser (paicli issue 40): which mode it is in, the pages it has seen, which of
them the agent opened, the lease, and switching between isolated and shared.

``McpServers`` runs the server (``paicli.tools.browser.launch`` made its configuration); this object
watches every call of its tools (``wrap``): the page list the server prints after a navigation
tells it each page's id, title and URL, and in shared mode which pages the agent opened
(``new_page``). The turn policy reads that through ``view`` (``paicli.tools.browser.rules``). In shared
mode the page list the model reads leaves out the user's own tabs, except for the tools that
list or select tabs, which are offered only when the user asked about their tabs (o.4).

``connect`` / ``disconnect`` restart the server in the other mode. The user's Chrome is found by
its debugging port (``/json/version`` answers on 127.0.0.1), or, without a port, by the
``DevToolsActivePort`` file a running Chrome writes in its profile folder (Chrome started with
``--remote-debugging-port``, or with remote debugging allowed at ``chrome://inspect``).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

from paicli.tools.base import ToolContext, ToolSpec, ToolText
from paicli.tools.browser.launch import BrowserOptions, isolated_config, remove_profile, shared_config, sweep_profiles
from paicli.tools.browser.lease import BrowserLease
from paicli.tools.browser.names import CHROME_DEVTOOLS, NEW_PAGE, SESSION, action_of
from paicli.tools.browser.rules import BrowserView, Page
from paicli.tools.browser.sensitive import SensitivePages

PAGE_LINE = re.compile(r"^(\d+): (.*?)(?: \((\S+)\))?( \[selected\])?\s*$")
SNAPSHOT_ROOT = re.compile(r'RootWebArea "(.*?)"(?: url="(\S*)")?')
PROBE_TIMEOUT = 2.0
READY_TIMEOUT = 40.0  # a restarted server answers initialize and tools/list (paicli.tools.mcp.servers: 30 s)
HIDDEN_TABS = "（另有 {n} 个标签页是用户自己的，未列出；用户要求查看标签页时才会列出）"
CONNECTED = ("✅ 已连接到你的 Chrome（{endpoint}）：共享模式下你的标签页对 Agent 只读，Agent 用 new_page 打开的页面才能操作；"
             "/browser disconnect 回到隔离模式")
DISCONNECTED = "✅ 已断开你的 Chrome，浏览器回到隔离模式（无头浏览器，临时配置目录）"
NOT_SHARED = "浏览器当前就是隔离模式，没有连接你的 Chrome"
SHARED_OFF = "PAICLI_BROWSER={mode}：不允许连接你自己的 Chrome（设置 PAICLI_BROWSER=shared 后可用）"
NOT_RUNNING = "浏览器 server 未在运行（PAICLI_BROWSER=off 或缺少 Chromium / chrome-devtools-mcp，/browser 查看原因）"
NO_PORT_FILE = ("没有找到正在运行、开启了远程调试的 Chrome（未找到 DevToolsActivePort）：在 Chrome 的 chrome://inspect/#remote-debugging "
                "允许远程调试，或用 --remote-debugging-port=9222 启动 Chrome 后执行 /browser connect 9222")
START_HINT = ("用远程调试端口启动 Chrome 后重试：macOS: open -a 'Google Chrome' --args --remote-debugging-port={port}；"
              "Linux: google-chrome --remote-debugging-port={port}；Windows: chrome.exe --remote-debugging-port={port}")


class ConnectError(Exception):
    """Why the user's Chrome could not be reached; the server keeps its configuration."""


class BrowserSession:
    def __init__(self, options: BrowserOptions, servers: Any = None):
        self.options, self.servers = options, servers  # servers: paicli.tools.mcp.servers.McpServers
        self.lease = BrowserLease()
        self.sensitive = SensitivePages(options.home / "sensitive_patterns.txt" if options.home else None)
        self.shared = False
        self.endpoint = ""
        self._pages: dict[str, Page] = {}
        self._selected: str | None = None
        self._lock = threading.Lock()
        if options.enabled:
            sweep_profiles(options)

    # -- what the policy reads -----------------------------------------------------------------
    def view(self) -> BrowserView:
        with self._lock:
            return BrowserView(self.shared, tuple(self._pages.values()), self._selected, self.sensitive)

    # -- watching the server's tools ------------------------------------------------------------
    def wrap(self, specs: dict[str, ToolSpec]) -> dict[str, ToolSpec]:
        """The browser server's tools, each watched by ``record``; other specs as they are."""
        return {name: self._watched(spec) if spec.extra.get("mcp_server") == CHROME_DEVTOOLS else spec
                for name, spec in specs.items()}

    def _watched(self, spec: ToolSpec) -> ToolSpec:
        run = spec.fn

        async def watched(args: dict[str, Any], ctx: ToolContext) -> Any:
            result = await run(args, ctx)
            text = self.record(spec.name, args, getattr(result, "ok", True), str(result))
            return result if text == str(result) else ToolText(text, getattr(result, "artifact", None),
                                                                 ok=getattr(result, "ok", True))

        return replace(spec, fn=watched)

    def record(self, name: str, args: dict[str, Any], ok: bool, text: str) -> str:
        """Learn from one finished call; returns the text the model reads (in shared mode, the
        page list without the user's own tabs, unless the call was about tabs)."""
        if not ok:
            return text
        action = action_of(name)
        listed = _page_lines(text)
        with self._lock:
            if listed:
                known = dict(self._pages)
                self._pages = {}
                for page_id, title, url, selected in listed:
                    before = known.get(page_id)
                    owned = (not self.shared) or (before is not None and before.owned) or (
                        action in NEW_PAGE and selected)
                    self._pages[page_id] = Page(page_id, url, title, owned)
                    if selected:
                        self._selected = page_id
            page_id = str(args.get("pageId")) if isinstance(args, dict) and args.get("pageId") is not None else None
            root = SNAPSHOT_ROOT.search(text) if page_id else None
            if root and page_id in self._pages:
                page = self._pages[page_id]
                self._pages[page_id] = replace(page, title=root.group(1), url=root.group(2) or page.url)
            if not self.shared or not listed or action in SESSION:
                return text
            return self._without_user_tabs(text)

    def _without_user_tabs(self, text: str) -> str:
        kept, hidden = [], 0
        for line in text.splitlines():
            match = PAGE_LINE.match(line)
            if match and not self._pages.get(match.group(1), Page("")).owned:
                hidden += 1
                continue
            kept.append(line)
        return "\n".join(kept + ([HIDDEN_TABS.format(n=hidden)] if hidden else []))

    # -- switching modes -----------------------------------------------------------------------
    async def connect(self, port: int | None = None) -> str:
        """Hand the browser tools the user's running Chrome; raises ``ConnectError`` (nothing changed)."""
        if not self.options.shared_allowed:
            raise ConnectError(SHARED_OFF.format(mode=self.options.mode))
        if not self._running():
            raise ConnectError(NOT_RUNNING)
        endpoint = await asyncio.to_thread(find_endpoint, port, self.options.search_dirs)
        await self._switch(shared_config(self.options, endpoint), shared=True, endpoint=endpoint)
        return CONNECTED.format(endpoint=endpoint)

    async def disconnect(self) -> str:
        if not self.shared:
            return NOT_SHARED
        await self._switch(isolated_config(self.options), shared=False, endpoint="")
        return DISCONNECTED

    async def _switch(self, config: Any, *, shared: bool, endpoint: str) -> None:
        before = self.servers.servers[CHROME_DEVTOOLS].config
        await asyncio.to_thread(self.servers.reconfigure, CHROME_DEVTOOLS, config)
        error = await self._ready()
        if error is not None:  # back to what ran before, and say why
            await asyncio.to_thread(self.servers.reconfigure, CHROME_DEVTOOLS, before)
            raise ConnectError(f"浏览器 server 在新模式下没有启动：{error}")
        with self._lock:
            self.shared, self.endpoint = shared, endpoint
            self._pages, self._selected = {}, None

    async def _ready(self) -> str | None:
        state = self.servers.servers[CHROME_DEVTOOLS]
        deadline = time.monotonic() + READY_TIMEOUT
        while state.status == "starting" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if state.status == "ready":
            return None
        return state.error or state.status

    def _running(self) -> bool:
        return self.servers is not None and CHROME_DEVTOOLS in self.servers.servers

    def server_state(self) -> tuple[str, str]:
        """(status, error) of the browser server: starting, ready, failed… ("", "") when not configured."""
        if not self._running():
            return "", ""
        state = self.servers.servers[CHROME_DEVTOOLS]
        return state.status, state.error

    # -- what a person and the model read ------------------------------------------------------
    def status_lines(self) -> list[str]:
        status, error = self.server_state()
        view = self.view()
        if self.shared:
            lines = [f"浏览器模式: shared（已连接你的 Chrome: {self.endpoint}；你的标签页只读）"]
        else:
            lines = [f"浏览器模式: isolated（无头浏览器 {self.options.executable}，临时配置目录 {self.options.profile}）"]
        lines.append(f"浏览器 server: {status or '未配置'}" + (f"（{error}）" if error else ""))
        owned = [p for p in view.pages if p.owned]
        for page in owned:
            mark = " [selected]" if page.id == view.selected else ""
            lines.append(f"  {page.id}: {page.title} ({page.url}){mark}")
        others = len(view.pages) - len(owned)
        if others:
            lines.append(f"  另有 {others} 个标签页是用户自己的（/browser tabs 查看）")
        if not view.pages:
            lines.append("  还没有打开的页面")
        return lines

    def close(self) -> None:
        """At exit, after the servers stopped: the throwaway profile goes."""
        remove_profile(self.options)


def _page_lines(text: str) -> list[tuple[str, str, str, bool]]:
    """The ``## Pages`` list of a result: (id, title, url, selected) per page."""
    if "## Pages" not in text:
        return []
    block = text.split("## Pages", 1)[1].splitlines()[1:]
    pages = []
    for line in block:
        match = PAGE_LINE.match(line.strip())
        if not match:
            if line.startswith("#"):
                break
            continue
        title, url = match.group(2), match.group(3)
        pages.append((match.group(1), title if url else "", url or title, bool(match.group(4))))
    return pages


def find_endpoint(port: int | None, search_dirs: tuple[Path, ...]) -> str:
    """Where the user's Chrome debugs: ``http://127.0.0.1:<port>`` once ``/json/version``
    answers there, else the ``ws://`` endpoint of the first ``DevToolsActivePort`` found."""
    if port is not None:
        if not 1024 <= port <= 65535:
            raise ConnectError("端口必须在 1024-65535 之间")
        url = f"http://127.0.0.1:{port}"
        try:
            with urllib.request.urlopen(f"{url}/json/version", timeout=PROBE_TIMEOUT) as response:
                json.loads(response.read().decode("utf-8", "replace"))
        except (OSError, ValueError) as exc:
            raise ConnectError(f"127.0.0.1:{port} 上没有可连接的 Chrome 调试端口（{exc}）。{START_HINT.format(port=port)}") from None
        return url
    for folder in search_dirs:
        try:
            lines = (folder / "DevToolsActivePort").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].startswith("/devtools/browser/"):
            return f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}"
    raise ConnectError(NO_PORT_FILE)
