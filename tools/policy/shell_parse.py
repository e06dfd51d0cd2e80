"""A shell command as bash would run it, for CommandGuard (paicli issue 10, item 7).

``parse`` walks bashlex's syntax tree and returns every simple command that would run: in
lists, pipelines, subshells, ``{ }`` groups, loops, function bodies, ``$(…)`` and ``<(…)``,
``bash -c`` strings and literal text fed to a shell's or ``source``'s stdin (parsed again,
recursively), behind wrappers (``env``, ``nice``, ``xargs``, ``find -exec``, ``flock`` …, see
``shell_words.unwrap``), ``trap`` actions (judged where they are set and again where the text
ends, as an EXIT trap runs), aliases defined earlier (always expanded, whatever
``expand_aliases`` says) and the file ``BASH_ENV=F`` / ``ENV=F`` name (a ``source F``).
bashlex finds the words; ``shell_quote.expand`` reads each from its source text as bash does
(quote removal, ``~``, ``$HOME`` and ``$PWD`` when known); ``cd`` is followed through a list,
so ``cd ~ && rm -rf ./*`` runs ``rm`` in the home directory.

It never touches the file system (it runs on the event loop, where ``langgraph dev`` refuses
blocking calls) and never runs anything. A command whose name is computed (``$(…)``, backticks,
``$X``, ``eval``) raises ``PolicyError`` here: no rule can judge a command it cannot name.
Every reason this module raises is a ``Doubt``: it says the guard cannot tell, not that the
command is dangerous (a script that was already there is not refused for a doubt).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any

from paicli.tools.base import PolicyError
from paicli.tools.policy.shell_quote import expand
from paicli.tools.policy.shell_quote import heredoc as read_heredoc
from paicli.tools.policy.shell_words import (SHELLS, STDIN_NAMES, STDIN_SCRIPTS, Simple, Word, has_braces, literal_output,
                                      script_file, script_source, trap_action, unwrap)



class Doubt(str):
    """A refusal reason that means "the guard cannot tell" (a computed name, a path nobody can
    know, text it cannot read), as opposed to a rule the command certainly breaks. It compares
    equal to its text; ``isinstance(reason, Doubt)`` is the flag."""


COMPUTED = Doubt("禁止执行动态生成的命令（命令名来自 $(…)、反引号、变量或 eval）")
HIDDEN_NAME = Doubt("禁止改写命令名的含义（BASH_ALIASES、BASH_CMDS、hash -p）")
DECODED = "禁止把解码得到的文本交给 Shell 执行"
TOO_DEEP = Doubt("命令嵌套过深（bash -c 套 bash -c …），无法检查")
MAX_DEPTH = 6


@dataclass
class Scope:
    cwd: str | None
    home: str | None
    functions: tuple[str, ...] = ()  # functions being defined around this point
    aliases: dict[str, Word] = field(default_factory=dict)  # alias NAME=VALUE defined so far

    def copy(self) -> Scope:
        return replace(self, aliases=dict(self.aliases))


@dataclass
class Parsed:
    simples: list[Simple] = field(default_factory=list)
    pipelines: list[list[list[Simple]]] = field(default_factory=list)  # stages, each its commands
    recursive_calls: list[str] = field(default_factory=list)  # a function calling itself
    # For reading a script: where each top-level command starts in the text and how many of the
    # lists above it filled, so a refusal can name its line; ``at``: the command being walked.
    tops: list[tuple[int, int, int, int]] = field(default_factory=list)
    at: int = 0
    cwd: str | None = None  # where the text leaves the shell (``source`` runs it in the caller's shell)
    aliases: tuple[str, ...] = ()  # aliases it leaves defined (``source`` makes them the caller's)
    home: str | None = None
    # With ``lenient``: each top-level command the walk gave up on, (its start, where, the Doubt)
    doubts: list[tuple[int, int, str]] = field(default_factory=list)


def parse(command: str, cwd: str | None, home: str | None, out: Parsed | None = None,
          lenient: bool = False) -> Parsed:
    """Raises PolicyError for a computed command name, bashlex's errors for syntax it lacks;
    ``out``, when given, is filled as the walk goes (its ``at`` then tells where it stopped).
    ``lenient`` records such a PolicyError in ``doubts`` and walks on with the next top-level
    command, so the rest of a script is still judged."""
    walker, scope = _Walker(out, lenient), Scope(cwd, home)
    walker.text(command, scope, 0)
    walker.out.cwd, walker.out.home, walker.out.aliases = scope.cwd, scope.home, tuple(scope.aliases)
    return walker.out


class _Walker:
    def __init__(self, out: Parsed | None = None, lenient: bool = False) -> None:
        self.out = out if out is not None else Parsed()
        self.lenient = lenient
        self.at = 0  # where the simple command being walked starts in the text parsed
        self.traps: list[tuple[Word, int]] = []  # trap actions set in the text being walked

    def text(self, command: str, scope: Scope, depth: int) -> None:
        import bashlex  # 0.15 s to import: only when a command is actually checked

        if depth > MAX_DEPTH:
            raise PolicyError(TOO_DEEP)
        self.depth, self.source = depth, command
        out = self.out
        traps, self.traps = self.traps, []
        nodes = bashlex.parse(command)
        for i, node in enumerate(nodes):
            if depth == 0:
                out.at = self.at = node.pos[0]
            try:
                self.node(node, scope)
                if i == len(nodes) - 1:
                    self.run_traps(scope)
            except PolicyError as exc:
                if depth or not self.lenient:
                    raise
                self.depth, self.source = 0, command  # the walk stopped inside a nested text
                out.doubts.append((node.pos[0], out.at, exc.reason))
            if depth == 0:
                out.tops.append((node.pos[0], len(out.simples), len(out.pipelines), len(out.recursive_calls)))
        self.traps = traps

    def run_traps(self, scope: Scope) -> None:
        """A trap runs later (EXIT: when the shell ends): its action is judged again where the
        text leaves the shell, so ``trap 'rm -rf ./*' EXIT; cd ~`` is read in HOME."""
        at, source, depth = self.at, self.source, self.depth
        for action, where in self.traps:
            self.at = where
            self.script(action, scope.copy())
        self.at, self.source, self.depth = at, source, depth

    def node(self, node: Any, scope: Scope) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, scope)
        elif kind == "pipeline":
            self.pipeline([p for p in node.parts if p.kind not in ("pipe", "reservedword")], scope)
        elif kind == "compound":
            inner = scope.copy() if node.list and getattr(node.list[0], "word", "") == "(" else scope
            for part in node.list:
                self.node(part, inner)
            for redirect in getattr(node, "redirects", None) or ():
                self.redirect(redirect, scope)
        elif kind == "function":
            name = node.name.word
            self.node(node.body, replace(scope.copy(), functions=(*scope.functions, name)))
        elif kind == "word":
            self.word(node, scope)
        elif hasattr(node, "parts") and kind not in ("tilde", "parameter", "heredoc"):
            for part in node.parts:  # list, if, for, while, until: parts in order, same scope
                self.node(part, scope)

    def pipeline(self, stages: list[Any], scope: Scope) -> None:
        grouped: list[list[Simple]] = []
        for i, stage in enumerate(stages):
            start = len(self.out.simples)
            self.node(stage, scope.copy())  # each stage runs in a subshell: its `cd` stays there
            grouped.append(self.out.simples[start:])
            if i and grouped[i] and grouped[i - 1]:
                self.fed_script(grouped[i][-1], literal_output(grouped[i - 1][-1]), scope)
        self.out.pipelines.append(grouped)

    def command(self, node: Any, scope: Scope) -> None:
        if self.depth == 0:  # positions inside a `bash -c` string are not positions in the text
            self.out.at = self.at = node.pos[0]
        words: list[Word] = []
        assigned: list[Word] = []
        stdin: Word | None = None
        for part in node.parts:
            if part.kind == "word":
                words.append(self.word(part, scope))
            elif part.kind == "assignment":
                assigned.append(self.assignment(part, scope))
            elif part.kind == "redirect":
                stdin = self.redirect(part, scope) or stdin
        if any(w.text.startswith("HOME=") for w in words):  # export HOME=/ changes what ~ means
            scope.home = None
        shell = bool(words) and os.path.basename(words[0].text) in SHELLS
        for word in assigned:
            self.startup_file(word, scope, shell)
        if words:
            self.simple(words, scope, stdin=stdin)

    def simple(self, words: list[Word], scope: Scope, stdin_args: bool = False, stdin: Word | None = None) -> None:
        name = words[0]
        if not name.known or name.inner is not None or os.path.basename(name.text) == "eval":
            raise PolicyError(COMPUTED)
        if name.text in scope.aliases:
            self.alias(words, scope)
            return
        if _HIDDEN_NAME.match(name.text) or (name.text == "hash" and any(w.text.startswith("-p") for w in words)):
            raise PolicyError(HIDDEN_NAME)  # each of these makes a plain name run another program
        simple = Simple(tuple(words), scope.cwd, scope.home, stdin_args, stdin, self.at)
        self.out.simples.append(simple)  # before what it wraps: a stage's last command is the one that reads
        if simple.name in scope.functions:
            self.out.recursive_calls.append(simple.name)
        for inner in unwrap(simple):
            nested = scope.copy()
            nested.cwd = inner.cwd
            if inner.script is not None:
                self.script(inner.script, nested)
            else:
                self.simple(list(inner.words), nested, stdin_args or inner.stdin_args, stdin)
        if simple.name in ("cd", "pushd", "popd"):
            scope.cwd = change_dir(simple)
        elif simple.name in SHELLS and isinstance(script_source(simple), Word):
            self.script(script_source(simple), scope.copy())
        elif simple.name == "alias":
            for word in simple.args:
                alias, eq, value = word.text.partition("=")
                if eq and not alias.startswith("-"):
                    scope.aliases[alias] = Word(value, word.known)
                    self.script(scope.aliases[alias], scope.copy())  # judged where it is defined too
        elif simple.name == "unalias":
            for word in simple.args:
                scope.aliases = {} if word.text == "-a" else {k: v for k, v in scope.aliases.items() if k != word.text}
        elif simple.name in ("export", "declare", "typeset", "local", "readonly", "env"):
            for word in simple.args:
                self.startup_file(word, scope, True)
        if trap_action(simple) is not None:
            self.traps.append((trap_action(simple), self.at))
            self.script(trap_action(simple), scope.copy())
        self.fed_script(simple, stdin, scope)
        self.substituted_script(simple, scope)

    def script(self, word: Word, scope: Scope, unknown: str = COMPUTED) -> None:
        """A shell script given as text: parse it, or refuse when it is computed."""
        if not word.known or word.inner is not None:
            raise PolicyError(Doubt(unknown))
        depth, source = self.depth, self.source
        self.text(word.text, scope, depth + 1)
        self.depth, self.source = depth, source

    def fed_script(self, simple: Simple, text: Word | None, scope: Scope) -> None:
        """Literal text on a shell's stdin is a script: ``echo 'rm -rf ~' | sh``,
        ``source /dev/stdin <<< 'rm -rf ~'`` (which runs in this shell: its ``cd`` stays)."""
        if text is None:
            return
        if simple.name in SHELLS and script_source(simple) is STDIN_SCRIPTS:
            self.script(text, scope.copy(), DECODED)
        elif _sourced(simple) is not None and _sourced(simple).text in STDIN_NAMES:
            self.script(text, scope, DECODED)

    def substituted_script(self, simple: Simple, scope: Scope) -> None:
        """``bash <(echo 'rm -rf ~')``, ``source <(printf …)``: the script is what it prints."""
        operand = script_file(simple) if simple.name in SHELLS else _sourced(simple)
        if operand is None or not operand.inner or not operand.text.startswith("<("):
            return
        printed = literal_output(operand.inner[-1])
        if printed is not None:
            self.script(printed, scope if simple.name in ("source", ".") else scope.copy(), DECODED)

    def alias(self, words: list[Word], scope: Scope) -> None:
        """An alias in use: its text with the rest of the words, read again (bash expands an
        alias only with ``expand_aliases`` or in an interactive shell; the guard always does)."""
        value = scope.aliases.pop(words[0].text)  # bash does not expand an alias inside itself
        rest = " ".join(shlex.quote(w.text) if w.known else '"$_"' for w in words[1:])
        try:
            self.script(Word(f"{value.text} {rest}", value.known), scope)
        finally:
            scope.aliases[words[0].text] = value

    def startup_file(self, word: Word, scope: Scope, shell: bool) -> None:
        """``BASH_ENV=F`` (and ``ENV=F``, for a shell or a path): every bash the command starts
        first sources F, so F is read as a script the command sources."""
        name, eq, value = word.text.partition("=")
        if not eq or not value or name not in ("BASH_ENV", "ENV"):
            return
        if name == "ENV" and not shell and not (word.known and "/" in value):
            return  # ENV=production: a setting, not a file for a shell
        source = (Word("source"), Word(value, word.known and word.inner is None))
        self.out.simples.append(Simple(source, scope.cwd, scope.home, at=self.at))

    def word(self, node: Any, scope: Scope) -> Word:
        raw = self.source[node.pos[0]:node.pos[1]]
        text, known, shape = expand(raw, scope.home, scope.cwd)
        inner = None
        for part in _descendants(node):
            if part.kind in ("commandsubstitution", "processsubstitution"):
                start = len(self.out.simples)
                self.node(part.command, scope.copy())
                inner = (*(inner or ()), *self.out.simples[start:])
        # echo -e / printf may decode what a backslash spelled: remember there was one
        escaped = "\\" in raw
        return Word(text, known and inner is None and not has_braces(shape), inner, escaped)

    def assignment(self, node: Any, scope: Scope) -> Word:
        if node.word.startswith("HOME="):
            scope.home = None
        if _HIDDEN_NAME.match(node.word):
            raise PolicyError(HIDDEN_NAME)
        return self.word(node, scope)  # runs nothing itself, but its $(…) does

    def redirect(self, node: Any, scope: Scope) -> Word | None:
        """Walks a redirect's target; returns the literal text it feeds to stdin, if any."""
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            # bashlex reads only an unquoted delimiter (<<'EOF' is left to the text rules)
            body = heredoc.value.rsplit("\n", 1)[0] if "\n" in heredoc.value else ""
            return Word(read_heredoc(body, scope.home, scope.cwd))
        target = node.output
        if getattr(target, "kind", None) != "word":
            return None
        word = self.word(target, scope)
        if node.type not in ("<", "<<<"):
            self.out.simples.append(Simple((Word(">"), word), scope.cwd, scope.home, at=self.at))
        return word if node.type == "<<<" else None


_HIDDEN_NAME = re.compile(r"(BASH_ALIASES|BASH_CMDS)(\[|\+?=)")


def _sourced(simple: Simple) -> Word | None:
    """The file ``source F`` / ``. F`` reads, or None."""
    if simple.name not in ("source", "."):
        return None
    operands = simple.args[1:] if simple.args and simple.args[0].text == "--" else simple.args
    return operands[0] if operands else None


def _descendants(node: Any) -> list[Any]:
    found = []
    for part in getattr(node, "parts", None) or ():
        found.append(part)
        if part.kind not in ("commandsubstitution", "processsubstitution"):
            found.extend(_descendants(part))
    return found


def change_dir(simple: Simple) -> str | None:
    """The directory ``cd`` / ``pushd`` lands in; None when the guard cannot know it."""
    targets = [w for w in simple.args if not (w.text.startswith("-") and len(w.text) > 1)]
    if simple.name == "popd" or (targets and (targets[0].text == "-" or not targets[0].known)):
        return None
    if not targets:
        return simple.home
    if os.path.isabs(targets[0].text):
        return os.path.normpath(targets[0].text)
    return os.path.normpath(os.path.join(simple.cwd, targets[0].text)) if simple.cwd else None
