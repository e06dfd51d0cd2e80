"""Turn snapshots (issue 29): what taking one costs on a generated project.

Prints, in one run (``python bench/snapshot.py``):

1. **First snapshot** of a fresh ``--files``-file project (default 2,000, in nested folders,
   with a ``.gitignore`` and ignored build output), into a new shadow repository.
2. **Subsequent, nothing changed**: the snapshot before a turn that follows a turn which wrote
   nothing (median of ``--runs``). Target: ≤ 150 ms at 2,000 files.
3. **Subsequent, a few files changed**: ``--changed`` files rewritten before each snapshot (median).

Each figure is the wall time of ``TurnSnapshots.take`` (lock, git subprocesses, the index
line), as the snapshot node runs it. The project is a git repository of its own (as most are),
whose ``.git`` the snapshots never touch. Benchmarks print; they never fail.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paicli.tools.snapshots.store import Label, TurnSnapshots  # noqa: E402

TARGET_MS = 150


def generate(root: Path, count: int) -> list[Path]:
    """``count`` source files of 0.5–4 KB in folders ten deep at most, plus ignored output."""
    made = []
    for i in range(count):
        folder = root / f"pkg{i % 20}" / f"mod{i % 7}" / ("deep/" * (i % 4))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file_{i}.py"
        path.write_text(f"# file {i}\n" + "def f():\n    return %d\n" % i * (20 + i % 150))
        made.append(path)
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    (root / "build").mkdir()
    for i in range(200):
        (root / "build" / f"out_{i}.o").write_bytes(os.urandom(2048))
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True)
    return made


def timed(snapshots: TurnSnapshots, root: Path, label: Label) -> float:
    started = time.perf_counter()
    snapshots.take(root, label)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--changed", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "project", Path(tmp) / "home"
        root.mkdir()
        made = generate(root, args.files)
        snapshots = TurnSnapshots(home)
        label = Label("react", "bench", "bench")
        first = timed(snapshots, root, label)
        same = [timed(snapshots, root, label) for _ in range(args.runs)]
        changed = []
        for run in range(args.runs):
            for path in made[run * args.changed:(run + 1) * args.changed]:
                path.write_text(path.read_text() + f"# run {run}\n")
            changed.append(timed(snapshots, root, label))
        size = sum(f.stat().st_size for f in (snapshots.project(root).repo).rglob("*") if f.is_file())
    print(f"turn snapshot, {args.files} files (+200 ignored), {os.cpu_count()} CPUs")
    print(f"  first snapshot:                      {first:7.1f} ms   (shadow repository {size / 1e6:.1f} MB)")
    print(f"  subsequent, nothing changed:         {statistics.median(same):7.1f} ms median, "
          f"max {max(same):.1f}   target ≤ {TARGET_MS} ms")
    print(f"  subsequent, {args.changed} files changed:          {statistics.median(changed):7.1f} ms median, "
          f"max {max(changed):.1f}   target ≤ {TARGET_MS} ms")


if __name__ == "__main__":
    main()
