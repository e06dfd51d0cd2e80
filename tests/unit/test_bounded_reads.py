"""read_file is bounded: binary files answer with type and size, huge files are streamed, and
what paicli writes under <project>/.paicli stays out of git."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from paicli.memory.context.offload import ToolResultOffloader
from paicli.tools.base import ToolContext
from paicli.tools.common import split_lines
from paicli.tools.builtin.files import read_file
from paicli.tools.builtin.reading import MAX_LINE_BYTES, count_lines, iter_lines

HUGE = 200 * 1024 * 1024
HEAD_BYTES = len(b"".join(b"head %d\n" % n for n in range(1, 1001)))


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(root=tmp_path.resolve())


def test_binary_file_answers_with_type_and_size_not_bytes(ctx):
    (ctx.root / "logo.dat").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 1000)
    result = read_file({"path": "logo.dat"}, ctx)
    assert result == "读取文件失败: logo.dat 是二进制文件（类型: image/png，大小: 1008 字节），不返回原始内容"
    assert read_file({"path": "logo.dat", "offset": 1, "limit": 5}, ctx) == result


def test_undecodable_data_without_nul_is_binary_but_latin1_text_is_text(ctx):
    (ctx.root / "blob.bin").write_bytes(bytes(range(128, 256)) * 64)
    assert "是二进制文件（类型: application/octet-stream，大小: 8192 字节）" in read_file({"path": "blob.bin"}, ctx)
    (ctx.root / "notes.txt").write_bytes(b"caf\xe9 au lait\n")
    assert read_file({"path": "notes.txt"}, ctx) == "文件内容（编码: Windows-1252）:\ncafé au lait\n"


def sparse_text_file(path: Path) -> None:
    """200 MB on paper, a few blocks on disk: text lines, a hole of NULs, text lines."""
    with path.open("wb") as fh:
        fh.write(b"".join(b"head %d\n" % n for n in range(1, 1001)))
        fh.seek(HUGE)
        fh.write(b"\ntail 1\r\ntail 2\rtail 3")


MEASURE = """
import resource, sys, time
from pathlib import Path
from paicli.tools.base import ToolContext
from paicli.tools.builtin.files import read_file
ctx = ToolContext(root=Path(sys.argv[1]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
results = [read_file({"path": "big.log", "offset": 3, "limit": 2}, ctx),
           read_file({"path": "big.log", "offset": 1001, "limit": 10}, ctx),
           read_file({"path": "big.log"}, ctx)]
elapsed = time.monotonic() - started
grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(repr((results, elapsed, grown_kb)))
"""


@pytest.mark.process
def test_huge_file_is_streamed_with_small_memory(tmp_path):
    sparse_text_file(tmp_path / "big.log")
    env_path = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", MEASURE, str(tmp_path)], capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    (head, tail, whole), elapsed, grown_kb = eval(done.stdout)
    assert head == "文件内容: big.log (lines 3-4 of 1004)\n    3 | head 3\n    4 | head 4\n...(已截断，可用 offset=5 继续读取)"
    # Line 1001 is the hole: one line of ~200 MB, shown cut to its start with its full size.
    assert tail.startswith("文件内容: big.log (lines 1001-1004 of 1004)\n 1001 | \0\0")
    assert tail.endswith(f"…(该行共 {HUGE - HEAD_BYTES} 字节，仅显示前 {MAX_LINE_BYTES} 字节)\n"
                         " 1002 | tail 1\n 1003 | tail 2\n 1004 | tail 3\n")
    assert len(tail) < MAX_LINE_BYTES + 500
    assert whole.startswith(f"文件过大（{HUGE + 22} 字节，超过 5MB），未返回全文；以下为前 200 行，请用 offset/limit 分段读取\n"
                            "文件内容: big.log (lines 1-200 of 1004)\n    1 | head 1\n")
    assert elapsed < 30  # three reads of 200 MB, streamed; memory is the real bound
    assert grown_kb < 50 * 1024  # a whole read would add 200 MB or more


def test_streamed_lines_match_split_lines_including_breaks_across_chunks(tmp_path):
    import paicli.tools.builtin.reading as reading

    text = b"a\r\nb\rc\n\nd\f\r" + b"x" * (MAX_LINE_BYTES + 5) + b"\r\n" + b"\xe4\xb8\xad\xe6\x96\x87\n"
    path = tmp_path / "t.txt"
    path.write_bytes(text)
    expected = split_lines(text.decode("utf-8"))
    for chunk in (1, 2, 3, 7, reading.CHUNK_BYTES):
        with path.open("rb") as fh:
            assert count_lines(fh, chunk) == len(expected)
        with path.open("rb") as fh:
            got = list(iter_lines(fh, chunk_bytes=chunk))
        assert got[:5] == expected[:5] and got[-1] == "中文", chunk
        assert got[5] == "x" * MAX_LINE_BYTES + f"…(该行共 {MAX_LINE_BYTES + 5} 字节，仅显示前 {MAX_LINE_BYTES} 字节)"
        with path.open("rb") as fh:
            assert list(iter_lines(fh, 4, chunk_bytes=chunk)) == got[3:], chunk


def test_offloaded_output_is_read_back_in_ranges(ctx):
    offloader = ToolResultOffloader(ctx.root, "s1", threshold=2000)
    summary = offloader.offload_if_oversized("execute_command", {}, "".join(f"row {n}\n" for n in range(1, 5001)))
    relative = summary.split("文件: ")[1].split("\n")[0]
    result = read_file({"path": relative, "offset": 4999, "limit": 200}, ctx)
    assert result == "文件内容: 001-execute_command.txt (lines 4999-5000 of 5000)\n 4999 | row 4999\n 5000 | row 5000\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_first_offload_makes_paicli_dir_ignored_but_shared_files_stay_visible(tmp_path):
    git(tmp_path, "init", "-q")
    ToolResultOffloader(tmp_path, "s1", threshold=2000).offload("grep_code", "x" * 5000)
    assert "*\n" in (tmp_path / ".paicli/.gitignore").read_text(encoding="utf-8")
    (tmp_path / ".paicli/PAI.md").write_text("team notes\n", encoding="utf-8")
    (tmp_path / ".paicli/PAI.local.md").write_text("mine\n", encoding="utf-8")
    (tmp_path / ".paicli/prompts/agent").mkdir(parents=True)
    (tmp_path / ".paicli/prompts/agent/base.md").write_text("override\n", encoding="utf-8")
    (tmp_path / "main.py").write_text("print()\n", encoding="utf-8")
    git(tmp_path, "add", ".")
    staged = git(tmp_path, "diff", "--cached", "--name-only").split()
    assert staged == [".paicli/PAI.md", ".paicli/prompts/agent/base.md", "main.py"]


def test_existing_paicli_gitignore_is_left_alone(tmp_path):
    (tmp_path / ".paicli").mkdir()
    (tmp_path / ".paicli/.gitignore").write_text("mine\n", encoding="utf-8")
    ToolResultOffloader(tmp_path, "s1", threshold=2000).offload("grep_code", "x" * 5000)
    assert (tmp_path / ".paicli/.gitignore").read_text(encoding="utf-8") == "mine\n"


GREP_MEASURE = """
import resource, sys
from pathlib import Path
from paicli.tools.base import ToolContext
from paicli.tools.builtin.search import grep_code
ctx = ToolContext(root=Path(sys.argv[1]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = grep_code({"pattern": "^head 500$", "regex": True, "context_lines": 1}, ctx)
print(repr((result, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)))
"""


@pytest.mark.process
def test_grep_context_lines_of_a_hit_in_a_huge_file_are_streamed(tmp_path):
    with (tmp_path / "big.log").open("wb") as fh:  # ripgrep reports hits before its first buffer with a NUL
        fh.write(b"".join(b"head %d\n" % n for n in range(1, 100_001)))
        fh.truncate(HUGE)
    done = subprocess.run([sys.executable, "-c", GREP_MEASURE, str(tmp_path)], capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    result, grown_kb = eval(done.stdout)
    assert result.startswith("匹配结果 1 条 (engine=ripgrep):\n"
                             "1. big.log:500\n      499 | head 499\n   >  500 | head 500\n      501 | head 501\n")
    assert grown_kb < 50 * 1024
