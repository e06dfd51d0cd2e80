"""Register CLI sessions as threads of the ``langgraph dev`` server ``paicli studio`` runs.

The server keeps its own registry of threads (``.langgraph_api/``); their checkpoints are our
ledger (or the database's tables). A session becomes visible in Studio once the registry has a thread of that id under the
``react`` graph; ``threads.get_state`` then reads its messages from the ledger. The server only
accepts UUID thread ids, so older ``session-<millis>-<uuid>`` sessions stay CLI-only.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

GRAPH_ID = "react"


def is_thread_id(session_id: str) -> bool:
    try:
        return str(uuid.UUID(session_id)) == session_id.lower()
    except ValueError:
        return False


class SessionRegistrar:
    """Keeps the server's thread list in step with the sessions, incrementally: the ledger
    directory's, or with ``PAICLI_DATABASE_URL`` the database's for this project (issue 28)."""

    def __init__(self, ledger_dir: Path, client: Any, sessions: Any = None) -> None:
        from paicli.memory.ledger.sessions import SessionList

        # anything with ``summaries()`` (newest first, as the /resume list): SessionList, SessionSaver
        self.sessions = sessions if sessions is not None else SessionList(ledger_dir)
        self.client = client  # a langgraph_sdk sync client
        self.registered: set[str] = set()
        self.legacy: set[str] = set()

    def sync(self) -> int:
        """Register sessions not registered yet; returns how many were added."""
        added = 0
        for summary in self.sessions.summaries():
            session_id = summary["id"]
            if session_id in self.registered:
                continue
            if not is_thread_id(session_id):
                self.legacy.add(session_id)
                continue
            # do_nothing: a thread the server already knows (made in Studio) keeps its record.
            self.client.threads.create(thread_id=session_id, if_exists="do_nothing", graph_id=GRAPH_ID,
                                       metadata={"graph_id": GRAPH_ID, "source": "paicli",
                                                 "title": summary["title"]})
            self.registered.add(session_id)
            added += 1
        return added
