"""The policy's rules called with a tool's name, as a test writes them.

In paicli a call carries its tool's facts (``paicli.tools.call.Call``, built from the run's tool
table) and the rules take those facts. A test of a rule names a tool instead: each function here
is the rule of the same name with the facts of that tool in ``TABLE`` (every built-in tool, the
browser's own tools) or in the ``tools`` a test passes, read as the code reads them
(``paicli.tools.call.facts_for``: an unknown ``mcp__`` name gets an MCP tool's facts).
"""

from __future__ import annotations

from typing import Any, Mapping

from paicli.tools.base import ToolSpec
from paicli.tools.browser import facts as browser_facts
from paicli.tools.call import facts_for
from paicli.tools.facts import ToolFacts, mcp_default
from paicli.tools.mcp.names import tool_name
from paicli.tools.policy import approval, audit, classify as classify_module, external_context, preflight, \
    protected_paths, turn
from paicli.tools.specs import EVERY_SPEC

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
_BROWSER = (ToolSpec("browser_status", "", _NO_ARGS, None, facts=browser_facts.STATUS),
            ToolSpec("browser_connect", "", _NO_ARGS, None, facts=browser_facts.CONNECT),
            ToolSpec("browser_disconnect", "", _NO_ARGS, None, facts=browser_facts.DISCONNECT))
TABLE: dict[str, ToolSpec] = {spec.name: spec for spec in (*EVERY_SPEC, *_BROWSER)}


def facts(name: str | None, tools: Mapping[str, ToolSpec] | None = None) -> ToolFacts:
    """The facts of the tool ``name`` in ``tools`` or ``TABLE`` (an ``mcp__`` name in neither: a
    plain MCP tool's, whatever its server)."""
    return facts_for((name or "").strip(), {**TABLE, **(tools or {})})


def mcp_specs(server: str, *tools: str) -> dict[str, ToolSpec]:
    """The specs the MCP adapter makes for ``server``'s ``tools`` (a browser server's are browser
    tools), with no server behind them: a table for the rules."""
    specs = {}
    for tool in tools:
        name = tool_name(server, tool)
        specs[name] = ToolSpec(name, "", _NO_ARGS, None, facts=browser_facts.mcp_facts(server, tool) or mcp_default(name))
    return specs


def decide(tool: str, args: Any, level: str, *rest: Any, tools: Mapping[str, ToolSpec] | None = None,
           **kw: Any) -> approval.Decision:
    return approval.decide(tool, args, level, *rest, facts=facts(tool, tools), **kw)


def person_decides(tool: str, args: Any, level: str, notice: str, code: str,
                   tools: Mapping[str, ToolSpec] | None = None) -> approval.Decision:
    return approval.person_decides(tool, args, level, notice, code, facts(tool, tools))


def covered(ask: approval.Ask, approved_all: Any, network_granted: bool = False,
            tools: Mapping[str, ToolSpec] | None = None) -> bool:
    return approval.covered(ask, approved_all, network_granted, facts=facts(ask.tool, tools))


def approval_key(tool: str, args: Any, network_granted: bool = False, tools: Mapping[str, ToolSpec] | None = None) -> str:
    return approval.approval_key(tool, args, network_granted, facts=facts(tool, tools))


def asking_tools(tools: Mapping[str, ToolSpec] | None = None) -> list[str]:
    return approval.asking_tools({**TABLE, **(tools or {})})


def is_audited(tool: str, tools: Mapping[str, ToolSpec] | None = None) -> bool:
    return audit.is_audited(facts(tool, tools))


def external_source(name: str | None, args: Any = None, tools: Mapping[str, ToolSpec] | None = None) -> str | None:
    return external_context.external_source(name, args, facts(name, tools))


def command_of(name: str | None, args: Any, tools: Mapping[str, ToolSpec] | None = None) -> str:
    return classify_module.command_of(args, facts(name, tools))


def guard_refusal(tool: str, args: Any, root: Any, tools: Mapping[str, ToolSpec] | None = None) -> str | None:
    return preflight.guard_refusal(tool, args, root, facts(tool, tools))


def protected_write(tool: str, args: Any, root: str, tools: Mapping[str, ToolSpec] | None = None) -> str | None:
    return protected_paths.protected_write(tool, args, root, facts(tool, tools))


def is_browser_tool(name: str, tools: Mapping[str, ToolSpec] | None = None) -> bool:
    return turn.is_browser_tool(facts(name, tools))


def is_web_fetch_tool(name: str, tools: Mapping[str, ToolSpec] | None = None) -> bool:
    return turn.is_web_fetch_tool(facts(name.lower(), tools))


def is_web_tool(name: str, tools: Mapping[str, ToolSpec] | None = None) -> bool:
    return turn.is_web_tool(facts(name.lower(), tools))


def authorize(turn_class: Any, name: str | None, args: Any, advertised: Any, *rest: Any,
              tools: Mapping[str, ToolSpec] | None = None, **kw: Any) -> Any:
    return turn.authorize(turn_class, name, args, advertised, *rest, facts=facts(name, tools), **kw)


def memory_question(turn_class: Any, name: str | None, args: Any, tools: Mapping[str, ToolSpec] | None = None) -> str | None:
    return turn.memory_question(turn_class, args, facts(name, tools))


def expose(turn_class: Any, pairs: Any, *rest: Any, tools: Mapping[str, ToolSpec] | None = None, **kw: Any) -> set[str]:
    """``pairs``: (name, description), each given its facts."""
    return turn.expose(turn_class, [(name, description, facts(name, tools)) for name, description in pairs], *rest, **kw)


def browser_decision(turn_class: Any, view: Any, name: str, args: Any,
                     tools: Mapping[str, ToolSpec] | None = None) -> Any:
    from paicli.tools.browser.decide import browser_decision as decide_browser

    return decide_browser(turn_class, view, name, args, facts(name, tools))
