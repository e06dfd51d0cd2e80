"""Which files of a project the index reads, and why it leaves the others out.

The walk starts at the project's real path and never follows a symbolic link (a link to a file
or a folder, inside the project or out of it, is left out and counted), so every file it
reaches is inside the project, as the file tools' path guard requires. Left out, each with its
reason (``SKIP_REASONS``):

- ``ignored``: matched by a ``.gitignore`` or ``.paiignore`` (git's syntax, in any folder; a deeper
  file's rules win, ``!`` re-includes), or inside ``.git``/``.paicli``;
- ``vendored``: dependency and build folders (``node_modules``, ``vendor``, ``target``…) and Python
  virtual environments (a folder with a ``pyvenv.cfg``);
- ``binary``: a binary suffix here, a NUL byte in the first 8 KB when read (``paicli.codeindex.indexer``);
- ``generated``: lock files, minified bundles, source maps, protobuf output; when read, a
  ``@generated``/``DO NOT EDIT`` marker near the top or a line longer than ``MAX_LINE_CHARS``;
- ``huge``: more than ``max_file_bytes`` (1 MiB by default);
- ``symlink``; ``unreadable``.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from paicli.codeindex.options import DEFAULT_MAX_FILE_BYTES

SKIP_REASONS = {"ignored": "忽略规则", "vendored": "依赖/构建目录", "binary": "二进制", "generated": "生成文件",
                "huge": "过大", "symlink": "符号链接", "unreadable": "无法读取"}
IGNORE_FILES = (".gitignore", ".paiignore")
ALWAYS_IGNORED = frozenset({".git", ".paicli", ".hg", ".svn"})
VENDORED = frozenset({"node_modules", "vendor", "third_party", "bower_components", "jspm_packages",
                      "site-packages", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
                      ".gradle", ".idea", ".vscode", "target", "dist", "build", "coverage", ".next", ".nuxt",
                      ".cache", ".terraform", "Pods", "DerivedData", ".eggs"})
BINARY_SUFFIXES = frozenset("""
.png .jpg .jpeg .gif .bmp .ico .icns .webp .tif .tiff .psd .pdf .zip .gz .tgz .bz2 .xz .zst .7z .rar .tar .jar .war
.ear .class .so .dylib .dll .exe .o .obj .a .lib .pyc .pyo .pyd .whl .egg .bin .dat .db .sqlite .sqlite3 .wasm .ttf
.otf .woff .woff2 .eot .mp3 .mp4 .m4a .wav .ogg .flac .avi .mov .mkv .webm .dmg .iso .npy .npz .pkl .pickle .parquet
.onnx .pt .pth .h5 .ckpt .safetensors .xls .xlsx .doc .docx .ppt .pptx .key .keystore .p12 .der .deb .rpm
""".split())
GENERATED_NAMES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "poetry.lock",
                             "Pipfile.lock", "composer.lock", "go.sum", "Gemfile.lock", "uv.lock", "bun.lockb"})
GENERATED_SUFFIXES = (".min.js", ".min.css", ".map", ".pb.go", "_pb2.py", "_pb2_grpc.py", ".pb.h", ".pb.cc",
                      ".generated.ts", ".generated.cs", ".g.dart", ".designer.cs")


@dataclass(frozen=True)
class Found:
    rel: str  # project-relative, forward slashes
    size: int
    mtime_ns: int


@dataclass
class Walk:
    files: list[Found] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    truncated: bool = False  # stopped at ``limit`` files


def generated_name(name: str) -> bool:
    return name in GENERATED_NAMES or name.endswith(GENERATED_SUFFIXES)


def walk(root: Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, limit: int | None = None) -> Walk:
    """Every file the index should read, in a stable order; ``limit``: stop after that many."""
    result = Walk()
    _walk_dir(Path(os.path.realpath(root)), "", [], max_file_bytes, limit, result)
    return result


def _walk_dir(directory: Path, rel: str, rules: list[tuple[str, pathspec.PathSpec]], max_bytes: int,
              limit: int | None, result: Walk) -> None:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        result.skipped["unreadable"] += 1
        return
    rules = rules + _rules_in(directory, rel, entries)
    for entry in entries:
        if limit is not None and len(result.files) >= limit:
            result.truncated = True
            return
        path = f"{rel}{entry.name}"
        if entry.is_symlink():
            result.skipped["symlink"] += 1
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            result.skipped["unreadable"] += 1
            continue
        if stat.S_ISDIR(info.st_mode):
            reason = _dir_reason(entry.name, path, rules) or ("vendored" if _virtualenv(entry.path) else None)
            if reason:
                result.skipped[reason] += 1
            else:
                _walk_dir(Path(entry.path), path + "/", rules, max_bytes, limit, result)
        elif stat.S_ISREG(info.st_mode):
            reason = _file_reason(entry.name, path, info.st_size, rules, max_bytes)
            if reason:
                result.skipped[reason] += 1
            else:
                result.files.append(Found(path, info.st_size, info.st_mtime_ns))


def admitted(root: Path, rel: str, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Found | None:
    """One named file under the walk's rules (the files an edit touched): None when the walk
    would not reach it (a link on the way, an ignored or vendored folder) or would skip it."""
    root = Path(os.path.realpath(root))
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    rules: list[tuple[str, pathspec.PathSpec]] = []
    directory, prefix = root, ""
    for name in parts[:-1]:
        rules += _rules_in(directory, prefix, _entries(directory))
        directory, prefix = directory / name, f"{prefix}{name}/"
        if os.path.islink(directory) or not directory.is_dir() or _dir_reason(name, prefix[:-1], rules) \
                or _virtualenv(str(directory)):
            return None
    rules += _rules_in(directory, prefix, _entries(directory))
    path = directory / parts[-1]
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or _file_reason(parts[-1], "/".join(parts), info.st_size, rules, max_file_bytes):
        return None
    return Found("/".join(parts), info.st_size, info.st_mtime_ns)


def _entries(directory: Path) -> list[os.DirEntry]:
    try:
        return [e for e in os.scandir(directory) if e.name in IGNORE_FILES]
    except OSError:
        return []


def _rules_in(directory: Path, rel: str, entries: list[os.DirEntry]) -> list[tuple[str, pathspec.PathSpec]]:
    found = []
    names = {e.name for e in entries if e.name in IGNORE_FILES and e.is_file(follow_symlinks=False)}
    for name in IGNORE_FILES:
        if name in names:
            try:
                lines = (directory / name).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            found.append((rel, pathspec.GitIgnoreSpec.from_lines(lines)))
    return found


def ignored(path: str, rules: list[tuple[str, pathspec.PathSpec]]) -> bool:
    """git's answer: the deepest rule file with a matching pattern decides."""
    verdict = None
    for base, spec in rules:
        if path.startswith(base):
            include = spec.check_file(path[len(base):]).include
            verdict = include if include is not None else verdict
    return bool(verdict)


def _dir_reason(name: str, path: str, rules: list[tuple[str, pathspec.PathSpec]]) -> str | None:
    if name in ALWAYS_IGNORED or ignored(path + "/", rules):
        return "ignored"
    return "vendored" if name in VENDORED else None


def _virtualenv(path: str) -> bool:
    """A Python virtual environment (any name: .venv, venv, env), told by its pyvenv.cfg."""
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


def _file_reason(name: str, path: str, size: int, rules: list[tuple[str, pathspec.PathSpec]],
                 max_bytes: int) -> str | None:
    if ignored(path, rules):
        return "ignored"
    suffix = os.path.splitext(name)[1].lower()
    if suffix in BINARY_SUFFIXES:
        return "binary"
    if generated_name(name):
        return "generated"
    return "huge" if size > max_bytes else None
