"""A slash command is one spec (issue 36), as a mode is one ``paicli.modes.ModeSpec``.

A :class:`CommandSpec` says everything the front ends need of a command: its name and the other
words that run it, its arguments and ``/help`` line, the README's row for it, what completion
offers after it, and its handler. ``paicli.commands.table.COMMANDS`` lists them; ``/help``,
completion, ``paicli -p "/…"``, the REPL and the README's command table all read that list
(``paicli.commands.dispatch``).

A handler is ``handler(app, payload, say) -> CommandResult | None``, plain or ``async``: ``app`` is
the ``paicli.app.App``, ``payload`` what follows the command word (trimmed), ``say`` an
``Output`` (``say(line)``, ``say.fail(line)``, ``say.read_line``, None when nobody can answer, and
``say.word``, the command word as typed, lower-cased: ``clear`` or ``/clear``).
It is named as ``"module:function"`` and imported on first use, so ``paicli --help`` and the REPL's
first prompt never import what a command needs (``bench/loop_overhead.py`` measures both).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Union

if TYPE_CHECKING:
    from paicli.commands.output import Output

Handler = Callable[[Any, str, "Output"], Union["CommandResult", None, Awaitable[Union["CommandResult", None]]]]


@dataclass
class CommandResult:
    exit: bool = False
    failed: bool = False  # the command did not do what was asked (``-p`` exits 1)
    # A run the front end starts after the command: (mode, text); text None finishes the
    # session's unfinished run (/continue).
    run: tuple[str, str | None] | None = None
    prefill: str | None = None  # text the REPL's next prompt starts with (an MCP prompt, issue 39)


@dataclass(frozen=True)
class Line:
    """A further line of a command's ``/help`` and README row, for a form of it with its own words
    (``/mcp resources|prompts [name]`` beside ``/mcp [restart|…]``). An empty ``help`` is a README
    row only, an empty ``doc`` a ``/help`` line only."""

    arguments: str
    help: str
    doc: str
    doc_arguments: str | None = None


@dataclass(frozen=True)
class CommandSpec:
    name: str  # "/model": what /help shows and completion offers
    handler: str | Handler  # "module:function", imported when the command first runs
    help: str  # its /help text (Chinese, like the rest of the UI)
    doc: str  # its row in the README's command table (English, like the README)
    arguments: str = ""  # after the name in /help: "[名称]"
    doc_arguments: str | None = None  # after the name in the README when it differs: "[name]"
    aliases: tuple[str, ...] = ()  # other words that run it, any case: "/ctx", or "clear" without a slash
    mention: tuple[str, ...] = ()  # aliases /help and the README name beside it: "/clear（或 clear）"
    mention_note: tuple[str, str] = ("", "")  # after the aliases, in /help and in the README: ("，先确认", ", which asks first")
    completion: tuple[str, ...] = ()  # what completion offers after the name: its sub-commands and flags
    more: tuple[Line, ...] = field(default=())  # further /help lines and README rows

    @property
    def words(self) -> tuple[str, ...]:
        """Every word that runs it, lower-cased."""
        return tuple(w.lower() for w in (self.name, *self.aliases))

    def lines(self) -> list[Line]:
        return [Line(self.arguments, self.help, self.doc, self.doc_arguments), *self.more]

    def function(self) -> Handler:
        if not isinstance(self.handler, str):
            return self.handler
        module, _, name = self.handler.partition(":")
        return getattr(importlib.import_module(module), name)

    async def run(self, app: Any, payload: str, say: Output) -> CommandResult:
        result = self.function()(app, payload, say)
        if inspect.isawaitable(result):
            result = await result
        return result if result is not None else CommandResult()
