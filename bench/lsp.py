"""Language servers after edits (issue 38): how long an edit waits for its diagnostics, per
server, and what the post-edit hook costs an edit when no server is installed.

``python bench/lsp.py [--edits 20] [--steps 30] [--runs 5]``. Prints; never fails over a target.

- **Edit to diagnostics**, per server found on this machine (basedpyright, pylsp,
  typescript-language-server, and paicli's own test server ``tests/support/fake_lsp.py`` as the
  floor): the server is started and warmed up, then each of ``--edits`` edits writes the file
  (alternately breaking and fixing it) and times ``LanguageServers.diagnose`` until the
  server's answer is in. p50 / p95, with the cold start (first diagnostics) beside them. Servers
  run inside the command sandbox, as in a session.
- **No server installed**: the react graph on a scripted model making ``--steps`` ``edit_file``
  calls, without language servers (``Deps.lsp=None``: no hook) and with them but none installed
  (every language's command missing), interleaved ``--runs`` times. The difference per edit is
  the hook's cost there. Target: ≤ 5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from paicli.graphs.react import build_graph  # noqa: E402
from paicli.nodes.core.state import Deps, RunContext  # noqa: E402
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call  # noqa: E402
from paicli.tools.lsp.languages import BY_KEY  # noqa: E402
from paicli.tools.lsp.manager import LanguageServers  # noqa: E402
from paicli.tools.lsp.options import LspOptions  # noqa: E402
from paicli.tools.sandbox.command import CommandSandbox, SandboxOptions  # noqa: E402

FAKE = str(Path(__file__).resolve().parent.parent / "tests" / "support" / "fake_lsp.py")
GOOD = {"py": "def add(a: int, b: int) -> int:\n    return a + b\n\n\ntotal = add(1, 2)\n",
        "ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\nexport const total = add(1, 2);\n"}
BAD = {"py": 'def add(a: int, b: int) -> int:\n    return a + b\n\n\ntotal = add(1, "2")  # ERROR\n',
       "ts": 'export function add(a: number, b: number): number {\n  return a + b;\n}\nexport const total = add(1, "2");\n'}
SERVERS = [("fake (paicli's test server)", "py", {"python": (sys.executable, FAKE, "ok")}),
           ("basedpyright", "py", {}),
           ("pylsp", "py", {"python": ("pylsp",)}),
           ("typescript-language-server", "ts", {})]


def sandbox(root: Path) -> CommandSandbox:
    """The session's sandbox, its data (servers' temp dirs, cache layers) beside the project."""
    return CommandSandbox(SandboxOptions(data=str(root.parent / f"{root.name}-sandbox")))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


async def edit_to_diagnostics(label: str, ext: str, commands: dict, edits: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="paicli-bench-lsp-")).resolve()
    if ext == "ts":
        (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}')
    path = root / f"calc.{ext}"
    path.write_text(GOOD[ext])
    lsp = LanguageServers(LspOptions(commands=commands, wait=60.0), sandbox(root))
    key = "typescript" if ext == "ts" else "python"
    found = lsp.command(BY_KEY[key])
    if not hasattr(found, "argv"):
        print(f"  {label:<30} not installed ({found.why})")
        return
    try:
        started = time.perf_counter()
        first = await lsp.diagnose(str(root), [(path.name, str(path))], {})
        cold = time.perf_counter() - started
        if not first.reports:
            print(f"  {label:<30} no diagnostics ({'; '.join(first.lines) or 'none'})")
            return
        times = []
        for number in range(edits + 3):
            path.write_text((BAD if number % 2 == 0 else GOOD)[ext])
            started = time.perf_counter()
            done = await lsp.diagnose(str(root), [(path.name, str(path))], {})
            if number >= 3 and done.reports:  # the first three warm the server up
                times.append(time.perf_counter() - started)
        print(f"  {label:<30} p50 {percentile(times, 0.5) * 1000:7.0f} ms   p95 {percentile(times, 0.95) * 1000:7.0f} ms"
              f"   cold start to first diagnostics {cold:5.1f} s   ({len(times)} edits)")
    finally:
        await lsp.close()


def scripted(steps: int) -> ScriptedChatModel:
    calls = [ai("", tool_call("edit_file", {"path": "calc.py", "old_text": f"total{n}" if n else "total",
                                            "new_text": f"total{n + 1}"})) for n in range(steps)]
    return ScriptedChatModel([*calls, ai("完成")])


async def graph_run(steps: int, lsp: LanguageServers | None, root: Path) -> float:
    (root / "calc.py").write_text(GOOD["py"])
    graph = build_graph(Deps(model=scripted(steps), lsp=lsp), checkpointer=InMemorySaver())
    context = RunContext(project_root=str(root), approval="yes", session_id="bench")
    started = time.perf_counter()
    await graph.ainvoke({"messages": [HumanMessage("改名")]}, {"configurable": {"thread_id": "b"}, "recursion_limit": 1000},
                        context=context)
    return time.perf_counter() - started


async def no_server(steps: int, runs: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="paicli-bench-lsp-")).resolve()
    missing = {key: (f"/nonexistent/{key}-server",) for key in BY_KEY}  # as on a machine with none
    plain, hooked = [], []
    await graph_run(2, None, root)  # warm imports
    for _ in range(runs):
        plain.append(await graph_run(steps, None, root))
        hooked.append(await graph_run(steps, LanguageServers(LspOptions(commands=missing), sandbox(root)), root))
    a, b = statistics.median(plain), statistics.median(hooked)
    print(f"  without the hook (Deps.lsp=None)   {a / steps * 1000:7.2f} ms per edit step")
    print(f"  with it, no server installed       {b / steps * 1000:7.2f} ms per edit step   "
          f"(ratio {b / a:.3f}; added {(b - a) / steps * 1000:+.2f} ms per edit; target ≤ 5 ms)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("Edit to diagnostics (sandboxed servers, warm):")
    for label, ext, commands in SERVERS:
        await edit_to_diagnostics(label, ext, commands, args.edits)
    print(f"\nNo server installed: the react graph, {args.steps} edit_file steps, median of {args.runs} runs:")
    await no_server(args.steps, args.runs)


if __name__ == "__main__":
    asyncio.run(main())
