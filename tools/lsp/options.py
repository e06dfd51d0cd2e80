"""What the user chose for language servers; ``paicli/config/settings.py`` fills it (issue 38).

Only the user's environment and ``$PAICLI_HOME/config.json`` set these, never a project's
``.env``: a repository must not pick the program paicli starts for its files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MODES = ("auto", "off")  # PAICLI_LSP
DEFAULT_WAIT = 3.0  # seconds an edit waits for its diagnostics, then the turn goes on without them
DEFAULT_IDLE = 600.0  # a server nobody asked anything for this long is shut down (started again on need)
DEFAULT_STARTUP = 20.0  # a server that has not answered `initialize` by then is stopped as failed


@dataclass(frozen=True)
class LspOptions:
    mode: str = "auto"  # PAICLI_LSP: auto (servers that are installed) | off
    # PAICLI_LSP_<LANGUAGE> (python, typescript, go, rust, c, java): the command for that
    # language, split as a shell would; () turns the language off ("off").
    commands: dict[str, tuple[str, ...]] = field(default_factory=dict)
    wait: float = DEFAULT_WAIT  # PAICLI_LSP_WAIT_SECONDS
    idle: float = DEFAULT_IDLE  # PAICLI_LSP_IDLE_SECONDS
    startup: float = DEFAULT_STARTUP
    max_items: int = 20  # diagnostics one message lists; the rest are counted

    @property
    def on(self) -> bool:
        return self.mode != "off"
