"""Which shell script file a simple command runs, whether it is fresh, and reading it.

``bash F``, ``sh -- F``, ``source F`` / ``. F`` run F as a shell script; ``./F`` or ``dir/F``
does when F starts with a shell shebang or has none (bash then runs it itself); so do the hooks
in ``git -c core.hooksPath=DIR``. ``make`` runs its Makefile's recipes and ``npm``/``yarn``/
``pnpm`` the scripts of the nearest package.json (``paicli.tools.policy.recipes`` says which lines).
Other interpreters (``python x.py``, ``node x.js``) and compiled programs are not read.

A script is **fresh** when it was written or changed since this process started (its mtime or
ctime is at or after ``PROCESS_STARTED``; the ctime cannot be set back, so ``touch -d`` does not
hide a rewrite) or when it is not there yet. One exception: when only the ctime is that recent
(``chmod +x gradlew``, a ``chown``, a rename; or a write hidden by ``touch -d``), a file whose
content is byte for byte its entry in the git index is pre-existing (``paicli.tools.policy.git_blob``).
A model could still write a script, ``git add`` it and back-date it: three deliberate steps, and
the script still gets the rules for what it certainly does. A recent mtime is never excused by
git (``git add`` alone is easy). A fresh script is what a model could have written
to slip past the guard: it gets every rule, and what the guard cannot tell is refused. A
script that was already there (**pre-existing**: the repository's ``./gradlew``, the machine's
``~/.nvm/nvm.sh``) is refused only for what it certainly does (``paicli.tools.policy.scripts``); one
outside the project is not even read. A fresh one outside the project is refused unread.

This module touches the file system: ``CommandGuard.check`` runs in a worker thread.
"""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass

from paicli.tools.base import PROCESS_STARTED  # noqa: F401 (the guards read it here; see the note below)
from paicli.tools.policy.command_rules import inside, location
from paicli.tools.policy.git_blob import matches_index
from paicli.tools.policy.shell_parse import Doubt
from paicli.tools.policy.shell_words import SHELLS, STDIN_NAMES, Simple, Word, getopt, git_settings, script_file, shell_operand

# PROCESS_STARTED is taken when the tools' base module is first imported, before any tool can
# run: in `paicli -p`, the REPL and the Studio server alike it predates every file a tool wrote,
# however late the guards themselves are imported. A ToolContext is rebuilt for every batch of
# tool calls, so its creation time would make a script written one batch earlier look old.

# File systems stamp files with a coarse clock (a kernel tick behind time.time()), some round
# to whole seconds: a file stamped up to this long before the start still counts as fresh.
CLOCK_SLACK = 1.0

MAX_BYTES = 256 * 1024  # a larger fresh script is refused rather than parsed on every command

OUTSIDE = "禁止执行项目外的脚本 {}：不在项目根 {} 之内，且在 paicli 启动后写入或改动过"
UNKNOWN = Doubt("禁止执行路径无法确定的脚本（变量、命令替换、xargs 输入或去向不明的 cd）")
TOO_LARGE = "脚本 {} 超过 {} KB，无法检查"
BINARY = "脚本 {} 含二进制内容，无法检查"
UNREADABLE = "无法读取脚本 {}（{}），无法检查"

# Where a process without root can leave a script to run by path later: a shell script run by
# path outside the project is refused there; elsewhere it is an installed program.
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")


class Refused(Exception):
    """A script the guard refuses: ``reason``, and the script lines that led to it."""

    def __init__(self, reason: str, trail: tuple[str, ...] = ()):
        super().__init__(reason)
        self.reason, self.trail = reason, trail

    def within(self, step: str) -> Refused:
        return Refused(self.reason, (step, *self.trail))

    def text(self) -> str:
        return f"{self.reason}（{' → '.join(self.trail)}）" if self.trail else self.reason


@dataclass(frozen=True)
class Run:
    """A script file a command runs: ``shell`` (bash F), ``source`` or ``exec`` (./F)."""

    path: str  # absolute, symlinks resolved, inside the project
    shown: str  # relative to the project root, for messages
    how: str  # also "make" (a Makefile) and "npm" (a package.json): see paicli.tools.policy.recipes
    cwd: str | None  # the script runs in its caller's directory, not its own
    home: str | None
    fresh: bool  # judged strictly: see the module's docstring
    targets: tuple[str, ...] = ()  # make: goals and VAR=value; npm: the scripts to run


def runs(simple: Simple, root: str, started: float, strict: bool = True) -> list[Run]:
    """The script files ``simple`` runs (a glob can name several), but for pre-existing ones
    outside the project. Raises Refused for a fresh script outside the project and, when the
    text ``simple`` comes from is judged ``strict``ly, for a script whose path cannot be known."""
    found = _tool_runs(simple, root, started, strict) if simple.name in BUILD_TOOLS else []
    word, how = _script_word(simple, strict)  # ./bin/make is a script too, whatever its name
    if word is None:
        return found
    path = location(word, simple.cwd) if "{}" not in word.text else None  # {}: find -exec's file
    if path is None:
        if strict:
            raise Refused(UNKNOWN)
        return found
    real_root = os.path.realpath(root)
    for candidate in _expand(word.text, path, simple.cwd):
        real = os.path.realpath(candidate)
        new = fresh(real, started)
        if inside(real, real_root):
            found.append(Run(real, os.path.relpath(real, real_root), how, simple.cwd, simple.home, new))
        elif new and (how != "exec" or (_scratch(real, simple.home) and _shell_script(real))):
            raise Refused(OUTSIDE.format(word.text, real_root))
    return found


def _tool_runs(simple: Simple, root: str, started: float, strict: bool) -> list[Run]:
    """The Makefile ``make`` reads, the package.json whose scripts npm/yarn/pnpm run, the hooks
    of ``git -c core.hooksPath=DIR``."""
    found = BUILD_TOOLS[simple.name](simple)
    if found is None:
        return []
    how, place, targets, names = found
    if place is None or not place.known:
        if strict:
            raise Refused(UNKNOWN)
        return []
    directory = location(place, simple.cwd)
    if directory is None:
        if strict:
            raise Refused(UNKNOWN)
        return []
    if how == "hooks":
        paths = _listing(directory)
    elif how == "npm":
        paths = _nearest(directory, "package.json")
    else:
        paths = [os.path.join(directory, n) for n in names] if names else _first(directory, MAKEFILES)
    real_root = os.path.realpath(root)
    runs_found = []
    for path in paths:
        real = os.path.realpath(path)
        new = fresh(real, started)
        cwd = os.path.dirname(path) if how == "npm" else directory if how == "make" else simple.cwd
        if inside(real, real_root):
            runs_found.append(Run(real, os.path.relpath(real, real_root), "exec" if how == "hooks" else how, cwd,
                                  simple.home, new, targets))
        elif new and os.path.exists(real):
            raise Refused(OUTSIDE.format(path, real_root))
    return runs_found


MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
MAX_HOOKS = 64


def _make(simple: Simple) -> tuple[str, Word | None, tuple[str, ...], list[str]] | None:
    opts, operands = getopt(simple.args, "CfIjlWoe", frozenset({"--directory", "--file", "--makefile", "--include-dir",
                                                                 "--jobs", "--load-average", "--what-if", "--old-file",
                                                                 "--assume-new", "--assume-old", "--new-file"}), True)
    place: Word | None = Word(".")
    names = []
    for key, value in opts:
        if key in ("-C", "--directory") and value is not None:
            place = Word(os.path.join(place.text, value.text), place.known and value.known)
        elif key in ("-f", "--file", "--makefile") and value is not None:
            if not value.known:
                return "make", None, (), []
            if value.text == "-":
                return None  # the Makefile comes on stdin
            names.append(value.text)
    return "make", place, tuple(w.text for w in operands if w.known), names


NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
NPM_DIRECT = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart",
              "install": "install", "i": "install", "ci": "install", "clean-install": "install"}
PACKAGE_DIR_OPTIONS = frozenset({"--prefix", "-C", "--cwd", "--dir"})
PACKAGE_VALUE_OPTIONS = PACKAGE_DIR_OPTIONS | {"--workspace", "-w", "--filter", "-F", "--registry", "--loglevel"}


def _package(simple: Simple) -> tuple[str, Word | None, tuple[str, ...], list[str]] | None:
    place: Word | None = Word(".")
    operands: list[Word] = []
    args, i = simple.args, 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            break
        key, eq, value = text.partition("=")
        if key in PACKAGE_VALUE_OPTIONS:
            target = Word(value, args[i].known) if eq else (args[i + 1] if i + 1 < len(args) else None)
            i += 1 if eq else 2
            if key in PACKAGE_DIR_OPTIONS:
                place = target
            continue
        if not text.startswith("-"):
            operands.append(args[i])
        i += 1
    if not operands:  # bare `yarn` / `pnpm` installs; bare `npm` prints its help
        return None if simple.name == "npm" else ("npm", place, ("install",), [])
    verb = operands[0].text
    if verb in NPM_RUN:
        script = operands[1] if len(operands) > 1 else None
        if script is None:
            return None
        return ("npm", place if script.known else None, (script.text,), [])
    if verb in NPM_DIRECT:
        if NPM_DIRECT[verb] == "install" and len(operands) > 1:
            return None  # adding packages: their own scripts are npm's business, not the project's
        return "npm", place, (NPM_DIRECT[verb],), []
    if simple.name != "npm":  # `yarn build`, `pnpm lint`: a script when package.json has one
        return "npm", place, (verb,), []
    return None


def _hooks(simple: Simple) -> tuple[str, Word | None, tuple[str, ...], list[str]] | None:
    paths = [value for key, value in git_settings(simple) if key == "core.hookspath"]
    return ("hooks", paths[-1], (), []) if paths else None


BUILD_TOOLS = {"make": _make, "gmake": _make, "npm": _package, "yarn": _package, "pnpm": _package, "git": _hooks}


def _nearest(directory: str, name: str) -> list[str]:
    """``name`` in ``directory`` or its nearest ancestor that has one (npm looks upwards)."""
    current = os.path.normpath(directory)
    while True:
        if os.path.isfile(os.path.join(current, name)):
            return [os.path.join(current, name)]
        parent = os.path.dirname(current)
        if parent == current:
            return [os.path.join(directory, name)]  # none yet: the one this command may write
        current = parent


def _first(directory: str, names: tuple[str, ...]) -> list[str]:
    """The first of ``names`` in ``directory``; none yet: all of them (the command may write one)."""
    paths = [os.path.join(directory, n) for n in names]
    return next(([p] for p in paths if os.path.isfile(p)), paths)


def _listing(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))[:MAX_HOOKS]
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names if os.path.isfile(os.path.join(directory, n))]


def fresh(path: str, started: float) -> bool:
    """Written or changed since ``started``, or not there (yet); but a file whose metadata
    alone changed since (``chmod +x gradlew``) is still what git has for it is not."""
    try:
        info = os.stat(path)
    except OSError:
        return True
    since = started - CLOCK_SLACK
    if info.st_mtime >= since:
        return True
    return info.st_ctime >= since and not (stat.S_ISREG(info.st_mode) and matches_index(path))


def _expand(text: str, path: str, cwd: str | None) -> list[str]:
    """Every file a glob names (bash runs the first, the guard reads them all)."""
    if not glob.has_magic(text):
        return [path]
    if os.path.isabs(text) or cwd is None:
        return sorted(glob.glob(text)) or [path]
    return sorted(os.path.join(cwd, m) for m in glob.glob(text, root_dir=cwd)) or [path]


def _script_word(simple: Simple, strict: bool) -> tuple[Word | None, str]:
    name, args = simple.name, simple.args
    if name in SHELLS:
        if simple.stdin_args and shell_operand(simple)[1] is None and strict:
            raise Refused(UNKNOWN)  # `… | xargs bash`: the script is the first line of input
        return script_file(simple), "shell"
    if name in ("source", "."):
        operands = args[1:] if args and args[0].text == "--" else args
        if not operands:
            if simple.stdin_args and strict:
                raise Refused(UNKNOWN)
            return None, "source"
        return (None if operands[0].text in STDIN_NAMES else operands[0]), "source"
    if "/" in simple.words[0].text:
        return simple.words[0], "exec"
    return None, ""


def _shell_script(path: str) -> bool:
    """Whether a file run by path outside the project is a shell script: its first line says
    so (a program installed under HOME, such as a venv's interpreter, is not)."""
    try:
        with open(path, "rb") as f:
            return _runs_as_shell(f.read(512))
    except OSError:
        return False  # not there or not readable: not something the guard can call a script


def _scratch(path: str, home: str | None) -> bool:
    places = (*SCRATCH, *([home] if home else []))
    return any(path == p or inside(path, p) for p in places)


def read(run: Run) -> str | None:
    """The script's text; None when it is not there (bash reports that itself) or is not a
    shell script (``./F`` of a compiled program or a ``#!/usr/bin/env python`` file). What
    cannot be read raises Refused for a fresh script and is None for a pre-existing one (its
    run falls to the approval question)."""
    try:
        return _read(run)
    except Refused:
        if run.fresh:
            raise
        return None


def _read(run: Run) -> str | None:
    try:
        info = os.stat(run.path)
        if stat.S_ISDIR(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the guard forever
            raise Refused(UNREADABLE.format(run.shown, "不是普通文件"))
        if info.st_size > MAX_BYTES:
            raise Refused(TOO_LARGE.format(run.shown, MAX_BYTES // 1024))
        with open(run.path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(UNREADABLE.format(run.shown, exc.strerror or type(exc).__name__)) from None
    if len(data) > MAX_BYTES:  # it grew between stat and read
        raise Refused(TOO_LARGE.format(run.shown, MAX_BYTES // 1024))
    if run.how == "exec" and not _runs_as_shell(data):
        return None
    if b"\0" in data:
        raise Refused(BINARY.format(run.shown))
    # Invalid UTF-8 becomes U+FFFD, which never merges with the ASCII bytes shell syntax uses.
    return data.decode("utf-8", errors="replace")


def _runs_as_shell(data: bytes) -> bool:
    """A shell shebang (``#!/bin/sh``, ``#!/usr/bin/env -S bash -e``), or none on a text file."""
    if not data.startswith(b"#!"):
        return b"\0" not in data  # no shebang: bash runs a text file itself; a binary is a program
    words = data[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return not words or os.path.basename(words[0]) in SHELLS
