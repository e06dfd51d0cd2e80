"""The shell command lines ``make`` and ``npm``/``yarn``/``pnpm`` would run, read from the
Makefile or package.json, for the command guard (``paicli.tools.policy.scripts`` judges them).

Pure functions over the file's text. ``npm_commands`` returns ``(line number, command text)``
pairs, ``make_commands`` ``((file, line number), command text)`` (file ``""``: the Makefile, else
the name an ``include`` gave), the line being the one a refusal names.

``make_commands`` reads a Makefile the way make would for the goals given (none: the default
goal, the first target not starting with ``.``): their recipe lines and their prerequisites'
(explicit rules, then ``%`` pattern rules), at most ``MAX_TARGETS`` targets; the ``$(shell …)``
calls and ``VAR != …`` assignments of the whole file (make runs those while reading it).
Variables are expanded from the file's assignments and the command line's ``VAR=value``
(recursively, ``MAX_EXPANSION`` deep); ``$$`` is ``$``; ``$@ $< $^ $*`` are the target's;
``$(HOME)``/``$(PWD)`` become the shell's ``$HOME``/``$PWD``; any other variable or function the
file does not define becomes ``${__make_NAME}``, which the guard reads as a value it cannot know.
Conditionals are not evaluated (every branch is read). ``include`` / ``-include`` / ``sinclude``
of the names the caller read (``includes``, see ``include_names``) are spliced in where they
stand, ``MAX_INCLUDES`` deep.

``npm_commands`` returns the scripts ``npm run NAME`` runs: ``preNAME``, ``NAME``, ``postNAME``.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field

MAX_TARGETS = 256
MAX_EXPANSION = 10
MAX_INCLUDES = 8  # included files read, and how deep includes nest

Line = tuple[str, int]  # the file ("" for the Makefile itself, else its include name) and the line

_ASSIGN = re.compile(r"^\s*(?:(?:export|override|private)\s+)*([^\s:#=!?+]+)\s*(::?=|:::=|\?=|\+=|!=|=)\s*(.*)$")
_RULE = re.compile(r"^([^\t#:=][^:=]*?)\s*(::?)(?!=)\s*(.*)$")
_CONDITIONAL = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef|else|endif|vpath|unexport)\b")
_INCLUDE = re.compile(r"^\s*(-include|sinclude|include)\s+(.*)$")
_BUILTIN = {"MAKE": "make", "RM": "rm -f", "CC": "cc", "CXX": "g++", "AR": "ar", "SHELL": "/bin/sh", "MAKEFLAGS": "",
            "HOME": "$$HOME", "PWD": "$$PWD", "MAKECMDGOALS": ""}  # values are make text: $$ is $


@dataclass
class _Rule:
    targets: list[str]
    prereqs: list[str]
    recipe: list[tuple[Line, str]] = field(default_factory=list)


def include_names(text: str) -> list[str]:
    """The files a Makefile's ``include`` lines name literally (no variables, no globs)."""
    names = []
    for _, line in _logical_lines(text, ""):
        match = None if line.startswith("\t") else _INCLUDE.match(_strip_comment(line))
        if match:
            names.extend(n for n in match.group(2).split() if not re.search(r"[$*?\[]", n))
    return names


def make_commands(text: str, goals: list[str], assigned: dict[str, str], directory: str,
                  includes: dict[str, str] | None = None) -> list[tuple[Line, str]]:
    variables = dict(_BUILTIN, CURDIR=directory)
    lines = _spliced(text, "", includes or {}, ())
    parse_time: list[tuple[Line, str]] = []
    rules: list[_Rule] = []
    oneshell = False
    in_define: str | None = None
    for number, line in lines:
        if in_define is not None:
            if line.strip() == "endef":
                in_define = None
            else:
                variables[in_define] = (variables.get(in_define, "") + "\n" + line).lstrip("\n")
            continue
        if line.startswith("\t") and rules:
            rules[-1].recipe.append((number, line[1:]))
            continue
        bare = _strip_comment(line)
        if not bare.strip() or _CONDITIONAL.match(bare):
            continue
        if bare.strip().startswith("define "):
            in_define = bare.strip()[7:].strip().rstrip("=:!?+ ").strip()
            variables[in_define] = ""
            continue
        assignment = _ASSIGN.match(bare)
        if assignment:
            name, op, value = assignment.groups()
            if op == "!=":
                parse_time.append((number, value))
            if op == "?=" and name in variables and name not in _BUILTIN:
                continue
            variables[name] = variables.get(name, "") + " " + value if op == "+=" else value
            continue
        rule = _RULE.match(bare)
        if rule:
            targets, _, rest = rule.groups()
            prereqs, _, inline = rest.partition(";")
            if _ASSIGN.match(prereqs):  # target: VAR = value (a target-specific variable)
                continue
            if ":" in prereqs:  # static pattern rule: targets: pattern: prereq-patterns
                prereqs = prereqs.split(":", 1)[1]
            expanded = _expand(targets, variables, {}, 0).split()
            oneshell = oneshell or ".ONESHELL" in expanded
            rules.append(_Rule(expanded, _expand(prereqs.replace("|", " "), variables, {}, 0).split()))
            if inline.strip():
                rules[-1].recipe.append((number, inline))
    variables.update(assigned)
    for number, line in lines:
        for call in _shell_calls(line):
            parse_time.append((number, call))
    wanted = goals or [_default_goal(rules, variables)]
    return parse_time + _recipes(rules, [g for g in wanted if g], variables, oneshell)


def _spliced(text: str, name: str, includes: dict[str, str], within: tuple[str, ...]) -> list[tuple[Line, str]]:
    found: list[tuple[Line, str]] = []
    for where, line in _logical_lines(text, name):
        match = None if line.startswith("\t") else _INCLUDE.match(_strip_comment(line))
        if not match:
            found.append((where, line))
            continue
        for included in match.group(2).split():
            if included in includes and included not in within and len(within) < MAX_INCLUDES:
                found.extend(_spliced(includes[included], included, includes, (*within, included)))
    return found


def _recipes(rules: list[_Rule], goals: list[str], variables: dict[str, str], oneshell: bool) -> list[tuple[Line, str]]:
    found: list[tuple[Line, str]] = []
    seen: set[str] = set()
    queue = list(goals)
    while queue and len(seen) < MAX_TARGETS:
        target = queue.pop(0)
        if target in seen:
            continue
        seen.add(target)
        for rule, stem in _rules_for(rules, target):
            prereqs = [p.replace("%", stem) if stem is not None else p for p in rule.prereqs]
            queue.extend(prereqs)
            auto = {"@": target, "<": prereqs[0] if prereqs else "", "^": " ".join(prereqs), "?": " ".join(prereqs),
                    "+": " ".join(prereqs), "*": stem if stem is not None else "${__make_stem}"}
            lines = [(n, _expand(_strip_prefix(r), variables, auto, 0)) for n, r in rule.recipe]
            if oneshell and lines:
                found.append((lines[0][0], "\n".join(text for _, text in lines)))
            else:
                found.extend(lines)
    return found


def _rules_for(rules: list[_Rule], target: str) -> list[tuple[_Rule, str | None]]:
    explicit = [(r, None) for r in rules if target in r.targets]
    if any(r.recipe for r, _ in explicit):
        return explicit
    for rule in rules:
        for pattern in rule.targets:
            if "%" in pattern and rule.recipe and fnmatch.fnmatchcase(target, pattern.replace("%", "*")):
                head, _, tail = pattern.partition("%")
                return [*explicit, (rule, target[len(head):len(target) - len(tail) or None])]
    return explicit


def _default_goal(rules: list[_Rule], variables: dict[str, str]) -> str:
    if variables.get(".DEFAULT_GOAL"):
        return variables[".DEFAULT_GOAL"].strip()
    for rule in rules:
        for target in rule.targets:
            if not target.startswith(".") and "%" not in target:
                return target
    return ""


def _expand(text: str, variables: dict[str, str], auto: dict[str, str], depth: int) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt in "({":
            end = _closing(text, i + 1)
            out.append(_reference(text[i + 2:end], variables, auto, depth))
            i = end + 1
        else:
            out.append(_reference(nxt, variables, auto, depth))
            i += 2
    return "".join(out)


def _reference(name: str, variables: dict[str, str], auto: dict[str, str], depth: int) -> str:
    if name in auto:
        return auto[name]
    if len(name) == 2 and name[0] in auto and name[1] in "DF":  # $(@D), $(<F)
        value = auto[name[0]]
        return (value.rsplit("/", 1)[0] if "/" in value else ".") if name[1] == "D" else value.rsplit("/", 1)[-1]
    if name in variables and depth < MAX_EXPANSION:
        return _expand(variables[name], variables, auto, depth + 1)
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name.split()[0] if name.split() else "x")[:40]
    return "${__make_%s}" % safe  # a function, or a variable this file does not set


def _closing(text: str, start: int) -> int:
    opening = text[start]
    closing = ")" if opening == "(" else "}"
    depth = 0
    for j in range(start, len(text)):
        if text[j] == opening:
            depth += 1
        elif text[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def _shell_calls(line: str) -> list[str]:
    calls = []
    for match in re.finditer(r"\$[({]shell\s", line):
        end = _closing(line, match.start() + 1)
        calls.append(line[match.end():end])
    return calls


def _logical_lines(text: str, name: str) -> list[tuple[Line, str]]:
    """Lines with their continuations joined, each with the number of its first line. A recipe
    keeps no backslash-newline (the shell would remove it); other lines get a space."""
    found: list[tuple[Line, str]] = []
    raw = text.split("\n")
    i = 0
    while i < len(raw):
        number, line = i + 1, raw[i]
        while line.endswith("\\") and not line.endswith("\\\\") and i + 1 < len(raw):
            i += 1
            nxt = raw[i]
            line = line[:-1] + (nxt[1:] if line.startswith("\t") and nxt.startswith("\t") else
                                nxt if line.startswith("\t") else " " + nxt.lstrip())
        found.append(((name, number), line))
        i += 1
    return found


def _strip_comment(line: str) -> str:
    match = re.search(r"(?<!\\)#", line)
    return line[:match.start()] if match else line


def _strip_prefix(line: str) -> str:
    return re.sub(r"^[\s@+-]*", "", line)


NPM_LIFECYCLE = {"install": ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare",
                             "postprepare"],
                 "restart": ["prerestart", "restart", "stop", "start", "postrestart"]}


def npm_commands(text: str, names: list[str]) -> list[tuple[int, str]]:
    """The scripts of package.json ``text`` that running ``names`` runs, in order, with the
    line each is on. Raises ValueError when the file is not a JSON object."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("package.json is not an object")
    scripts = data.get("scripts")
    if not isinstance(scripts, dict):
        return []
    found = []
    for name in names:
        for step in NPM_LIFECYCLE.get(name) or [f"pre{name}", name, f"post{name}"]:
            command = scripts.get(step)
            if isinstance(command, str):
                found.append((_line_of(text, step), command))
    return found


def _line_of(text: str, key: str) -> int:
    start = max(text.find('"scripts"'), 0)
    match = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, start)
    return text.count("\n", 0, match.start()) + 1 if match else 1
