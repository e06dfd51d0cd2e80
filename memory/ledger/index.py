"""The in-memory index of one ledger file, and how a checkpoint is read back from it.

The file is replayed once per process, then topped up with only the bytes appended since (by this
process or another). A torn or garbled line is skipped and counted in one ``LedgerWarning``.

What a checkpoint is made of:

- a ``view_checkpoint`` event stores versions, versions_seen and metadata either in full or as
  changes on its parent's (``paicli.memory.ledger.deltas``); a record that builds on a lost line is
  *broken* and hidden, along with the ones built on it, until the next full record;
- a channel value is stored by the checkpoint whose version of it changed; a later checkpoint finds
  it through ``holders``, keyed by (namespace, channel, version);
- the ``messages`` channel is stored as a view: ledger sequences of message events, in full
  (``refs``) or as an ``append`` to an earlier view (``base``); ``seqs`` follows that chain;
- a message event without an id (a message given without one, stored before ``add_messages``
  named it) is *anonymous* until a ``message_id`` event binds it to the id the graph gave it.

Who wrote what, for the saver's lost-update check (``paicli.memory.ledger.owner``): the checkpoints
this saver put itself (``own``), each checkpoint's children, and when a run read a checkpoint
as the thread's latest (``read_at``, in lines applied).
"""

from __future__ import annotations

import operator
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple, writes_sort_key

from paicli.memory.ledger.deltas import Fields, apply_record, apply_versions, full_fields, is_full, versions_delta
from paicli.memory.ledger.format import anon_key, decode_line, decode_value, record_to_message
from paicli.memory.ledger.io import LedgerFile
from paicli.memory.ledger.owner import LedgerConflict, SessionBusy, TurnLock

MESSAGES = "messages"  # the conversation channel (add_messages), stored as views
_ID = operator.attrgetter("id")
_RESOLVED_VIEWS = 16  # resolved views kept per thread: enough for a list() walking back a chain


class LedgerWarning(RuntimeWarning):
    """Lines of a ledger file could not be read and were skipped."""


@dataclass(slots=True)
class IndexedCheckpoint:
    ns: str
    id: str
    parent: str | None
    header: Any  # encoded checkpoint fields other than id, values and versions
    metadata: Any = None  # encoded checkpoint metadata
    versions: dict = field(default_factory=dict)
    seen: dict = field(default_factory=dict)
    own: dict[str, tuple[str, Any]] = field(default_factory=dict)  # stored here: ("view" | "value", data)
    depth: int = 0  # links since the last full record
    at: int = 0  # lines applied when it was (paicli.memory.ledger.owner: who added to the thread since)
    broken: bool = False  # a record it builds on was lost
    hidden: bool = False  # broken, deleted or pruned

    @property
    def fields(self) -> Fields:
        return Fields(self.header, self.versions, self.seen, self.metadata)


class ThreadIndex:
    """One thread's ledger: its file and what it holds; guarded by ``lock`` (threads) and
    ``file.flock`` (processes)."""

    def __init__(self, thread_id: str, path: Path, serde: Any) -> None:
        self.thread_id, self.serde = thread_id, serde
        self.file = LedgerFile(path)
        self.lock = threading.RLock()
        self.turn = TurnLock(self.file, self.lock)
        self.waiting: list = []  # batch.PendingWrites whose checkpoint is not in the file yet
        self.reset()

    @property
    def path(self) -> Path:
        return self.file.path

    def reset(self) -> None:
        """Forget what was read: the next look replays the file from its start."""
        self.file.forget()
        self._clear()

    def _clear(self) -> None:
        self.max_seq, self.broken = -1, 0
        self.messages: dict[int, tuple[dict, dict]] = {}  # seq → (record, lc)
        self.by_id: dict[str, list] = {}  # message id → [seq, the object last seen or None]
        self.checkpoints: dict[str, dict[str, IndexedCheckpoint]] = {}
        self.holders: dict[tuple[str, str, Any], str] = {}  # (ns, channel, version) → checkpoint id
        self.writes: dict[tuple[str, str], dict[tuple[str, int], tuple]] = {}
        self.seqs_cache: dict[tuple[str, str], tuple[int, ...]] = {}  # a few recently resolved views
        self.anon: dict[str, int] = {}  # anon_key(record) → an anonymous message event not bound yet
        self.rebinds = 0  # times a message id already known was bound to another event
        # ns → (message objects, their sequences, rebinds then) of the conversation last put or
        # read there: the next put looks only at the messages after them (paicli.memory.ledger.batch)
        self.shown: dict[str, tuple[tuple, tuple[int, ...], int]] = {}
        self.by_text: dict[str, int] = {}  # message content → the first event holding it
        self.bound: dict[int, str] = {}  # anonymous message event → the id a message_id event gave it
        self.children: dict[tuple[str, str | None], list[str]] = {}  # (ns, parent) → child checkpoint ids
        self.own: set[str] = set()  # checkpoint ids this saver put
        self.read_at: dict[tuple[str, str | None], int] = {}  # (ns, latest id) → lines applied when read
        self.applied = 0  # lines applied so far

    def checkpoint(self, ns: str, checkpoint_id: str | None) -> IndexedCheckpoint | None:
        return self.checkpoints.get(ns, {}).get(checkpoint_id) if checkpoint_id else None

    def live(self) -> Iterator[IndexedCheckpoint]:
        """Every checkpoint not hidden (broken, deleted or pruned)."""
        return (ck for cks in self.checkpoints.values() for ck in cks.values() if not ck.hidden)

    def latest(self, ns: str) -> IndexedCheckpoint | None:
        return max((c for c in self.checkpoints.get(ns, {}).values() if not c.hidden), key=lambda c: c.id, default=None)

    # -- one writer (paicli.memory.ledger.owner) -------------------------------------------------------
    def read(self, ns: str, checkpoint_id: str | None) -> None:
        """A run read this checkpoint (None: an empty thread) to build on it."""
        self.read_at[(ns, checkpoint_id)] = self.applied

    # -- replay ---------------------------------------------------------------------------------
    def catch_up(self, writing: bool = False) -> None:
        """Apply what was appended since the last look; ``writing``: the caller holds the file lock."""
        new = self.file.read_new(writing)
        if new.restarted:
            self._clear()
        broken = self.broken
        skipped = sum(not self.apply_line(line) for line in new.lines if line.strip()) + new.torn
        _warn_skipped(self.path, skipped, self.broken - broken)

    def apply_line(self, line: bytes) -> bool:
        """Apply one line; False when it is torn, garbled or not a well-formed event."""
        event = decode_line(line)
        if event is None:
            return False
        try:
            self.apply(event)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            return False
        return True

    def apply(self, event: dict) -> None:
        self.max_seq = max(self.max_seq, event["sequence"])
        self.applied += 1
        name, metadata = event["event"], event.get("metadata") or {}
        if event.get("message") is not None:
            self._apply_message(event["sequence"], event["message"], metadata.get("lc") or {})
        elif name == "view_checkpoint":
            self._apply_view(metadata)
        elif name == "pending_write":
            self.apply_writes(metadata)
        elif name in ("checkpoint_delete", "checkpoint_prune"):
            self._hide(metadata)
        elif name == "message_id":
            self._bind(metadata["messageSequence"], metadata["messageId"])
        if "pendingWrite" in metadata:  # a write riding on the line that made it readable (paicli.memory.ledger.batch)
            self.apply_writes(metadata["pendingWrite"])

    def _apply_message(self, seq: int, record: dict, lc: dict) -> None:
        self.messages[seq] = (record, lc)
        if type(record["content"]) is str:
            self.by_text.setdefault(record["content"], seq)
        if lc.get("id") is not None:
            self.rebinds += lc["id"] in self.by_id
            self.by_id[lc["id"]] = [seq, None]
        else:
            self.anon[anon_key(record)] = seq

    def _bind(self, seq: int, message_id: str) -> None:
        """An anonymous message event is from now on the message with this id."""
        record, _ = self.messages[seq]
        if self.anon.get(key := anon_key(record)) == seq:
            del self.anon[key]
        self.bound[seq] = message_id
        self.rebinds += message_id in self.by_id
        self.by_id[message_id] = [seq, None]

    def apply_writes(self, record: dict) -> None:
        stored = self.writes.setdefault((record.get("checkpointNs", ""), record["checkpointId"]), {})
        task = record["taskId"]
        for idx, channel, value in record["writes"]:
            if idx < 0 or (task, idx) not in stored:  # a regular write is kept once; specials replace
                stored[(task, idx)] = (task, idx, channel, value, record["taskPath"])

    def _apply_view(self, record: dict) -> None:
        ns, checkpoint_id = record.get("checkpointNs", ""), record["checkpointId"]
        ck = IndexedCheckpoint(ns, checkpoint_id, record.get("parentId"), record.get("checkpoint", {}), at=self.applied)
        ck.own = _own(record)
        self._link_changes(ck, self.checkpoint(ns, ck.parent), record)
        if MESSAGES in ck.own:
            self._link_view(ck, ck.own[MESSAGES][1])
        ck.hidden = ck.broken
        self.broken += ck.broken
        cks = self.checkpoints.setdefault(ns, {})
        if checkpoint_id in cks:  # the same checkpoint put again: resolved views may be stale
            self.seqs_cache.clear()
        else:
            self.children.setdefault((ns, ck.parent), []).append(checkpoint_id)
        cks[checkpoint_id] = ck
        for channel in ck.own:
            self.holders[(ns, channel, ck.versions.get(channel))] = checkpoint_id

    @staticmethod
    def _link_changes(ck: IndexedCheckpoint, parent: IndexedCheckpoint | None, record: dict) -> None:
        """Header, versions, versions_seen and metadata: in full, or as changes on the parent's."""
        if is_full(record):
            fields = full_fields(record)
        elif parent is not None and not parent.broken:
            fields, ck.depth = apply_record(parent.fields, record, ck.own), parent.depth + 1
        else:  # built on a lost line; the versions it sets still say which values it holds
            ck.broken, ck.versions = True, apply_versions({}, versions_delta(record))
            return
        ck.header, ck.versions, ck.seen, ck.metadata = fields

    def _link_view(self, ck: IndexedCheckpoint, view: dict) -> None:
        if "base" in view:
            base = self.checkpoint(ck.ns, view["base"])
            holder = self.holder(base, MESSAGES) if base is not None and not base.broken else None
            ck.broken |= holder is None or holder.own[MESSAGES][0] != "view"

    def _hide(self, record: dict) -> None:
        if "checkpoints" in record:  # checkpoint_delete: these ones
            doomed = {(ns, cid) for ns, cid in record["checkpoints"]}
        else:  # checkpoint_prune: every checkpoint before this line but the kept ones
            keep = record.get("keep", {})
            doomed = {(ns, cid) for ns, cks in self.checkpoints.items() for cid in cks if keep.get(ns) != cid}
        for ns, cid in doomed:
            if ck := self.checkpoint(ns, cid):
                ck.hidden = True
            self.writes.pop((ns, cid), None)

    # -- resolution -----------------------------------------------------------------------------
    def holder(self, ck: IndexedCheckpoint, channel: str) -> IndexedCheckpoint | None:
        """The checkpoint that stored ``ck``'s version of ``channel``."""
        if channel not in ck.versions:
            return None
        if channel in ck.own:
            return ck
        return self.checkpoint(ck.ns, self.holders.get((ck.ns, channel, ck.versions[channel])))

    def seqs(self, ck: IndexedCheckpoint) -> tuple[int, ...] | None:
        """The message sequences of ``ck``'s conversation (None: not stored as a view)."""
        holder = self.holder(ck, MESSAGES)
        if holder is None or holder.own[MESSAGES][0] != "view":
            return None
        chain, seqs = self._view_chain(holder)
        for _, view in reversed(chain):
            seqs = tuple(view["refs"]) if "refs" in view else seqs + tuple(view["append"])
        if chain:
            if len(self.seqs_cache) >= _RESOLVED_VIEWS:
                self.seqs_cache.pop(next(iter(self.seqs_cache)))
            self.seqs_cache[(ck.ns, chain[0][0])] = seqs
        return seqs

    def _view_chain(self, holder: IndexedCheckpoint | None) -> tuple[list[tuple[str, dict]], tuple[int, ...]]:
        """The views from ``holder`` back to one in full or already resolved, and what that one
        resolved to."""
        chain: list[tuple[str, dict]] = []
        visited: set[str] = set()
        while holder is not None and holder.own[MESSAGES][0] == "view" and holder.id not in visited:
            visited.add(holder.id)  # a checkpoint put twice could otherwise close a loop
            if (cached := self.seqs_cache.get((holder.ns, holder.id))) is not None:
                return chain, cached
            view = holder.own[MESSAGES][1]
            chain.append((holder.id, view))
            if "refs" in view:
                break
            base = self.checkpoint(holder.ns, view["base"])
            holder = self.holder(base, MESSAGES) if base else None
        return chain, ()

    def tuple(self, ck: IndexedCheckpoint, memo: dict) -> CheckpointTuple:
        """``ck`` as LangGraph wants it; ``memo`` shares message objects between the tuples of one call."""
        checkpoint = {**self.decode(ck.header, memo), "id": ck.id, "channel_values": self._values(ck, memo),
                      "channel_versions": dict(ck.versions), "versions_seen": {n: dict(v) for n, v in ck.seen.items()}}
        writes = sorted(self.writes.get((ck.ns, ck.id), {}).values(), key=lambda w: writes_sort_key(w[4], w[0], w[1]))
        return CheckpointTuple(self._config(ck.ns, ck.id), checkpoint, self.metadata(ck, memo),
                               self._config(ck.ns, ck.parent) if ck.parent else None,
                               [(w[0], w[2], self.decode(w[3], memo)) for w in writes])

    def _values(self, ck: IndexedCheckpoint, memo: dict) -> dict:
        values = {}
        for channel in ck.versions:
            holder = self.holder(ck, channel)
            if holder is None:
                continue
            kind, data = holder.own[channel]
            if kind == "value":
                values[channel] = self.decode(data, memo)
            elif (seqs := self.seqs(holder)) is not None:
                values[channel] = [m for m in (self.message_at(s, memo) for s in seqs) if m is not None]
                read = values[channel]
                if len(read) == len(seqs) and None not in map(_ID, read):  # what the run goes on from
                    self.shown[ck.ns] = (tuple(read), seqs, self.rebinds)  # (paicli.memory.ledger.batch)
        return values

    def _config(self, ns: str, checkpoint_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}

    def metadata(self, ck: IndexedCheckpoint, memo: dict | None = None) -> dict:
        return self.decode(ck.metadata, {} if memo is None else memo)

    def matches(self, ck: IndexedCheckpoint, filter: dict | None) -> bool:
        metadata = self.metadata(ck) if filter else {}
        return all(metadata.get(k) == v for k, v in (filter or {}).items())

    def decode(self, value: Any, memo: dict) -> Any:
        return decode_value(value, self.serde, lambda seq: self.message_at(seq, memo),
                            {"$anon": self._anonymous, "$text": self._text})

    def _anonymous(self, seq: int) -> BaseMessage | None:
        """Event ``seq``'s message as it was given: without the id it may have been bound to."""
        stored = self.messages.get(seq)
        return record_to_message(*stored, self.serde) if stored else None

    def _text(self, seq: int) -> str | None:
        stored = self.messages.get(seq)
        return stored[0]["content"] if stored else None

    def message_at(self, seq: int, memo: dict) -> BaseMessage | None:
        """A fresh message object for event ``seq``, shared within one call through ``memo``."""
        if seq not in memo:
            stored = self.messages.get(seq)
            message = memo[seq] = record_to_message(*stored, self.serde) if stored else None
            if message is not None and seq in self.bound:
                message.id = self.bound[seq]
            known = self.by_id.get(message.id) if message is not None else None
            if known and known[0] == seq:
                known[1] = message  # the graph hands this very object back to put
        return memo[seq]


def refuse_if_busy(t: ThreadIndex) -> None:
    """Refuse a write while another process holds the session's turn lock."""
    if (holder := t.turn.other_holder()) is not None:
        raise SessionBusy(f"会话 {t.thread_id} 正被{holder.describe()}使用：这次写入被拒绝，等它完成当前一轮后重试")


def check_writer(t: ThreadIndex, ns: str, parent_id: str | None, checkpoint_id: str) -> None:
    """Refuse a put (the caller holds the append lock and has caught up with the file) while
    another process holds the turn lock, or when it would hide another writer's checkpoint."""
    refuse_if_busy(t)
    read = t.read_at.get((ns, parent_id))
    if read is None:  # a parent no run read here (a fork reads its checkpoint first): not checked
        return
    for child in t.children.get((ns, parent_id), ()):
        ck = t.checkpoint(ns, child)
        if child != checkpoint_id and child not in t.own and ck is not None and ck.at > read:
            raise LedgerConflict(
                f"会话 {t.thread_id} 在这次运行读取之后被另一个写入者追加了检查点 {child}"
                f"（同一父检查点 {parent_id}）：为免覆盖它的消息，这次写入被拒绝；重新加载会话后重试")


def _own(record: dict) -> dict[str, tuple[str, Any]]:
    """The channels a view record stores: values, and the messages as a view."""
    own: dict[str, tuple[str, Any]] = {ch: ("value", value) for ch, value in record.get("channels", {}).items()}
    if "messages" in record:
        view = record["messages"]  # an append names its base only when it is not the parent
        own[MESSAGES] = ("view", {"base": record.get("parentId"), **view} if "append" in view else view)
    return own


def _warn_skipped(path: Path, lines: int, checkpoints: int) -> None:
    if lines or checkpoints:
        lost = f"，以及 {checkpoints} 个建立在丢失行上的检查点" if checkpoints else ""
        warnings.warn(f"会话 ledger {path}：跳过了 {lines} 行无法读取的内容（写了一半或已损坏）{lost}",
                      LedgerWarning, stacklevel=4)
