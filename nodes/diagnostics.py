"""diagnostics: the language servers' word on the files a step edited, before the next model
call (reference s.2 item 8.2, t: the post-edit hook of write_file / edit_file; issue 38).

It runs after ``execute_tools`` only when the step wrote a file a server serves (or a file whose
diagnostics were late last time): the router asks ``LanguageServers.serves``, a look-up, so an
edit costs nothing when no server is installed. Then, within the bound (``PAICLI_LSP_WAIT_SECONDS``,
3 s; every server at once):

- each edited file is opened or changed in its server, and its diagnostics are awaited;
- what is **new** since the file was last reported goes to the model as one internal message
  (kind ``lsp_diagnostics``, so never a user round; appended after the step's results, so the
  request still extends the last one byte for byte); the listing sits in the untrusted-data
  boundary, since it quotes the project's code;
- the person sees one folded ``🩺`` line per file (the REPL; ``-p`` with ``--verbose``), and one line
  for a server that is missing, failed or slow;
- a file whose server did not answer in time is tried again after the next step.

``state["lsp"]`` keeps, per file, the problems the model was last told of (``seen``) and the
files still to try (``late``); ``/clear`` empties it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from paicli.memory.context.rounds import LSP_DIAGNOSTICS, internal
from paicli.nodes.core.state import AgentState, Deps, RunContext, run_context
from paicli.tools.boundary import wrap
from paicli.tools.call import calls_of
from paicli.tools.lsp.report import HEADER, model_text, person_line



def step_files(state: AgentState, deps: Deps) -> tuple[list[str], list[str]]:
    """(paths written, paths read) by the last assistant message's calls that succeeded, as the
    model named them: a write is any tool whose facts say it writes a project file at ``path_arg``."""
    messages = state.get("messages") or []
    index = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)
    if index is None:
        return [], []
    ok = {m.tool_call_id for m in messages[index + 1:] if isinstance(m, ToolMessage) and m.status != "error"}
    written, read = [], []
    for call in calls_of(messages[index], deps.tools):  # each with its tool's facts (paicli.tools.call)
        facts = call.facts
        path = (call.args if isinstance(call.args, dict) else {}).get(facts.path_arg or "path")
        if call.id not in ok or not isinstance(path, str) or not path:
            continue
        if facts.writes == "project":
            written.append(path)
        elif facts.turn_file:  # a file the model reads is likely to be edited next: its server is started
            read.append(path)
    return written, read


def located(root: str, path: str) -> tuple[str, str] | None:
    """(project-relative, absolute) of a path the guards let through, or None outside the project."""
    full = os.path.realpath(os.path.join(root, path))
    if full != root and not full.startswith(root.rstrip("/") + "/"):
        return None
    return Path(full).relative_to(root).as_posix(), full


def wants_diagnostics(state: AgentState, deps: Deps, ctx: RunContext) -> bool:
    """The router's question after execute_tools. Starts the servers of files just read."""
    lsp = deps.lsp
    if lsp is None:
        return False
    written, read = step_files(state, deps)
    if read:
        lsp.warm(ctx.project_root, [os.path.join(ctx.project_root, p) for p in read])
    return bool((state.get("lsp") or {}).get("late")) or any(lsp.serves(p) for p in written)


def make_diagnostics(deps: Deps):
    async def diagnostics(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, lsp = run_context(runtime), deps.lsp
        record = dict(state.get("lsp") or {})
        seen = dict(record.get("seen") or {})
        root = os.path.realpath(ctx.project_root)
        names = [*step_files(state, deps)[0], *(record.get("late") or [])]
        files = list(dict.fromkeys(f for f in (located(root, p) for p in names) if f is not None))
        found = await lsp.diagnose(root, files, seen)
        lines = [*found.lines, *(line for r in found.reports if (line := person_line(r)))]
        if lines:
            get_stream_writer()({"lsp": lines})
        update: dict[str, Any] = {}
        text = model_text(found.reports, lsp.options.max_items)
        if text is not None:
            listing = text.removeprefix(HEADER).lstrip("\n")
            update["messages"] = [internal(f"{HEADER}\n{wrap('lsp_diagnostics', listing)}", LSP_DIAGNOSTICS)]
        seen.update({r.path: list(r.current) for r in found.reports})
        after = {"seen": seen, "late": found.late}
        if after != {"seen": record.get("seen") or {}, "late": record.get("late") or []}:
            update["lsp"] = after
        return update

    return diagnostics

