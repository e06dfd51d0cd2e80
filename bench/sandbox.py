"""What the command sandbox adds to one execute_command (issues 24 and 34: at most 30 ms on 2 cores).

Runs the same short command through ``paicli.tools.builtin.shell.execute_command`` unsandboxed and sandboxed
(no network, and with network: since issue 34 through slirp4netns where it is installed), alternating,
in a git project with the protected paths present, the session's private /tmp and the caches'
copy-on-write layers in a temporary data folder;
prints the fastest run, the median and the 90th percentile of each, and the milliseconds the
sandbox adds; a run whose command did not succeed is left out of the figures and counted (with
what it said) beside them. The machine's load average is printed too: on a busy machine the median measures
the queue for a CPU more than the sandbox, and the fastest run is the better estimate.

``--baseline DIR`` (another tree, e.g. ``git archive integ | tar -x -C DIR``) measures that tree the
same way in the same run: each tree runs in a child process of its own (its packages first on
``sys.path``, a project and data folder of its own), and the runs alternate between the trees one
command at a time, so both see the same load; the last table puts the added milliseconds side by side
with the ratio ours / baseline.

    .venv/bin/python bench/sandbox.py            # about 10 s
    .venv/bin/python bench/sandbox.py --runs 100
    .venv/bin/python bench/sandbox.py --baseline /tmp/integ --runs 60
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "echo hi > out.txt && cat out.txt"
CASES = ("unsandboxed", "sandboxed", "sandboxed + network")

# One tree's worker: reads a case name per line, runs it once, prints the milliseconds.
WORKER = r'''
import asyncio, json, os, subprocess, sys, time
from pathlib import Path
tree, base = sys.argv[1], Path(sys.argv[2])
sys.path[:0] = [tree]
from paicli.tools.base import ToolContext
from paicli.tools.sandbox.command import CommandSandbox, Mechanism, SandboxOptions
from paicli.tools.builtin.shell import execute_command

def options():
    fields = getattr(SandboxOptions, "__dataclass_fields__", {})
    if "data" not in fields:  # before issue 34
        return SandboxOptions()
    return SandboxOptions(data=str(base / "paicli-home" / "sandbox"), hidden=(str(base / "paicli-home"),))

async def timed(ctx, args):
    start = time.perf_counter()
    out = await execute_command(args, ctx)
    ms = (time.perf_counter() - start) * 1000
    return {"ms": ms} if "exit code: 0" in out else {"failed": str(out).strip()[:200]}

async def main():
    sandbox = CommandSandbox(options())
    if not isinstance(sandbox.mechanism(), Mechanism):
        print(json.dumps({"error": f"no sandbox here: {sandbox.mechanism()}"}), flush=True)
        return
    root = base / "project"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "PAI.md").write_text("rules\n")
    (root / ".env").write_text("A=1\n")
    boxed = ToolContext(root=root, sandbox=sandbox, session_id="bench")
    cases = {"unsandboxed": (ToolContext(root=root), {"command": COMMAND}),
             "sandboxed": (boxed, {"command": COMMAND}),
             "sandboxed + network": (boxed, {"command": COMMAND, "network": True})}
    for _ in range(3):  # warm-up: imports, the probe, the page cache
        for ctx, args in cases.values():
            await timed(ctx, args)  # a failure here shows in the runs that follow
    helper = getattr(sandbox, "network_isolation", lambda: "host")()
    print(json.dumps({"mechanism": sandbox.mechanism().label, "network": helper}), flush=True)
    for line in sys.stdin:
        ctx, args = cases[line.strip()]
        print(json.dumps(await timed(ctx, args)), flush=True)

COMMAND = sys.argv[3]
asyncio.run(main())
'''


class Worker:
    def __init__(self, tree: Path, base: Path) -> None:
        base.mkdir()
        self.process = subprocess.Popen([sys.executable, "-c", WORKER, str(tree), str(base), COMMAND],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.info = self._read()
        if "error" in self.info:
            raise SystemExit(self.info["error"])

    def _read(self) -> dict:
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit("a worker ended early (see its error above)")
        return json.loads(line)

    def run(self, case: str) -> dict:
        """``{"ms": ...}``, or ``{"failed": what it said}`` when the command did not succeed."""
        self.process.stdin.write(case + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        return self._read()

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait()


def summary(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), statistics.quantiles(values, n=10)[-1]


def main(runs: int, baseline: Path | None) -> None:
    trees = ([("baseline", baseline.resolve())] if baseline else []) + [("ours", ROOT)]
    with tempfile.TemporaryDirectory(prefix="paicli-bench-sandbox-") as tmp:
        workers = {name: Worker(tree, Path(tmp) / name) for name, tree in trees}
        times = {name: {case: [] for case in CASES} for name in workers}
        failed: dict[str, dict[str, list[str]]] = {name: {case: [] for case in CASES} for name in workers}
        before = os.getloadavg()
        try:
            for _ in range(runs):
                for case in CASES:
                    for name, worker in workers.items():
                        done = worker.run(case)
                        if "ms" in done:
                            times[name][case].append(done["ms"])
                        else:
                            failed[name][case].append(done["failed"])
        finally:
            for worker in workers.values():
                worker.close()
    after = os.getloadavg()
    info = workers["ours"].info
    print(f"execute_command `{COMMAND}`, {runs} runs each, {info['mechanism']}, network: {info['network']}; "
          f"{os.cpu_count()} CPUs, load average {before[0]:.1f} before, {after[0]:.1f} after "
          f"(5 min {after[1]:.1f})")
    added: dict[str, dict[str, tuple[float, float]]] = {}
    for name, by_case in times.items():
        print(f"{name} ({dict(trees)[name]}):")
        fastest0, median0, _ = summary(by_case["unsandboxed"])
        added[name] = {}
        for case, values in by_case.items():
            fastest, median, p90 = summary(values)
            added[name][case] = (fastest - fastest0, median - median0)
            errors = failed[name][case]
            print(f"  {case:<20} fastest {fastest:6.1f} ms (+{fastest - fastest0:5.1f})   "
                  f"median {median:6.1f} ms (+{median - median0:5.1f})   p90 {p90:6.1f} ms"
                  + (f"   FAILED {len(errors)} of {runs}: {errors[0]}" if errors else ""))
    if baseline:
        print("added over unsandboxed, fastest / median (ms):")
        for case in CASES[1:]:
            (bf, bm), (of, om) = added["baseline"][case], added["ours"][case]
            print(f"  {case:<20} baseline +{bf:5.1f} / +{bm:5.1f}   ours +{of:5.1f} / +{om:5.1f}   "
                  f"ratio ours/baseline {of / bf if bf > 0 else float('nan'):.2f} / {om / bm if bm > 0 else float('nan'):.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--baseline", type=Path, help="another source tree, measured the same way in this run")
    args = parser.parse_args()
    main(args.runs, args.baseline)
