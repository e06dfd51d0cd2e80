"""The user's sandbox choices (``paicli/config/settings.py`` fills them, never from a project's .env)."""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("auto", "required", "off")  # PAICLI_COMMAND_SANDBOX; auto is paicli's default (reference t: off)


@dataclass(frozen=True)
class SandboxOptions:
    mode: str = "auto"  # PAICLI_COMMAND_SANDBOX: auto | required | off
    network: bool = False  # PAICLI_SANDBOX_NETWORK=on: every command has network
    writable: tuple[str, ...] = ()  # PAICLI_SANDBOX_WRITABLE: more writable roots
    skipped: bool = False  # --dangerously-skip-sandbox: this run's commands run outside
    # issue 34: PAICLI_SANDBOX_READABLE, credential stores a command may read on purpose (~/.npmrc);
    # ``hidden``: paicli's own data ($PAICLI_HOME, the memory and audit folders), empty inside;
    # ``data``: where the sandbox keeps each session's private /tmp and each project's cache layers
    # ("": $PAICLI_HOME/sandbox of this process's environment, else ~/.paicli/sandbox).
    readable: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    data: str = ""
    # A session's commands join one sandbox set up once (``paicli.tools.sandbox.holder``) rather
    # than each paying bubblewrap's set-up; False (tests, comparisons): a bwrap per command.
    holders: bool = True
