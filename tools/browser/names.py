"""Which browser action a tool name is (reference o.4, o.5): the sets PaiCLI's turn policy
names, and the MCP servers whose tools are browser tools.

A browser tool is one whose facts say ``web="browser"`` (``paicli.tools.browser.facts``): paicli's own
``browser_connect`` / ``browser_disconnect`` / ``browser_status``, and the tools of an MCP server
named ``chrome-devtools``, ``browser`` or ``playwright``, whose facts the MCP adapter sets from
here. What a browser tool does is read off its local name, the part after the last ``__`` with a
leading ``browser_`` dropped: ``mcp__chrome-devtools__take_snapshot`` is ``take_snapshot``,
``mcp__playwright__browser_navigate`` is ``navigate``, ``browser_connect`` is ``connect``.
"""

from __future__ import annotations

# reference o.4: the MCP servers whose tools are browser tools.
BROWSER_SERVERS = frozenset({"chrome-devtools", "browser", "playwright"})
CHROME_DEVTOOLS = "chrome-devtools"  # paicli's own browser server (PAICLI_BROWSER) has this name

# reference o.4 / o.5: the browser actions by kind (PaiCLI's TurnToolPolicy sets).
NAVIGATION = frozenset({"navigate_page", "new_page", "navigate", "navigate_back", "open"})
NEW_PAGE = frozenset({"new_page", "open"})
SESSION = frozenset({"list_pages", "select_page", "browser_tabs", "tabs"})
CURRENT_PAGE_READS = frozenset({
    "wait_for", "take_snapshot", "take_screenshot", "list_console_messages", "get_console_message",
    "list_network_requests", "get_network_request", "snapshot", "find", "console_messages",
    "network_requests", "network_request", "screenshot",
})
INTERACTIONS = frozenset({
    "click", "drag", "fill", "fill_form", "handle_dialog", "hover", "press_key", "resize_page", "resize",
    "upload_file", "upload_files", "file_upload", "drop", "evaluate_script", "evaluate", "select_option",
    "type", "type_text", "click_at", "close_page", "close",
})
CONTROL = frozenset({"connect", "disconnect", "status"})  # paicli's browser_* tools
HISTORY_TYPES = frozenset({"back", "forward", "reload"})  # navigate_page's history kinds (o.5 rule 4)
TAB_ACTIONS = frozenset({"list", "select", "new", "close"})  # o.5 rule 5
SCREEN_READS = frozenset({"take_snapshot", "take_screenshot", "snapshot", "screenshot"})  # what shows a page

KNOWN = NAVIGATION | SESSION | CURRENT_PAGE_READS | INTERACTIONS | CONTROL


def action_of(name: str | None) -> str:
    """The browser action of a tool name (see the module docstring); "" for a blank name."""
    lowered = (name or "").strip().lower()
    marker = lowered.rfind("__")
    if marker >= 0 and marker + 2 < len(lowered):
        lowered = lowered[marker + 2:]
    return lowered[len("browser_"):] if lowered.startswith("browser_") else lowered


def is_history_navigation(name: str | None, args: object) -> bool:
    """``navigate_back``, or ``navigate_page`` with type back, forward or reload (o.5 rule 4)."""
    action = action_of(name)
    kind = args.get("type") if isinstance(args, dict) else None
    return action == "navigate_back" or (action == "navigate_page" and str(kind or "").strip().lower() in HISTORY_TYPES)
