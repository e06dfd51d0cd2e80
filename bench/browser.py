"""What the browser costs (issue 40), against baselines measured in the same run.

``python bench/browser.py [--runs N]`` prints:

1. Per model call, when the browser is off: the turn policy's work for one call
   (``paicli.nodes.core.policy.decision_context``: classify (cached), expose, the browser state) on a
   realistic turn, with the built-in tool table (``PAICLI_BROWSER=off``), against the same with the
   browser on (the ``browser_*`` tools and 26 chrome-devtools tool specs in the table, a page open).
   The off row's ``browser_state`` share is what the browser adds to a turn that has none.
2. Per turn: ``classify`` of the submitted text, and its browser part (``browser_turn``) alone.
3. Start-up of the isolated browser server, from ``McpServers.start()`` to ready (initialize and
   tools/list) and to a first page opened on 127.0.0.1, against the test suite's small stdio MCP
   server (``tests/support/mcp_server.py``) started the same way. Needs Chromium and
   chrome-devtools-mcp (``PAICLI_BROWSER_MCP`` or ``PAICLI_TEST_BROWSER_MCP``); skipped otherwise.

Benchmarks print; they never fail.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402

from paicli.nodes.core import policy  # noqa: E402
from paicli.nodes.core.state import Deps, RunContext  # noqa: E402
from tests.support.scripted_model import ScriptedChatModel  # noqa: E402
from tests.support.web_server import FakeWebServer, Page  # noqa: E402
from paicli.tools.base import ToolSpec  # noqa: E402
from paicli.tools.boundary import wrap  # noqa: E402
from paicli.tools.browser.facts import mcp_facts  # noqa: E402
from paicli.tools.browser.intent import browser_turn  # noqa: E402
from paicli.tools.browser.launch import browser_options, isolated_config  # noqa: E402
from paicli.tools.browser.session import BrowserSession  # noqa: E402
from paicli.tools.browser.tools import browser_specs  # noqa: E402
from paicli.tools.mcp.config import McpSetup, ServerConfig  # noqa: E402
from paicli.tools.mcp.servers import McpServers  # noqa: E402
from paicli.tools.policy.classify import classify  # noqa: E402

TEXT = "读一下 src/app.py，修复 add 函数里的减号，然后跑一下测试确认"
CHROME_TOOLS = ["click", "close_page", "drag", "fill", "fill_form", "get_console_message", "get_network_request",
                "handle_dialog", "hover", "list_console_messages", "list_network_requests", "list_pages",
                "navigate_page", "new_page", "press_key", "resize_page", "select_page", "take_screenshot",
                "take_snapshot", "type_text", "upload_file", "wait_for", "evaluate_script", "get_css_styles",
                "lighthouse_audit", "screencast_start"]


def state(rounds: int = 6) -> dict:
    messages = [HumanMessage(TEXT)]
    for i in range(rounds):
        call = {"name": "read_file", "args": {"path": f"f{i}.py"}, "id": f"c{i}", "type": "tool_call"}
        messages += [AIMessage("", tool_calls=[call]), ToolMessage(wrap("read_file", "x" * 400), tool_call_id=f"c{i}",
                                                                   name="read_file")]
    return {"messages": messages, "external_sources": []}


def browser_deps(home: Path) -> Deps:
    deps = Deps(model=ScriptedChatModel([]))
    options = browser_options({"PAICLI_BROWSER": "shared"}, home)
    session = BrowserSession(options)
    deps.browser = session
    deps.tools = {**deps.tools, **browser_specs(session)}
    for tool in CHROME_TOOLS:
        name = f"mcp__chrome-devtools__{tool}"
        deps.tools[name] = ToolSpec(name, "browser tool", {"type": "object", "properties": {}}, None,
                                    facts=mcp_facts("chrome-devtools", tool), extra={"mcp_server": "chrome-devtools"})
    session.record("mcp__chrome-devtools__new_page", {"url": "x"}, True, "## Pages\n1: a (http://a.io) [selected]")
    return deps


def per_call(deps: Deps, st: dict, n: int) -> tuple[float, float]:
    ctx = RunContext(project_root=os.getcwd())
    policy.decision_context(st, ctx, deps)  # warm the classify cache, as the turn's first call does
    started = time.perf_counter()
    for _ in range(n):
        policy.decision_context(st, ctx, deps)
    total = (time.perf_counter() - started) / n
    messages = st["messages"]
    started = time.perf_counter()
    for _ in range(n):
        policy.browser_state(messages, deps)
    return total, (time.perf_counter() - started) / n


def per_turn(n: int) -> tuple[float, float]:
    started = time.perf_counter()
    for i in range(n):
        classify(f"{TEXT} {i}")
    whole = (time.perf_counter() - started) / n
    started = time.perf_counter()
    for i in range(n):
        browser_turn(f"{TEXT} {i}")
    return whole, (time.perf_counter() - started) / n


async def start_server(config: ServerConfig, root: Path, page_url: str | None) -> tuple[float, float | None]:
    servers = McpServers(McpSetup(servers=(config,), state_dir=None), root)
    started = time.monotonic()
    servers.start()
    state = servers.servers[config.name]
    while state.status == "starting":
        await asyncio.sleep(0.005)
    ready = time.monotonic() - started
    if state.status != "ready":
        servers.close()
        raise RuntimeError(f"{config.name}: {state.error}")
    opened = None
    if page_url is not None:
        result = await servers.call(config.name, "new_page", {"url": page_url})
        opened = time.monotonic() - started
        assert "页面" in str(result) or "Pages" in str(result), str(result)[:200]
    servers.close()
    return ready, opened


def server_rows(runs: int, root: Path) -> list[str]:
    env = dict(os.environ)
    given = env.get("PAICLI_BROWSER_MCP") or env.get("PAICLI_TEST_BROWSER_MCP") or ""
    with tempfile.TemporaryDirectory(prefix="paicli-bench-browser-") as home:
        options = browser_options({"PAICLI_BROWSER": "isolated", "PAICLI_BROWSER_MCP": given}, Path(home), env)
        if options.problem:
            return [f"  (skipped: {options.problem})"]
        demo = ServerConfig("demo", "user", "stdio", sys.executable,
                            (str(Path(__file__).resolve().parents[1] / "tests" / "support" / "mcp_server.py"),))
        with FakeWebServer(pages={"/p": Page("<title>bench</title><p>hi</p>")}) as web:
            demo_ready, browser_ready, browser_open = [], [], []
            for i in range(runs):
                demo_ready.append(asyncio.run(start_server(demo, root, None))[0])
                profile = Path(home) / f"profile-{i}"
                config = isolated_config(options.__class__(**{**options.__dict__, "profile": profile}))
                ready, opened = asyncio.run(start_server(config, root, web.url("/p")))
                browser_ready.append(ready)
                browser_open.append(opened)
    med = statistics.median
    return [f"  demo MCP server ready              {med(demo_ready) * 1000:8.0f} ms  (baseline)",
            f"  browser server ready               {med(browser_ready) * 1000:8.0f} ms  "
            f"({med(browser_ready) / med(demo_ready):.1f}x the baseline)",
            f"  browser server + first page opened {med(browser_open) * 1000:8.0f} ms  "
            f"({med(browser_open) / med(demo_ready):.1f}x the baseline)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="server start-ups per row (default 3)")
    parser.add_argument("--calls", type=int, default=2000, help="policy calls per row (default 2000)")
    args = parser.parse_args()
    st = state()
    off = Deps(model=ScriptedChatModel([]))
    with tempfile.TemporaryDirectory(prefix="paicli-bench-browser-") as home:
        on = browser_deps(Path(home))
        rows = []
        for _ in range(3):  # interleaved, best of three
            rows.append((per_call(off, st, args.calls), per_call(on, st, args.calls)))
    (off_total, off_browser), (on_total, on_browser) = (min(r[0] for r in rows), min(r[0][1] for r in rows)), \
        (min(r[1] for r in rows), min(r[1][1] for r in rows))
    off_total, on_total = min(r[0][0] for r in rows), min(r[1][0] for r in rows)
    print("1. The turn policy per model call (decision_context)")
    print(f"  browser off (built-in tools)        {off_total * 1e6:8.1f} µs  of which browser_state {off_browser * 1e6:.2f} µs "
          f"({off_browser / off_total:.1%})")
    print(f"  browser on (36 more tools, a page)  {on_total * 1e6:8.1f} µs  of which browser_state {on_browser * 1e6:.2f} µs "
          f"({on_total / off_total:.2f}x off)")
    whole, part = per_turn(args.calls)
    print("2. Classifying the submitted text, once per turn")
    print(f"  classify                            {whole * 1e6:8.1f} µs  of which browser_turn {part * 1e6:.1f} µs ({part / whole:.0%})")
    print(f"3. Start-up, median of {args.runs}")
    for line in server_rows(args.runs, Path(os.getcwd())):
        print(line)


if __name__ == "__main__":
    main()
