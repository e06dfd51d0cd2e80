"""CommandGuard reads the shell scripts a command runs and judges them line by line.

``write_file("clean.sh", "rm -rf ~")`` then ``bash clean.sh`` would otherwise slip past a guard
that only reads the command line. Each script a command runs (``tools.policy.script_files``)
is parsed like a command, in the caller's directory, and every top-level command in it gets
the same rules; scripts that run scripts are followed up to MAX_DEPTH. A refusal names the
script and the line: ``禁止 rm -rf 删除全盘或用户目录（脚本 clean.sh 第 1 行: rm -rf ~）``.

A script that is not there runs (bash reports it), unless the same command creates it: then
nothing could be read in advance. ``source`` runs a script in the caller's shell, so one that
leaves another directory or HOME behind is refused: the rest of the command was judged without it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable

from tools.base import PolicyError
from tools.policy.command_rules import refusal
from tools.policy.script_files import Refused, Run, read, runs
from tools.policy.shell_parse import Parsed, parse

MAX_DEPTH = 3  # scripts running scripts; a deeper one is refused
LINE_CHARS = 60  # how much of the refused line the message quotes

AT = "脚本 {} 第 {} 行: {}"
TOO_DEEP = "脚本调用脚本超过 {} 层，无法检查".format(MAX_DEPTH)
WRITTEN_HERE = "脚本 {} 由同一条命令生成，运行前无法检查：请先写好脚本，再单独运行"
MOVES = "被 source 的脚本 {} 会改变当前目录或 HOME，之后的命令无法检查"

Unparseable = Callable[[str], "str | None"]  # the guard's verdict on text bashlex cannot parse


def script_refusal(parsed: Parsed, command: str, root: str, unparseable: Unparseable) -> str | None:
    """Why a script that ``command`` runs is refused, or None."""
    try:
        _judge_runs(parsed, command, root, unparseable, 0)
    except Refused as refused:
        return refused.text()
    return None


def _judge_runs(parsed: Parsed, source: str, root: str, unparseable: Unparseable, depth: int) -> None:
    for simple in parsed.simples:
        for run in runs(simple, root):
            _judge_file(run, source, root, unparseable, depth)


def _judge_file(run: Run, source: str, root: str, unparseable: Unparseable, depth: int) -> None:
    if depth >= MAX_DEPTH:
        raise Refused(TOO_DEEP)
    text = read(run)
    if text is None:
        if not os.path.exists(run.path) and _mentions(source, os.path.basename(run.path)) > 1:
            raise Refused(WRITTEN_HERE.format(run.shown))
        return
    out, error, readable = _parsed(text, run.cwd, run.home)
    if error is not None:  # a computed command name, or nesting too deep
        raise Refused(error, (_at(run, text, out.at),))
    if not readable:  # syntax bashlex lacks: the guard's text rules, line by line
        _judge_unparseable(run, text, unparseable)
        return
    for start, part in _by_top(out):
        reason = refusal(part, root)
        if reason:
            raise Refused(reason, (_at(run, text, _first_refused(part, root, start)),))
        for simple in part.simples:
            try:
                _judge_runs(Parsed([simple]), text, root, unparseable, depth + 1)
            except Refused as inner:
                raise inner.within(_at(run, text, simple.at)) from None
    if run.how == "source" and (out.cwd, out.home) != (run.cwd, run.home):
        raise Refused(MOVES.format(run.shown))


def _by_top(parsed: Parsed) -> list[tuple[int, Parsed]]:
    """Each top-level command's start offset and what it alone runs."""
    found, last = [], (0, 0, 0)
    for start, *ends in parsed.tops:
        (a, b, c), last = last, (ends[0], ends[1], ends[2])
        found.append((start, Parsed(parsed.simples[a:last[0]], parsed.pipelines[b:last[1]],
                                    parsed.recursive_calls[c:last[2]])))
    return found


@functools.lru_cache(maxsize=32)
def _parsed(text: str, cwd: str | None, home: str | None) -> tuple[Parsed, str | None, bool]:
    """What a script runs, the PolicyError that stopped the walk, and whether bashlex could read
    it. Cached by content: bashlex takes ~15 ms per KB, and a test script runs again and again."""
    out = Parsed()
    try:
        parse(text, cwd, home, out)
    except PolicyError as exc:
        return out, exc.reason, True
    except Exception:  # bashlex's own errors for syntax it lacks
        return out, None, False
    return out, None, True


def _first_refused(part: Parsed, root: str, start: int) -> int:
    """Where the refused simple command starts; the top-level command's start for a pipeline."""
    return next((s.at for s in part.simples if refusal(Parsed([s]), root)), start)


def _judge_unparseable(run: Run, text: str, unparseable: Unparseable) -> None:
    reason = unparseable(text)
    if reason is None:
        return
    lines = text.splitlines()
    number = next((i for i, line in enumerate(lines, 1) if unparseable(line)), None)
    trail = (AT.format(run.shown, number, _excerpt(lines[number - 1])),) if number else (f"脚本 {run.shown}",)
    raise Refused(reason, trail)


def _mentions(source: str, name: str) -> int:
    """How often ``name`` appears as a file name in ``source`` (``x.sh`` is not in ``x.sh.bak``)."""
    return len(re.findall(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", source))


def _at(run: Run, text: str, offset: int) -> str:
    """The script and the whole line ``offset`` is on."""
    start = text.rfind("\n", 0, offset) + 1
    return AT.format(run.shown, text.count("\n", 0, start) + 1, _excerpt(text[start:].split("\n", 1)[0]))


def _excerpt(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS - 1] + "…"
