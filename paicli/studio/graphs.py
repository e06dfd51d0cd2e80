"""Graphs for ``langgraph dev`` (the config ``paicli studio`` writes, or the repository's
langgraph.json), compiled without checkpointer or store: the server injects its own (a graph
compiled with one makes ``langgraph dev`` refuse to start).

They live here rather than in ``graphs/`` because the chat model comes from the user's
settings, and only the ``paicli`` layer reads settings. A run's project root is the
settings' project root (``PAICLI_PROJECT_ROOT``, set by ``paicli studio``, else the server's
working directory), whatever ``project_root`` a run's context names (issue 34). A provider failure fails the
run, so Studio and the SDK see status ``error`` with the CLI's ``❌`` message. The MCP servers
the CLI would start (``paicli.tools.mcp``) start with the server, and their tools are the runs' too.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, make_dataclass

from paicli.nodes.core.state import RunContext
from paicli.modes import MODES
from paicli.config.settings import load_settings
from paicli.run.wiring import attach_mcp, make_deps
from paicli.tools.mcp.servers import McpServers

_settings = load_settings()


def _project_key() -> str:
    """The CLI's project key (``paicli.app``): with a database the origin remote's, else "" (the path)."""
    if not _settings.database_url:
        return ""
    from paicli.run.database import project_key

    return project_key(_settings.project_root)


_PROJECT_KEY = _project_key()


@dataclass(frozen=True)
class StudioContext(RunContext):
    """``RunContext`` whose project root is the one the server was started for, with its project
    key as the CLI sets it (computed here, at start-up: git is a blocking call the server refuses
    during a run). paicli issue 34 item 9: whatever a client sends, a run's project (and so its
    sandbox, its memory scope and its protected paths) is the server's own; a client that could
    name HOME as ``project_root`` would make HOME the sandbox's writable root."""

    project_root: str = str(_settings.project_root)
    project_key: str = _PROJECT_KEY

    def __post_init__(self) -> None:
        object.__setattr__(self, "project_root", str(_settings.project_root))
        object.__setattr__(self, "project_key", _PROJECT_KEY)


# Fact extraction runs in the server too (the store is long_term_memory.json), when the user's
# settings enable it; its notices have no terminal to go to.
_deps = make_deps(_settings, auto_extract=_settings.memory.auto_extract)
# The CLI's MCP servers, with the same trust decisions; their tools join as they get ready.
_mcp = McpServers(_settings.mcp, _settings.project_root)
attach_mcp(_deps, _mcp)
for _problem in _settings.mcp.problems:
    print(_problem, file=sys.stderr)
_mcp.start()

# One graph per mode (paicli.modes), each with a context whose ``mode`` is its own, so a run's
# units get that mode's prompt and its ledger lines say that mode. The plan review and each
# task's approvals are interrupts; a task's messages are under its own namespace
# (subgraphs=True in the SDK's stream, or the thread state's tasks).
CONTEXTS: dict[str, type[StudioContext]] = {
    spec.name: make_dataclass(f"{spec.name.title()}StudioContext", [("mode", str, field(default=spec.name))],
                              bases=(StudioContext,), frozen=True)
    for spec in MODES
}
for _spec in MODES:
    globals()[_spec.studio_graph] = _spec.build(_deps, context_schema=CONTEXTS[_spec.name],
                                                **dict(_spec.studio_options)).compile(name=_spec.studio_graph)
