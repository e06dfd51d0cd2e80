"""What the rest of the code needs to know about a tool, as plain data (paicli issue 25, item 1).

A tool's facts sit on its ``ToolSpec`` (``paicli.tools.base``), and a call carries its tool's
(``paicli.tools.call.Call``): the policy, the audit log, the external-content record, the guards
run before asking, the turn's file list and the batch line read them there, never by name from
a registry (issue 36: there is none). This module imports no tool and no policy, so
``paicli.tools.policy`` may read it without reaching a tool's implementation (the import-linter
contract). The built-in tools' specs are in ``paicli.tools.specs``.

An MCP tool's facts come with its spec from the adapter (``paicli.tools.mcp.adapter``), like any
spec's: what it does is the external server's business, so each asks the person (🟡 MCP), is
audited and counts as external content (``mcp_default``: a tool named ``web_fetch`` or
``web_search`` is also a fetch or a search for the turn policy); a browser server's tools have
facts of their own (``paicli.tools.browser.facts``: the same, and ``web="browser"``).

What has only a name reads the run's tool table (``paicli.tools.call.facts_for``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Approval = Literal["never", "ask", "auto", "always"]
SAFE = "🟢 安全"  # the danger label of a tool that is not dangerous (reference v.3)
MCP_DANGER = "🟡 MCP"  # reference v.3
MCP_RISK = "将调用外部 MCP server 提供的工具，可能访问网络、文件或第三方服务"


@dataclass(frozen=True)
class ToolFacts:
    """Each field is read by one rule; the defaults describe a harmless local read."""

    # When a person is asked (paicli.tools.policy.approval): "never"; "ask": under /hitl on only;
    # "auto": under the default level too; "always": at every level, --yes included, and
    # "approve all" never covers it (PAICLI_ALLOW_REVERT=yes lets it run under --yes).
    approval: Approval = "never"
    danger: str = SAFE  # the approval dialog's label (reference v.3)
    risk: str = ""  # the approval dialog's risk line (reference v.3)
    notice: str = ""  # for "always": why, shown with every question
    auto_review: bool = False  # under "auto", the auto reviewer may answer instead of the person
    # What it writes: "project" files at ``path_arg`` (protected paths ask, the write guard runs),
    # or a user "skill"'s reference files (every call asks as a protected write, and never
    # after external content).
    writes: Literal["project", "skill"] | None = None
    path_arg: str | None = None  # the argument naming a project path
    path_default: str | None = None  # the path used when that argument is left out
    # Which guard runs before anyone is asked (paicli.tools.policy.preflight): PathGuard on ``path_arg``,
    # or CommandGuard on the ``command`` argument (which also makes the sandbox flags
    # ``network``/``sandbox`` and the curl/wget rules apply).
    guard: Literal["path", "command"] | None = None
    turn_file: bool = False  # a successful call read or wrote the file at ``path_arg`` (Q13)
    audited: bool = False  # one line in the audit log per call (reference v.7)
    external: bool = False  # its result is external content (reference o.1)
    # the turn policy's web rules (reference o.4–o.6): a search, a fetch, or a browser tool
    web: Literal["search", "fetch", "browser"] | None = None
    label: str = ""  # the batch line's group header, ``{n}`` the count (reference u.3); "": 🔧 name × n
    # it saves a long-term memory: not after external content unless asked (o.1), and only what the
    # user asked for, with a typed y for global memory (issue 34; paicli.tools.policy.turn)
    memory: bool = False
    # What a person is shown of a call (paicli.ui.previews; for "edit"/"write", the approval's diff,
    # paicli.tools.builtin.writing.change_preview): a "command"'s output, an "edit"'s old_text →
    # new_text, a "write"'s content.
    preview: Literal["command", "edit", "write"] | None = None
    # reference (d.3): a read with offset/limit, or of an offloaded file, is never offloaded again
    ranged_read: bool = False


DEFAULT = ToolFacts()
MCP_FACTS = ToolFacts(approval="auto", danger=MCP_DANGER, risk=MCP_RISK, audited=True, external=True)
MCP_FETCH = ToolFacts(approval="auto", danger=MCP_DANGER, risk=MCP_RISK, audited=True, external=True, web="fetch")
MCP_SEARCH = ToolFacts(approval="auto", danger=MCP_DANGER, risk=MCP_RISK, audited=True, external=True, web="search")


def mcp_default(name: str) -> ToolFacts:
    """An MCP tool's facts (reference o.4: a server's ``web_fetch`` or ``web_search`` tool is a
    fetch or a search for the turn policy's web rules)."""
    lowered = name.strip().lower()
    return MCP_FETCH if lowered.endswith("__web_fetch") else MCP_SEARCH if lowered.endswith("__web_search") else MCP_FACTS


def plain_mcp(facts: ToolFacts) -> bool:
    """Facts ``mcp_default`` gives: the listings name these tools as "every mcp__ tool"."""
    return facts in (MCP_FACTS, MCP_FETCH, MCP_SEARCH)
