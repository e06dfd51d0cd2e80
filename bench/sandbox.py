"""What the command sandbox adds to one execute_command (issues 24 and 34: at most 30 ms on 2 cores).

Runs the same short command through ``paicli.tools.builtin.shell.execute_command`` unsandboxed and sandboxed
(no network, and with network: since issue 34 through slirp4netns where it is installed), alternating,
in a git project with the protected paths present, the session's private /tmp and the caches'
copy-on-write layers in a temporary data folder;
prints the fastest run, the median and the 90th percentile of each, and the milliseconds the
sandbox adds. The machine's load average is printed too: on a busy machine the median measures
the queue for a CPU more than the sandbox, and the fastest run is the better estimate.

    .venv/bin/python bench/sandbox.py            # about 10 s
    .venv/bin/python bench/sandbox.py --runs 100
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paicli.tools.base import ToolContext  # noqa: E402
from paicli.tools.sandbox.command import CommandSandbox, Mechanism, SandboxOptions  # noqa: E402
from paicli.tools.builtin.shell import execute_command  # noqa: E402

COMMAND = "echo hi > out.txt && cat out.txt"


def project(base: Path) -> Path:
    root = base / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "PAI.md").write_text("rules\n")
    (root / ".env").write_text("A=1\n")
    return root


async def timed(ctx: ToolContext, args: dict) -> float:
    start = time.perf_counter()
    out = await execute_command(args, ctx)
    assert "exit code: 0" in out, out
    return (time.perf_counter() - start) * 1000


def options(base: Path) -> SandboxOptions:
    """Issue 34's options where they exist (paicli's data hidden, the data folder of its own)."""
    fields = getattr(SandboxOptions, "__dataclass_fields__", {})
    if "data" not in fields:  # before issue 34: the same bench runs on the older tree
        return SandboxOptions()
    return SandboxOptions(data=str(base / "paicli-home" / "sandbox"), hidden=(str(base / "paicli-home"),))


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = CommandSandbox(options(Path(tmp)))
        if not isinstance(sandbox.mechanism(), Mechanism):
            print(f"no sandbox here: {sandbox.mechanism()}")
            return
        root = project(Path(tmp))
        boxed = ToolContext(root=root, sandbox=sandbox, session_id="bench")
        cases = {"unsandboxed": (ToolContext(root=root), {"command": COMMAND}),
                 "sandboxed": (boxed, {"command": COMMAND}),
                 "sandboxed + network": (boxed, {"command": COMMAND, "network": True})}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(3):  # warm-up: imports, the probe, the page cache
            for ctx, args in cases.values():
                await timed(ctx, args)
        for _ in range(runs):
            for name, (ctx, args) in cases.items():
                times[name].append(await timed(ctx, args))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    helper = getattr(sandbox, "network_isolation", lambda: "host")()
    print(f"execute_command `{COMMAND}`, {runs} runs each, {sandbox.mechanism().label}, network: {helper}; "
          f"{os.cpu_count()} CPUs, load average {load}")
    fastest, middle = min(times["unsandboxed"]), statistics.median(times["unsandboxed"])
    for name, values in times.items():
        p90 = statistics.quantiles(values, n=10)[-1]
        print(f"  {name:<20} fastest {min(values):6.1f} ms (+{min(values) - fastest:5.1f})   "
              f"median {statistics.median(values):6.1f} ms (+{statistics.median(values) - middle:5.1f})   p90 {p90:6.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    asyncio.run(main(parser.parse_args().runs))
