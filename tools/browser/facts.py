"""The facts of browser tools (paicli issue 40): set where their specs are made, never guessed
from a name by the policy.

- The tools of a browser MCP server (``paicli.tools.browser.names.BROWSER_SERVERS``) are MCP tools
  (they ask, are audited, their results are external content) and browser tools
  (``web="browser"``): the MCP adapter (``paicli.tools.mcp.adapter``) asks ``mcp_facts`` for them.
- paicli's ``browser_connect`` / ``browser_disconnect`` / ``browser_status`` (``paicli.tools.browser.tools``):
  browser tools that run no MCP call of their own; ``browser_connect`` hands the agent the
  user's own Chrome, so a person types ``y`` for every call (``approval="always"``).
"""

from __future__ import annotations

from paicli.tools.browser.names import BROWSER_SERVERS
from paicli.tools.facts import MCP_DANGER, ToolFacts

BROWSER_RISK = "将通过浏览器 MCP server 操作浏览器页面，页面内容来自外部网站"
BROWSER_MCP = ToolFacts(approval="auto", danger=MCP_DANGER, risk=BROWSER_RISK, audited=True,
                        external=True, web="browser")

CONNECT_NOTICE = ("连接后 Agent 可以读取你正在使用的 Chrome 中的标签页（含登录态）；只有你在终端输入 y 才会连接，"
                  "“全部放行”和 --yes 都不代替确认")
CONNECT = ToolFacts(approval="always", danger="🔴 高危",
                    risk="将把浏览器工具切换到你自己正在运行的 Chrome（共享模式，复用登录态）",
                    notice=CONNECT_NOTICE, audited=True, external=True, web="browser")
DISCONNECT = ToolFacts(audited=True, external=True, web="browser")
STATUS = ToolFacts(external=True, web="browser")


def mcp_facts(server: str, tool: str) -> ToolFacts | None:
    """The facts of an MCP server's tool when the server is a browser server, else None (the
    tool keeps the plain MCP facts)."""
    return BROWSER_MCP if server in BROWSER_SERVERS else None
