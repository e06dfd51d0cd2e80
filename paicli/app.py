"""The application object both front ends share: settings now, the session when first needed.

Building the session imports LangGraph and the model client (about a second), so the REPL
starts that import in a background thread and shows its prompt right away.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
import uuid
from typing import Any

from paicli.settings import ConfigError, Settings, load_settings

SESSION_ID = re.compile(r"[A-Za-z0-9._-]+")  # reference h.1: ids become file names


def new_session_id() -> str:
    """reference h.1: ``session-<epoch millis>-<uuid>``."""
    return f"session-{int(time.time() * 1000)}-{uuid.uuid4()}"


class App:
    def __init__(self, args: Any, settings: Settings | None = None):
        self.args = args
        self.settings = settings or load_settings(args.project)
        self.settings.require_key()  # fail before the first prompt, not after the first question
        self._session: Any = None
        if args.session is not None and not SESSION_ID.fullmatch(args.session):
            raise ConfigError(f"--session '{args.session}' is not a valid id: use letters, digits, '.', '_' and '-'")
        self._session_id = args.session or new_session_id()
        self._warm = threading.Thread(target=importlib.import_module, args=("paicli.session",), daemon=True)

    def warm_up(self) -> None:
        """Import the heavy modules in the background while the user types."""
        self._warm.start()

    @property
    def session(self) -> Any:
        if self._session is None:
            if self._warm.is_alive():
                self._warm.join()
            from paicli.session import Session

            self._session = Session(self.settings, approval="yes" if self.args.yes else "auto", session_id=self._session_id)
        return self._session

    @property
    def session_id(self) -> str:
        return self._session.session_id if self._session is not None else self._session_id

    def switch_model(self, model: str) -> None:
        if self._session is not None:
            self._session.switch_model(model)
            self.settings = self._session.settings
        else:
            self.settings = self.settings.with_model(model)
