"""The /resume picker's session list: one summary per ledger file, folded over its events one at
a time, so a file is read once and later only what was appended to it."""

from __future__ import annotations

from pathlib import Path

from paicli.memory.ledger.format import decode_line
from paicli.memory.ledger.io import read_range

_TITLE_CHARS = 60


class SessionFold:
    """One session's summary for the /resume picker, folded over its events one at a time."""

    def __init__(self) -> None:
        self.started: int | None = None
        self.last: int | None = None
        self.mode: str | None = None  # the last Plan/Team mode seen, else the last mode
        self.title: str | None = None
        self.message_events = 0
        self.view_lengths: dict[str, int] = {}  # root-namespace checkpoint id → messages it shows
        self.latest: str | None = None

    def add(self, event: dict) -> None:
        stamp = event.get("timestamp")
        if type(stamp) is int:
            self.started = stamp if self.started is None else min(self.started, stamp)
            self.last = stamp if self.last is None else max(self.last, stamp)
        mode = event.get("mode")
        if isinstance(mode, str) and (mode != "react" or self.mode in (None, "react")):
            self.mode = mode  # a Plan run's result handed to the conversation keeps it a plan session
        message = event.get("message")
        if isinstance(message, dict):
            if mode in (None, "react"):  # the conversation's own, not a Plan task's or Team step's
                self.message_events += 1
            content = message.get("content")
            if self.title is None and message.get("role") == "user" and isinstance(content, str) and content.strip():
                self.title = _title(content)
        elif event["event"] == "view_checkpoint" and event["metadata"].get("checkpointNs", "") == "":
            self._view(event["metadata"])

    def _view(self, record: dict) -> None:
        view, checkpoint_id = record.get("messages"), str(record.get("checkpointId"))
        if not isinstance(view, dict):  # messages unchanged since the parent
            count = self.view_lengths.get(record.get("parentId"), 0)
        elif "refs" in view:
            count = len(view["refs"])
        else:
            base = view.get("base", record.get("parentId"))  # an append on the parent names no base
            count = self.view_lengths.get(base, 0) + len(view.get("append", ()))
        self.view_lengths[checkpoint_id] = count
        if self.latest is None or checkpoint_id > self.latest:
            self.latest = checkpoint_id

    def summary(self, session_id: str) -> dict | None:
        if self.last is None:
            return None
        count = self.view_lengths[self.latest] if self.latest else self.message_events
        return {"id": session_id, "started": self.started, "last_activity": self.last,
                "mode": self.mode, "title": self.title or "", "messages": count}


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TITLE_CHARS else text[:_TITLE_CHARS - 1] + "…"


class SessionList:
    """Summaries of the ledgers in one directory, each kept with how far its file was read."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._folds: dict[Path, tuple[tuple[int, int], int, SessionFold]] = {}

    def summaries(self) -> list[dict]:
        """``{id, started, last_activity, mode, title, messages}`` per ledger, newest first."""
        found = [self._summary(path) for path in self.dir.glob("*.jsonl")]
        return sorted((s for s in found if s), key=lambda s: s["last_activity"], reverse=True)

    def _summary(self, path: Path) -> dict | None:
        try:
            return self._fold(path).summary(path.name[:-len(".jsonl")])
        except FileNotFoundError:  # deleted since the directory was listed
            return None

    def _fold(self, path: Path) -> SessionFold:
        stat = path.stat()
        inode, offset, fold = self._folds.get(path, (None, 0, None))
        if fold is None or inode != (stat.st_dev, stat.st_ino) or stat.st_size < offset:
            inode, offset, fold = (stat.st_dev, stat.st_ino), 0, SessionFold()  # new or replaced
        if stat.st_size > offset:
            data = read_range(path, offset, stat.st_size)
            end = data.rfind(b"\n") + 1  # whole lines only: a writer may be mid-line
            for event in filter(None, map(decode_line, data[:end].split(b"\n")[:-1])):
                fold.add(event)
            offset += end
        self._folds[path] = (inode, offset, fold)
        return fold
