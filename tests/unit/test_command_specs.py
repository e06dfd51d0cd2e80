"""A slash command is one spec (issue 36 item 3): /help, completion, ``-p "/…"``, the REPL and the
README's command table all come from ``paicli.commands.table.COMMANDS``."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest
from prompt_toolkit.document import Document

from paicli.commands import dispatch as commands
from paicli.commands.table import COMMANDS
from paicli.modes import MODES
from paicli.repl import CommandCompleter

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TABLE_HEAD = "| command | what it does |"


def readme_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(TABLE_HEAD)
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    return lines[start:end]


def test_the_readme_command_table_is_the_specs():
    """``PAICLI_UPDATE_SNAPSHOTS=1`` rewrites the README's table from the specs (review the diff)."""
    text = README.read_text(encoding="utf-8")
    rows = readme_rows(text)
    expected = commands.readme_table()
    if os.environ.get("PAICLI_UPDATE_SNAPSHOTS") and rows != expected:
        README.write_text(text.replace("\n".join(rows), "\n".join(expected)), encoding="utf-8")
        rows = readme_rows(README.read_text(encoding="utf-8"))
    assert rows == expected, "README.md's command table differs from the specs: " \
        "PAICLI_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/unit/test_command_specs.py rewrites it"


def test_every_word_names_one_command_and_every_handler_takes_app_payload_say():
    words = [word for spec in COMMANDS for word in spec.words]
    assert len(words) == len(set(words))
    for spec in COMMANDS:
        assert spec.name.startswith("/") and spec.help and spec.doc
        assert all(commands.BY_WORD[word] is spec for word in spec.words)
        assert list(inspect.signature(spec.function()).parameters) == ["app", "payload", "say"], spec.name


def test_each_mode_with_a_command_has_its_row():
    assert [s.name for s in COMMANDS if s.name in {m.command for m in MODES}] == [m.command for m in MODES if m.command]


@pytest.mark.parametrize("spec", [s for s in COMMANDS if s.completion], ids=lambda s: s.name)
def test_completion_offers_only_what_the_help_line_names(spec):
    named = " ".join(line.arguments for line in spec.lines())
    assert all(word in named for word in spec.completion), (spec.completion, named)


def complete(text: str) -> list[str]:
    return [c.text for c in CommandCompleter().get_completions(Document(text), None)]


def test_the_repl_completes_commands_then_their_sub_commands():
    assert complete("/mem") == ["/memory"]
    assert complete("/c") == ["/clear", "/cancel", "/compact", "/context", "/ctx", "/continue", "/config"]
    assert complete("/memory ") == ["list", "search", "delete", "verify", "replace", "clear"]
    assert complete("/MEMORY se") == ["search"]
    assert complete("  /mode a") == ["auto", "ask"]
    assert complete("/memory search x") == [] and complete("/bogus ") == [] and complete("hello") == []
    assert complete("/p") == ["/plan", "/policy"]  # /plan: a mode's command, from its ModeSpec
    completion = next(CommandCompleter().get_completions(Document("/hitl o"), None))
    assert completion.start_position == -1  # replaces the "o" typed


async def test_a_bare_alias_runs_its_command_only_alone():
    said: list[str] = []
    assert (await commands.handle("QUIT", object(), said.append)).exit
    outcome = await commands.handle("cancel now", object(), said.append)
    assert outcome.failed and said == ["❌ 未知命令: cancel now"]
    assert not commands.is_command("exit now") and commands.is_command(" Exit ")


async def test_a_handler_knows_the_word_it_was_called_by_and_lines_can_be_for_one_surface_only():
    from paicli.commands.output import Output
    from paicli.commands.spec import CommandSpec, Line

    spec = CommandSpec("/x", lambda app, payload, say: say(f"{say.word} {payload}"), "帮助", "doc", aliases=("x",),
                       more=(Line("more", "", "readme only"), Line("help", "只在帮助里", "")))
    said: list[str] = []
    out = Output(said.append)
    out.word = "x"
    await spec.run(object(), "1", out)
    assert said == ["x 1"]
    assert [line.help for line in spec.lines() if line.help] == ["帮助", "只在帮助里"]
    assert [line.doc for line in spec.lines() if line.doc] == ["doc", "readme only"]
    typed = Output(said.append)
    await commands.handle("/HELP", object(), typed)
    assert typed.word == "/help"


def test_the_commands_a_wave_added_complete_their_sub_commands():
    """/model, /config provider, /browser, /lsp and /index (issues 37-40) are specs like the rest."""
    assert commands.completions("/model ") == ["list", "info", "refresh", "add"]
    assert commands.completions("/config p") == ["provider"]
    assert commands.completions("/browser c") == ["connect"]
    assert commands.completions("/lsp o") == ["off", "on"]
    assert commands.completions("/index s") == ["status"]
    assert commands.completions("/gr") == ["/graph"] and commands.completions("/sea") == ["/search"]
    assert any(line.startswith("   /clear（或 clear，先确认） - ") for line in commands.help_lines())


async def test_a_bare_clear_asks_first_and_slash_clear_does_not():
    class Session:
        cleared = 0

        async def clear(self):
            Session.cleared += 1

    class App:
        session = Session()

    asked: list[str] = []

    async def no(question: str) -> str:
        asked.append(question)
        return "n"

    said: list[str] = []
    await commands.handle("clear", App(), said.append, no)
    assert len(asked) == 1 and Session.cleared == 0 and said[-1].startswith("已取消")
    await commands.handle("/clear", App(), said.append, no)
    assert len(asked) == 1 and Session.cleared == 1
