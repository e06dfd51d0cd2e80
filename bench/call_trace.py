"""Where one tool call goes at run time (paicli issue 36, Done when): a ``sys.setprofile`` trace.

Runs the react graph in-process on a scripted model (``tests.support.scripted_model``) for two
turns, each one tool call and an answer: ``read_file`` of a project file, and ``echo`` of a real
MCP server over stdio (``tests/support/mcp_server.py``, started by ``McpServers`` as a session
starts it). Each turn runs twice on one graph, as a session's graph serves its turns: once
untraced (imports, per-graph caches), then traced. The traced window
is the call's path: from the moment the model's answer is read (``call_model``'s
``with_decisions``, which decides its calls) until the model is called again with the results, on every thread (deciding and sync
tools run in worker threads). In that window, counting only paicli's own code (the installed
``paicli`` package, not tests, bench or libraries):

- files passed through: distinct source files with a function called;
- moves between files: the number of times the innermost paicli frame of a thread changes file
  (a call into another file, or a return to the caller's), summed over the threads; "loop moves"
  counts the event loop's thread alone (what ``sys.setprofile`` without ``threading.setprofile``
  sees: the worker threads' deciding and ``read_file`` itself are left out);
- returns to a file already left: moves into a file the thread's path had been in before;
- lookups by name: calls of the registry (``paicli.tools.facts.facts_of`` / ``known_tools``, gone
  since issue 36) or of ``paicli.tools.call.facts_for`` (the run's table by name), and of the
  name-pattern checks (``is_browser_tool``, ``is_web_fetch``, ``is_web_search``, ``is_mcp``),
  made after the call values were built (``paicli.tools.call.calls_of`` returned; before that
  value existed, the whole window counts). Each node that handles the calls (deciding, the
  gate, execution, diagnostics) builds the values from the assistant message it reads, since a
  graph's state holds messages, not specs: those lookups, inside ``call_of``, are the build.

Prints one row per call; ``--files`` adds the files in the order first entered. Run it on the
commit before a change and after it to compare (``git worktree add``): the numbers are
deterministic for a given commit, up to LangGraph's own scheduling.

    .venv/bin/python bench/call_trace.py [--files]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere: tests.support

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

import paicli  # noqa: E402
from paicli.graphs.react import build_graph  # noqa: E402
from paicli.nodes.core.state import Deps, RunContext  # noqa: E402
from paicli.tools.mcp.config import McpSetup, parse_entry  # noqa: E402
from paicli.tools.mcp.servers import McpServers  # noqa: E402
from paicli.tools.registry import BUILTIN_TOOLS  # noqa: E402
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call  # noqa: E402

MCP_SERVER = str(ROOT / "tests" / "support" / "mcp_server.py")
# The package's own directories (paicli/<name> are symlinks to the folders at the root).
OWN = tuple(str(p) for p in {Path(paicli.__file__).resolve().parent, *(
    (Path(paicli.__file__).parent / name).resolve() for name in ("tools", "nodes", "graphs", "memory", "prompts",
                                                                  "codeindex"))})
LOOKUPS = {"facts_of", "known_tools", "facts_for"}  # the registry (before issue 36), a table by name
NAME_CHECKS = {"is_browser_tool", "is_web_fetch", "is_web_search", "is_mcp"}
START = ("call_model.py", {"with_decisions"})  # the model's answer is read: call_model decides its calls
END = ("loop.py", {"into_model"})  # the results are in: the loop turns to the model again
BUILT = ("call.py", {"calls_of"})  # the call value (paicli.tools.call), after this change


def _own(filename: str) -> str | None:
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return None
    return resolved if resolved.startswith(OWN) else None


@dataclass
class Trace:
    active: bool = False
    built: bool = False
    # per thread: the innermost paicli file at each change (a move is a call or return within a thread)
    files: dict[int, list[str]] = field(default_factory=dict)
    main: int = field(default_factory=threading.get_ident)  # the event loop's thread
    lookups: int = 0
    name_checks: int = 0
    lookups_before: int = 0
    _paths: dict[str, str | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def own(self, filename: str) -> str | None:
        if filename not in self._paths:
            self._paths[filename] = _own(filename)
        return self._paths[filename]

    def profile(self, frame: Any, event: str, _arg: Any) -> None:
        if event not in ("call", "return"):
            return
        code = frame.f_code
        if event == "call" and code.co_name in START[1] and code.co_filename.endswith(START[0]):
            self.active = True
        if event == "call" and self.active and code.co_name in END[1] and code.co_filename.endswith(END[0]):
            self.active = False
        if not self.active:
            return
        if event == "return" and code.co_name in BUILT[1] and code.co_filename.endswith(BUILT[0]):
            self.built = True  # the values are made (their own lookups in the table are the build)
        # the innermost paicli frame after this event
        current = frame if event == "call" else frame.f_back
        while current is not None and self.own(current.f_code.co_filename) is None:
            current = current.f_back
        with self._lock:
            if event == "call" and self.own(code.co_filename) is not None:
                if code.co_name in LOOKUPS and frame.f_back is not None and frame.f_back.f_code.co_name == "call_of":
                    pass  # a node building the values from the message it reads (the state holds messages)
                elif code.co_name in LOOKUPS:
                    self.lookups += 1 if self.built else 0
                    self.lookups_before += 0 if self.built else 1
                elif code.co_name in NAME_CHECKS and self.built and frame.f_locals.get("facts") is None:
                    self.name_checks += 1  # a check by the name alone (handed the call's facts, it reads them)
            if current is None:
                return
            where = self.own(current.f_code.co_filename)
            trail = self.files.setdefault(threading.get_ident(), [])
            if not trail or trail[-1] != where:
                trail.append(where)  # type: ignore[arg-type]

    def order(self) -> list[str]:
        """The files in the order first entered (the event loop's thread first)."""
        seen: list[str] = []
        for ident in sorted(self.files, key=lambda i: i != self.main):
            for where in self.files[ident]:
                if where not in seen:
                    seen.append(where)
        return seen

    def figures(self) -> dict[str, int]:
        moves = returns = 0
        for trail in self.files.values():
            seen: set[str] = set()
            for i, where in enumerate(trail):
                returns += 1 if where in seen and i > 0 else 0
                seen.add(where)
            moves += max(len(trail) - 1, 0)
        main = self.files.get(self.main, [])
        return {"files": len(self.order()), "moves": moves, "returns": returns,
                "main_moves": max(len(main) - 1, 0),
                "lookups_after_built": self.lookups if self.built else self.lookups + self.lookups_before,
                "name_checks_after_built": self.name_checks if self.built else -1,
                "call_value": int(self.built)}


_CURRENT: list[Trace | None] = [None]  # the trace being taken, if any


def _dispatch(frame: Any, event: str, arg: Any) -> None:
    trace = _CURRENT[0]
    if trace is not None:
        trace.profile(frame, event, arg)


async def one_call(deps_tools: dict[str, Any], project: Path, call: dict) -> Trace:
    """The same turn twice on one graph (as a session's graph serves every turn), on two threads:
    the first warms imports and per-graph caches, the second is traced."""
    model = ScriptedChatModel([ai("", call), ai("好了"), ai("", call), ai("好了")])
    graph = build_graph(Deps(model=model, tools=deps_tools), checkpointer=InMemorySaver())
    context = RunContext(project_root=str(project), approval="yes", context_window=128_000, session_id="s1")
    trace = Trace()
    for thread, taken in (("warm", None), ("traced", trace)):
        _CURRENT[0] = taken
        try:
            await graph.ainvoke({"messages": [HumanMessage("看一下")]}, {"configurable": {"thread_id": thread}},
                                context=context)
        finally:
            _CURRENT[0] = None
    return trace


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", action="store_true", help="list the files of each call's path")
    options = parser.parse_args()
    # Every thread started from now on (the worker threads deciding calls and running sync tools,
    # the MCP servers' loop) reports to the trace being taken; a no-op between traces.
    threading.setprofile(_dispatch)
    sys.setprofile(_dispatch)
    with tempfile.TemporaryDirectory(prefix="paicli-call-trace-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "a.txt").write_text("第一行\n第二行\n", encoding="utf-8")
        servers = McpServers(McpSetup(servers=(parse_entry("demo", {"command": sys.executable, "args": [MCP_SERVER]},
                                                           "user"),),
                                      call_timeout=30, startup_wait=60, state_dir=Path(tmp) / "mcp"), project)
        servers.start()
        try:
            await servers.wait_started()
            tools = {**BUILTIN_TOOLS, **servers.specs()}
            if "mcp__demo__echo" not in tools:
                raise SystemExit("the test MCP server did not start: " + "; ".join(servers.logs("demo")))
            rows = []
            for label, call in (("read_file", tool_call("read_file", {"path": "a.txt"})),
                                ("mcp__demo__echo", tool_call("mcp__demo__echo", {"text": "hi"}))):
                rows.append((label, await one_call(tools, project, call)))
        finally:
            servers.close()
    print(f"{'call':<18}{'files':>7}{'moves':>8}{'loop moves':>12}{'returns':>9}{'lookups':>9}{'name checks':>13}"
          f"{'call value':>12}")
    for label, trace in rows:
        f = trace.figures()
        checks = "-" if f["name_checks_after_built"] < 0 else str(f["name_checks_after_built"])
        print(f"{label:<18}{f['files']:>7}{f['moves']:>8}{f['main_moves']:>12}{f['returns']:>9}"
              f"{f['lookups_after_built']:>9}{checks:>13}{'yes' if f['call_value'] else 'no':>12}")
    print("lookups: facts_of/known_tools/facts_for calls after the call value is built (the whole window when there is none);"
          " name checks: is_browser_tool/is_web_fetch/is_web_search/is_mcp after it")
    if options.files:
        for label, trace in rows:
            print(f"\n{label}:")
            for where in trace.order():
                print("  " + str(Path(where).relative_to(ROOT)) if where.startswith(str(ROOT)) else "  " + where)


if __name__ == "__main__":
    asyncio.run(main())
