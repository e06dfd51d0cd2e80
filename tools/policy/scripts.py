"""CommandGuard reads the shell scripts a command runs and judges them line by line.

``write_file("clean.sh", "rm -rf ~")`` then ``bash clean.sh`` would otherwise slip past a guard
that only reads the command line. Each script a command runs (``paicli.tools.policy.script_files``)
is parsed like a command, in the caller's directory, and every top-level command in it gets
the same rules; scripts that run scripts are followed up to MAX_DEPTH. A refusal names the
script and the line: ``禁止 rm -rf 删除全盘或用户目录（脚本 clean.sh 第 1 行: rm -rf ~）``.

How strictly depends on the script. A **fresh** one (written since paicli started, or by the
same command) gets everything: what the guard cannot tell (a computed command name, ``eval``,
syntax bashlex lacks, too large, binary, unreadable, too deep: a ``Doubt``) is refused. A
**pre-existing** one (``./gradlew``, ``./configure``) is refused only for a rule it certainly
breaks; its doubts fall through to the approval question, as any command does.

A script that is not there runs (bash reports it), unless the same command creates it: then
nothing could be read in advance. ``source`` runs a script in the caller's shell, so one that
leaves another directory or HOME behind is refused (a pre-existing one only when it certainly
does): the rest of the command was judged without it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from paicli.tools.base import PolicyError
from paicli.tools.policy.command_rules import FORK_BOMB, judge, location, piped_script
from paicli.tools.policy.recipes import MAX_INCLUDES, include_names, make_commands, npm_commands
from paicli.tools.policy.script_files import Refused, Run, read, runs
from paicli.tools.policy.shell_parse import Doubt, Parsed, parse
from paicli.tools.policy.shell_words import Simple, Word

MAX_DEPTH = 3  # scripts running scripts; a deeper fresh one is refused, a pre-existing one not read
LINE_CHARS = 60  # how much of the refused line the message quotes
CASE_ARM = re.compile(r"^(\s*\(?[^()\s][^()]*\)\s*)(.*?)\s*(;;|;&|;;&)?\s*$")  # pattern) command ;;
WRITERS = frozenset({"tee", "cp", "mv", "ln", "install"})  # commands whose file operand they write

AT = "脚本 {} 第 {} 行: {}"
TOO_DEEP = Doubt("脚本调用脚本超过 {} 层，无法检查".format(MAX_DEPTH))
WRITTEN_HERE = "脚本 {} 由同一条命令生成，运行前无法检查：请先写好脚本，再单独运行"
MOVES = "被 source 的脚本 {} 会改变当前目录或 HOME，之后的命令无法检查"
ALIASES = "被 source 的脚本 {} 定义了别名，之后的命令无法检查"

Unparseable = Callable[[str], "str | None"]  # the guard's verdict on text bashlex cannot parse


@dataclass(frozen=True)
class _Judge:
    root: str
    unparseable: Unparseable
    started: float  # when paicli started: a script changed since is fresh


def script_refusal(parsed: Parsed, command: str, root: str, unparseable: Unparseable, started: float) -> str | None:
    """Why a script that ``command`` runs is refused, or None."""
    written = _written(parsed)
    try:
        for simple in parsed.simples:
            for run in runs(simple, root, started):
                if run.path in written:  # overwritten before it runs: what is there now is not it
                    raise Refused(WRITTEN_HERE.format(run.shown))
                _judge_file(run, command, _Judge(root, unparseable, started), 0)
    except Refused as refused:
        return refused.text()
    return None


def _judge_file(run: Run, source: str, j: _Judge, depth: int) -> None:
    strict = run.fresh
    if depth >= MAX_DEPTH:
        if strict:
            raise Refused(TOO_DEEP)
        return
    text = read(run)
    if text is None:
        if not os.path.exists(run.path) and _mentions(source, os.path.basename(run.path)) > 1:
            raise Refused(WRITTEN_HERE.format(run.shown))
        return
    if run.how in ("make", "npm"):
        _judge_recipes(run, text, j, depth)
        return
    out, readable = _parsed(text, run.cwd, run.home)
    if not readable:  # syntax bashlex lacks: judged line by line
        _judge_lines(run, text, j, depth)
        return
    doubts = {start: (at, reason) for start, at, reason in out.doubts}
    for start, part in _by_top(out):
        if strict and start in doubts:  # a computed command name, or nesting too deep
            raise Refused(doubts[start][1], (_at(run, text, doubts[start][0]),))
        _judge_part(run, text, part, start, j, depth)
    if run.how == "source" and _moves(out, run):
        raise Refused(MOVES.format(run.shown))
    if run.how == "source" and run.fresh and out.aliases:
        raise Refused(ALIASES.format(run.shown))


def _judge_part(run: Run, text: str, part: Parsed, start: int, j: _Judge, depth: int, offset: int = 0,
                where: Callable[[int], str] | None = None) -> None:
    """One top-level command of a script: its rules, then the scripts it runs. Positions in
    ``part`` are ``offset`` characters into ``text`` (a line parsed alone); ``where``, when
    given, names the line instead (a recipe is not the text of its file)."""
    def at_(at: int) -> str:
        return where(at) if where else _at(run, text, offset + at)

    for reason, at in _reasons(part, j.root, start):
        if run.fresh or not isinstance(reason, Doubt):
            raise Refused(reason, (at_(at),))
    for simple in part.simples:
        try:
            for inner in runs(simple, j.root, j.started, run.fresh):
                _judge_file(inner, text, j, depth + 1)
        except Refused as refused:
            raise refused.within(at_(simple.at)) from None


def _judge_recipes(run: Run, text: str, j: _Judge, depth: int) -> None:
    """The command lines a Makefile (and the files it includes) or a package.json runs
    (``paicli.tools.policy.recipes``), each judged like a line of a script in its file, in the
    directory make / npm runs it; a line is judged strictly when its own file is fresh."""
    files = {"": (run, text)}
    try:
        if run.how == "make":
            files.update(_includes(run, text, j))
            goals = [t for t in run.targets if "=" not in t]
            assigned = dict(t.split("=", 1) for t in run.targets if "=" in t)
            included = {name: body for name, (_, body) in files.items() if name}
            commands = make_commands(text, goals, assigned, run.cwd or "", included)
        else:
            commands = [(("", number), command) for number, command in npm_commands(text, list(run.targets))]
    except ValueError:  # not JSON: npm refuses to run it
        return
    for (name, number), command in commands:
        owner, body = files[name]
        lines = body.split("\n")
        shown = lines[number - 1] if run.how == "make" and number <= len(lines) else command  # npm: the script
        here = AT.format(owner.shown, number, _excerpt(shown))
        out, readable = _parsed(command, run.cwd, run.home)
        if not readable:
            reason = j.unparseable(command)
            if reason and (owner.fresh or not isinstance(reason, Doubt)):
                raise Refused(reason, (here,))
            continue
        if owner.fresh and out.doubts:
            raise Refused(out.doubts[0][2], (here,))
        for start, part in _by_top(out):
            _judge_part(owner, command, part, start, j, depth, where=lambda _at, here=here: here)


def _includes(run: Run, text: str, j: _Judge) -> dict[str, tuple[Run, str]]:
    """The files a Makefile includes by a literal name, relative to where make runs, read as
    scripts are (inside the project; a fresh one outside is refused), MAX_INCLUDES files."""
    found: dict[str, tuple[Run, str]] = {}
    queue = include_names(text)
    while queue and len(found) < MAX_INCLUDES:
        name = queue.pop(0)
        if name in found:
            continue
        for included in runs(Simple((Word("make"), Word("-f"), Word(name)), run.cwd, run.home), j.root, j.started,
                             run.fresh):
            body = read(included)
            if body is not None:
                found[name] = (included, body)
                queue.extend(include_names(body))
    return found


def _reasons(part: Parsed, root: str, start: int) -> Iterator[tuple[str, int]]:
    """Every rule ``part`` breaks and where, in ``command_rules.refusal``'s order."""
    if part.recursive_calls:
        yield FORK_BOMB, start
    for simple in part.simples:
        reason = judge(simple, root)
        if reason:
            yield reason, simple.at
    for stages in part.pipelines:
        reason = piped_script(stages)
        if reason:
            yield reason, start


def _moves(out: Parsed, run: Run) -> bool:
    """Whether a sourced script leaves another directory or HOME behind; for a pre-existing
    one, only when that is certain (a ``cd`` to a known place, HOME assigned)."""
    if out.home != run.home:
        return True
    return out.cwd != run.cwd and (run.fresh or out.cwd is not None)


def _judge_lines(run: Run, text: str, j: _Judge, depth: int) -> None:
    """A script bashlex cannot read as a whole: a fresh one gets the guard's text rules, which
    refuse it when it mentions a watched command; a pre-existing one is judged line by line,
    each line bashlex reads by the parsed rules, any other by the reference's text rules."""
    if run.fresh:
        lines = text.splitlines()
        reason = j.unparseable(text)
        if reason is None:
            return
        number = next((i for i, line in enumerate(lines, 1) if j.unparseable(line)), None)
        trail = (AT.format(run.shown, number, _excerpt(lines[number - 1])),) if number else (f"脚本 {run.shown}",)
        raise Refused(reason, trail)
    offset = 0
    for number, line in enumerate(text.split("\n"), 1):
        at, offset = offset, offset + len(line) + 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        arm = CASE_ARM.match(line)  # `  a) cmd ;;`: bashlex reads the command alone
        body, at = (arm.group(2), at + arm.start(2)) if arm else (line, at)
        out, readable = _parsed(body, run.cwd, run.home)
        if not readable:
            reason = j.unparseable(line)
            if reason and not isinstance(reason, Doubt):
                raise Refused(reason, (AT.format(run.shown, number, _excerpt(line)),))
            continue
        for start, part in _by_top(out):
            _judge_part(run, text, part, start, j, depth, at)


def _by_top(parsed: Parsed) -> list[tuple[int, Parsed]]:
    """Each top-level command's start offset and what it alone runs."""
    found, last = [], (0, 0, 0)
    for start, *ends in parsed.tops:
        (a, b, c), last = last, (ends[0], ends[1], ends[2])
        found.append((start, Parsed(parsed.simples[a:last[0]], parsed.pipelines[b:last[1]],
                                    parsed.recursive_calls[c:last[2]])))
    return found


@functools.lru_cache(maxsize=4096)
def _parsed(text: str, cwd: str | None, home: str | None) -> tuple[Parsed, bool]:
    """What a script runs (with the top-level commands the walk gave up on in ``doubts``), and
    whether bashlex could read it. Cached by content: bashlex takes ~15 ms per KB, and a test
    script runs again and again."""
    out = Parsed()
    try:
        parse(text, cwd, home, out, lenient=True)
    except PolicyError as exc:  # nesting too deep inside a first word: not one top-level command
        out.doubts.append((out.at, out.at, exc.reason))
    except Exception:  # bashlex's own errors for syntax it lacks
        return out, False
    return out, True


def _written(parsed: Parsed) -> set[str]:
    """Files the command writes before a script in it could run: redirect targets, ``tee``'s
    files, the destination of ``cp`` / ``mv`` / ``ln`` / ``install``."""
    paths = set()
    for simple in parsed.simples:
        operands = [w for w in simple.args if not w.text.startswith("-")]
        for word in operands if simple.name in (">", "tee") else operands[-1:] if simple.name in WRITERS else ():
            path = location(word, simple.cwd)
            if path is not None:
                paths.add(os.path.realpath(path))
    return paths


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
