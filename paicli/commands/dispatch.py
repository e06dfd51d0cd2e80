"""Slash commands (reference u.1), shared by the REPL and ``-p "/..."``: parsing, dispatch, help,
completion and the README's table, all read from the specs (``paicli.commands.table``).

Command words are case-insensitive; the payload is what follows, trimmed. Unknown ``/x``
prints ``❌ 未知命令`` and, to a person at the REPL, the list of what exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paicli.commands.output import Output, ReadLine, Say
from paicli.commands.spec import CommandResult, CommandSpec
from paicli.commands.table import COMMANDS
from paicli.ui.terminal import Hanging

if TYPE_CHECKING:  # the App imports this module lazily
    from paicli.app import App

__all__ = ["COMMANDS", "CommandResult", "NAMES", "Output", "completions", "handle", "help_lines", "is_command",
           "readme_table"]

BY_WORD: dict[str, CommandSpec] = {word: spec for spec in COMMANDS for word in spec.words}
BARE_WORDS = frozenset(word for word in BY_WORD if not word.startswith("/"))  # `exit`, `clear`: whole lines only
NAMES = [word for spec in COMMANDS for word in (spec.name, *spec.aliases) if word.startswith("/")]  # completion


def is_command(text: str) -> bool:
    t = text.strip().lower()
    return t.startswith("/") or t in BARE_WORDS


def display(spec_name: str, arguments: str, mention: tuple[str, ...], note: str = "") -> str:
    shown = f"{spec_name} {arguments}".rstrip()
    return f"{shown}（或 {'、'.join(mention)}{note}）" if mention else shown


def help_rows() -> list[str | Hanging]:
    """``/help``: a heading, then one line per command form, its text hanging under itself."""
    rows: list[str | Hanging] = ["可用命令："]
    for spec in COMMANDS:
        for n, line in enumerate(spec.lines()):
            if line.help:
                shown = display(spec.name, line.arguments, spec.mention if n == 0 else (), spec.mention_note[0])
                rows.append(Hanging(f"   {shown} - ", line.help))
    return rows


def help_lines() -> list[str]:
    return [str(row) for row in help_rows()]


def completions(text: str) -> list[str]:
    """What completion offers for the line typed so far: the commands it begins, then a command's
    sub-commands and flags (``CommandSpec.completion``) for its next word."""
    if " " not in text:
        typed = text.lower()
        return [name for name in NAMES if name.startswith(typed)] if typed.startswith("/") else []
    word, _, rest = text.partition(" ")
    spec = BY_WORD.get(word.lower())
    if spec is None or " " in rest.lstrip():
        return []
    typed = rest.lstrip().lower()
    return [option for option in spec.completion if option.startswith(typed)]


def readme_table() -> list[str]:
    """The README's command table, row for row (``tests/unit/test_command_specs.py`` keeps them equal)."""
    rows = ["| command | what it does |", "|---|---|"]
    for spec in COMMANDS:
        for n, line in enumerate(spec.lines()):
            if not line.doc:
                continue
            arguments = line.arguments if line.doc_arguments is None else line.doc_arguments
            cell = f"`{f'{spec.name} {arguments}'.rstrip()}`".replace("|", "\\|")
            if n == 0 and spec.mention:
                cell += " (or " + ", ".join(f"`{word}`" for word in spec.mention) + spec.mention_note[1] + ")"
            rows.append(f"| {cell} | {line.doc} |")
    return rows


async def handle(text: str, app: App, say: Say | Output, read_line: ReadLine | None = None) -> CommandResult:
    """``app`` is a ``paicli.app.App``; ``read_line`` is None when nobody can answer (``-p``)."""
    out = say if isinstance(say, Output) else Output(say)
    if read_line is not None:
        out.read_line = read_line
    stripped = text.strip()
    word, _, payload = stripped.partition(" ")
    spec = BY_WORD.get(word.lower())
    if spec is None or (spec.name != word.lower() and word.lower() in BARE_WORDS and payload):
        result = unknown(stripped, out)
    else:
        out.word = word.lower()
        result = await spec.run(app, payload.strip(), out)
    result.failed = result.failed or out.failed
    return result


def unknown(stripped: str, say: Output) -> CommandResult:
    say.fail(f"❌ 未知命令: {stripped}")
    if say.read_line is not None:  # a person at the REPL gets the list; a script, one line
        for row in help_rows():
            say(row)
    return CommandResult()


def show_help(app: App, payload: str, say: Output) -> None:
    for row in help_rows():
        say(row)


def leave(app: App, payload: str, say: Output) -> CommandResult:
    return CommandResult(exit=True)
