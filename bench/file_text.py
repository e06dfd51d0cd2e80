"""Text in any encoding (issue 41): what sniffing a file's bytes costs read_file and grep_code.

Prints, in one run (``python bench/file_text.py``), the median of ``--runs`` for each row, ours
against a baseline measured in the same run:

1. **read_file, whole, 1 MB of UTF-8 source**: the tool (``paicli.tools.file_text`` decides text and
   encoding, then decodes) against ``read_bytes().decode("utf-8", "replace")``, what it did before.
2. **read_file, whole, 1 MB of GBK source**: the tool (charset-normalizer names the encoding)
   against decoding with the encoding already known.
3. **read_file, 200 lines from a 5 MB file**: the tool (sniffs the first 64 KB) against the
   windowed read alone.
4. **grep_code, an ASCII pattern, a ``--files``-file tree** (a tenth GBK): the tool on ripgrep
   (``--text``, each hit file sniffed) against one plain ``rg --json`` run as before.
5. **grep_code, a Chinese pattern**: the same, where a pattern beyond ASCII adds a pass per legacy
   encoding that can write it (GB18030, Big5, Shift-JIS for this one).

Benchmarks print; they never fail.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paicli.tools.base import ToolContext  # noqa: E402
from paicli.tools.builtin.files import read_file  # noqa: E402
from paicli.tools.builtin.grep_engines import EXCLUDED_DIRS, find_rg  # noqa: E402
from paicli.tools.builtin.reading import window  # noqa: E402
from paicli.tools.builtin.search import grep_code  # noqa: E402

LINE = "    value = compute_total(items, discount=0.15)  # 计算折扣后的总价，读取配置\n"


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def tree(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"pkg{i % 20}" / f"mod{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"# 模块 {i}\n" + LINE * (10 + i % 40) + ("def 读取配置():\n    pass\n" if i % 50 == 0 else "")
        (folder / f"f{i}.py").write_bytes(text.encode("gbk" if i % 10 == 0 else "utf-8"))


def plain_rg(root: Path, pattern: str) -> None:
    cmd = [find_rg(), "--json", "--no-messages", "--hidden", "--sort", "path", "--max-count", "20", "--fixed-strings"]
    for name in sorted(EXCLUDED_DIRS):
        cmd += ["--glob", f"!{name}"]
    subprocess.run(cmd + ["-e", pattern, "--", str(root)], capture_output=True, check=False)


def rows(root: Path, files: int, runs: int) -> list[tuple[str, float, float]]:
    ctx = ToolContext(root=root)
    (root / "utf8.py").write_bytes((LINE * (1024 * 1024 // len(LINE.encode()))).encode())
    (root / "gbk.py").write_bytes((LINE * (1024 * 1024 // len(LINE.encode("gbk")))).encode("gbk"))
    (root / "big.log").write_bytes((LINE * (5 * 1024 * 1024 // len(LINE.encode()))).encode())
    tree(root / "src", files)
    src = ToolContext(root=root / "src")
    found = []
    out = [
        ("read_file whole, 1 MB UTF-8", median_ms(lambda: read_file({"path": "utf8.py"}, ctx), runs),
         median_ms(lambda: (root / "utf8.py").read_bytes().decode("utf-8", errors="replace"), runs)),
        ("read_file whole, 1 MB GBK", median_ms(lambda: read_file({"path": "gbk.py"}, ctx), runs),
         median_ms(lambda: (root / "gbk.py").read_bytes().decode("gbk"), runs)),
        ("read_file 200 lines of 5 MB", median_ms(lambda: read_file({"path": "big.log", "offset": 1000,
                                                                     "limit": 200}, ctx), runs),
         median_ms(lambda: window(root / "big.log", 1000, 200), runs)),
        (f"grep_code ASCII, {files} files", median_ms(lambda: found.append(grep_code({"pattern": "compute_total"}, src,
                                                                                       engine="ripgrep")), runs),
         median_ms(lambda: plain_rg(root / "src", "compute_total"), runs)),
        (f"grep_code Chinese, {files} files", median_ms(lambda: found.append(grep_code({"pattern": "读取配置"}, src,
                                                                                         engine="ripgrep")), runs),
         median_ms(lambda: plain_rg(root / "src", "读取配置"), runs)),
    ]
    print(f"   Chinese pattern: {found[-1].splitlines()[0]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = rows(Path(tmp).resolve(), args.files, args.runs)
    print(f"{'':34} {'ours ms':>9} {'baseline ms':>12} {'ratio':>7}")
    for name, ours, base in table:
        print(f"{name:34} {ours:9.1f} {base:12.1f} {ours / base:6.1f}×")


if __name__ == "__main__":
    main()
