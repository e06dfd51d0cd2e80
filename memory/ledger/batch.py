"""The events one saver call appends: numbered and indexed as they are made, written together.

- Each message once, as its own event (``user``, ``assistant``, ``tool_call``, ``tool_result``,
  ``system``), when it first shows up in a checkpoint, a pending write or a channel value; a
  message changed under the same id is a new event.
- Each checkpoint a ``view_checkpoint`` event: ids (``checkpointNs`` only outside the root
  namespace); header, versions, versions_seen and metadata as changes on the parent's
  (``paicli.memory.ledger.deltas``); the ``messages`` channel as ledger sequences (``{"append": [...]}``
  on the parent's view when the list only grew, else ``{"refs": [...]}``); other channels only
  when their version changed. Every ``full_every`` links a record is written in full (header,
  versions, metadata, the view as refs, every channel value): that bounds the work of a read and
  what one garbled line can take with it.
- Each ``put_writes`` once its checkpoint is in the file. LangGraph saves writes and checkpoints
  from different threads and a write can arrive first; until its checkpoint exists it cannot be
  resumed from, so the write waits in memory. That keeps message events in conversation order and
  stores no message twice. A write that brings new messages rides in the ``pendingWrite`` metadata
  of the last of their events: the same single line makes the message readable and the write
  resumable, and a step costs one line less (issue 3's bytes target). Other writes (the input,
  interrupts, errors, messages already in the file) are ``pending_write`` events.
- Each message once whatever path it came by (issue 10). A message given without an id (a dict
  from the SDK or Studio, a ``BaseMessage`` with ``id=None`` on the sync path) reaches the saver
  in the input checkpoint's ``__start__`` value and in the ``__start__`` task's write before
  ``add_messages`` gives it an id in the ``messages`` channel. Where a value is on its way into
  the conversation (``__start__``, ``messages``), such a message is written at once as an
  *anonymous* message event and referred to (``$anon``; a dict keeps its keys and refers to its
  content, ``$text``); when the named message then shows up, a small ``message_id`` event binds
  the anonymous event to its id instead of storing the message again.
- A ``compaction`` event (reference c.3) before the view of a checkpoint whose ``compaction``
  channel changed: the compact node leaves ``{"source", "metadata", "mode"}`` there, so rewrites
  are recorded for CLI and Studio runs alike.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, convert_to_messages
from langgraph.checkpoint.base import ChannelVersions, Checkpoint

from paicli.memory.ledger.deltas import Fields, diff_record, full_record
from paicli.memory.ledger.format import (
    anon_key, encode_line, encode_value, is_mapping, make_event, message_event, message_to_record,
)
from paicli.memory.ledger.index import MESSAGES, IndexedCheckpoint, ThreadIndex
from paicli.memory.ledger.io import sync_after_writes

_NOT_HEADER = frozenset({"id", "channel_values", "channel_versions", "versions_seen"})
_INBOUND = frozenset({"__start__", MESSAGES})  # channels whose values are on their way into the conversation


@dataclass(slots=True)
class PendingWrites:
    """One ``put_writes`` call, kept until its checkpoint is in the file."""

    ns: str
    checkpoint_id: str
    task_id: str
    task_path: str
    items: list[tuple[int, str, Any]]  # (idx, channel, value)
    mode: str
    actor: str


class Batch:
    """The events of one call on one thread; siblings (``as_``) share the list with other labels."""

    def __init__(self, thread: ThreadIndex, mode: str, actor: str, events: list[dict] | None = None) -> None:
        self.thread, self.mode, self.actor = thread, mode, actor
        self.events: list[dict] = [] if events is None else events

    def as_(self, mode: str, actor: str) -> Batch:
        return Batch(self.thread, mode, actor, self.events)

    def lines(self) -> list[bytes]:
        return [encode_line(e) for e in self.events]

    def add(self, name: str, source: str, *, message: dict | None = None, metadata: dict | None = None) -> int:
        """Add one event, indexed at once so the rest of the call can refer to it; its sequence."""
        t = self.thread
        event = make_event(t.thread_id, t.max_seq + 1, name, mode=self.mode, actor=self.actor,
                           source=source, message=message, metadata=metadata)
        t.apply(event)
        self.events.append(event)
        return event["sequence"]

    # -- checkpoints ----------------------------------------------------------------------------
    def add_view(self, ns: str, parent_id: str | None, checkpoint: Checkpoint, metadata: dict,
                 new_versions: ChannelVersions, full_every: int) -> None:
        fields = Fields(self.encode({k: v for k, v in checkpoint.items() if k not in _NOT_HEADER}),
                        checkpoint["channel_versions"], checkpoint["versions_seen"], self.encode(metadata))
        parent = self._delta_base(ns, parent_id, fields, full_every)
        values = self._values(ns, parent, checkpoint["channel_values"], new_versions)
        stored = [*values.get("channels", ()), *([MESSAGES] if "messages" in values else [])]
        record = {"checkpointNs": ns} if ns else {}  # the root namespace goes without saying
        record |= {"checkpointId": checkpoint["id"], "parentId": parent_id}
        record |= diff_record(parent.fields, fields, stored) if parent else full_record(fields)
        self.add("view_checkpoint", str(metadata.get("source") or "loop"), metadata=record | values)

    def _delta_base(self, ns: str, parent_id: str | None, fields: Fields, full_every: int) -> IndexedCheckpoint | None:
        """The parent to store changes on, or None for a full record (one that needs no earlier line)."""
        parent = self.thread.checkpoint(ns, parent_id)
        if parent is None or parent.broken or parent.depth + 1 >= full_every:
            return None
        diffable = (parent.fields.header, fields.header, parent.fields.metadata, fields.metadata)
        return parent if all(map(is_mapping, diffable)) else None  # a tagged value is stored whole

    def _values(self, ns: str, parent: IndexedCheckpoint | None, values: dict, new_versions: ChannelVersions) -> dict:
        """The channels to store: those whose version changed (all of them in a full record)."""
        stored, channels = {}, {}
        for channel in (c for c in (new_versions if parent else values) if c in values):
            view = self._view(ns, parent, values[channel]) if channel == MESSAGES else None
            if view is not None:
                stored["messages"] = view
            else:
                channels[channel] = self.encode(values[channel], inbound=channel in _INBOUND)
        if channels:
            stored["channels"] = channels
        return stored

    def _view(self, ns: str, parent: IndexedCheckpoint | None, messages: Any) -> dict | None:
        """The conversation as ledger sequences; None when ``messages`` is not one (stored as a value).

        Only the messages after the last list this namespace put or read are looked at: the
        rest are the same objects (messages are values, paicli.memory.ledger.saver), so they are the
        same events, unless an id has since been bound to another event (``rebinds``)."""
        if type(messages) is not list:
            return None
        t = self.thread
        known, seqs = self._shown_prefix(ns, messages)
        if not _is_conversation(messages[known:]):
            return None
        seqs = [*seqs, *(self.message_seq(m) for m in messages[known:])]
        t.shown[ns] = (tuple(messages), tuple(seqs), t.rebinds)
        base = t.seqs(parent) if parent is not None else None
        if base and len(base) <= len(seqs) and tuple(seqs[:len(base)]) == base:
            return {"append": seqs[len(base):]}  # on the parent's view (paicli.memory.ledger.index)
        return {"refs": seqs}

    def _shown_prefix(self, ns: str, messages: list) -> tuple[int, tuple[int, ...]]:
        """(how many leading messages are the last shown list's objects, their sequences)."""
        shown = self.thread.shown.get(ns)
        if shown is None or shown[2] != self.thread.rebinds or len(shown[0]) > len(messages):
            return 0, ()
        objects, seqs, _ = shown
        return (len(objects), seqs) if all(map(operator.is_, objects, messages)) else (0, ())

    def add_compaction(self, record: Any) -> None:
        """A ``compaction`` event for the record the compact node left in state (reference c.3)."""
        if isinstance(record, dict) and isinstance(record.get("metadata"), dict):
            own = self.as_(record["mode"] if isinstance(record.get("mode"), str) else self.mode, self.actor)
            own.add("compaction", str(record.get("source") or ""), metadata=own.encode(record["metadata"]))

    # -- pending writes -------------------------------------------------------------------------
    def add_ready_writes(self, fsync: str) -> bool:
        """Add the waiting writes whose checkpoint is now indexed; True when they call for fsync."""
        t, sync = self.thread, False
        ready = [w for w in t.waiting if t.checkpoint(w.ns, w.checkpoint_id)]
        t.waiting = [w for w in t.waiting if not t.checkpoint(w.ns, w.checkpoint_id)]
        for w in ready:
            stored = t.writes.get((w.ns, w.checkpoint_id), {})
            own, first = self.as_(w.mode, w.actor), len(self.events)
            items = [[idx, ch, own.encode(value, inbound=ch in _INBOUND)] for idx, ch, value in w.items
                     if idx < 0 or (w.task_id, idx) not in stored]  # regular writes are written once
            if items:
                own._add_write(first, _write_record(w, items))
                sync |= sync_after_writes(fsync, [i[1] for i in items])
        return sync

    def _add_write(self, first: int, record: dict) -> None:
        """The write rides on the last message event it added (the line that makes it
        resumable is the line that holds its message); else it is a ``pending_write`` event."""
        if len(self.events) == first:
            self.add("pending_write", "task_writes", metadata=record)
        else:
            self.events[-1]["metadata"]["pendingWrite"] = record
            self.thread.apply_writes(record)

    # -- values and messages --------------------------------------------------------------------
    def encode(self, value: Any, inbound: bool = False) -> Any:
        """``inbound``: the value is on its way into the conversation (see the module docstring)."""
        if not inbound:
            return encode_value(value, self.thread.serde, self._message_ref)
        return encode_value(value, self.thread.serde, self._inbound_ref, self._text_ref)

    def _message_ref(self, message: BaseMessage) -> dict:
        if message.id is None:  # no id is given from this thread (paicli.memory.ledger.saver's docstring)
            return {"$message": list(message_to_record(message, self.thread.serde))}
        return {"$msg": self.message_seq(message)}

    def _inbound_ref(self, message: BaseMessage) -> dict:
        if message.id is not None:
            return {"$msg": self.message_seq(message)}
        # The graph may name it on another thread meanwhile: store what was given, id-less.
        return {"$anon": self.anonymous_seq(message.model_copy(update={"id": None}))}

    def _text_ref(self, value: dict) -> dict | None:
        """``{"$text": seq}`` for the content of a message given as a dict."""
        seq = self.thread.by_text.get(value["content"])
        if seq is None:
            try:
                message = convert_to_messages([value])[0]
            except Exception:  # not a message after all: its content is stored as it is
                return None
            seq = self.message_seq(message) if message.id else self.anonymous_seq(message)
        return {"$text": seq} if self.thread.messages[seq][0]["content"] == value["content"] else None

    def anonymous_seq(self, message: BaseMessage) -> int:
        """The event of an id-less message; one given twice before it is named is stored once."""
        t = self.thread
        record, lc = message_to_record(message, t.serde)
        seq = t.anon.get(anon_key(record))
        if seq is not None and t.messages[seq][1] == lc:
            return seq
        name, source = message_event(record, lc)
        return self.add(name, source, message=record, metadata={"lc": lc})

    def message_seq(self, message: BaseMessage) -> int:
        """The sequence of the event holding ``message``; added now if it is new or changed."""
        t = self.thread
        known = t.by_id.get(message.id)
        if known and (known[1] is message or t.message_at(known[0], {}) == message):
            known[1] = message
            return known[0]
        record, lc = message_to_record(message, t.serde)
        seq = self._named(record, lc) if known is None and t.anon else None
        if seq is None:
            name, source = message_event(record, lc)
            seq = self.add(name, source, message=record, metadata={"lc": lc})
        t.by_id[message.id] = [seq, message]
        return seq

    def _named(self, record: dict, lc: dict) -> int | None:
        """Bind the anonymous event of this message, if there is one, to the id it now has."""
        t = self.thread
        seq = t.anon.get(anon_key(record))
        if seq is None or t.messages[seq][1] != {k: v for k, v in lc.items() if k != "id"}:
            return None
        self.add("message_id", "graph_state", metadata={"messageSequence": seq, "messageId": lc["id"]})
        return seq


def _write_record(w: PendingWrites, items: list) -> dict:
    ns = {"checkpointNs": w.ns} if w.ns else {}  # the root namespace goes without saying
    return {**ns, "checkpointId": w.checkpoint_id, "taskId": w.task_id, "taskPath": w.task_path, "writes": items}


def _is_conversation(value: list) -> bool:
    return all(
        isinstance(m, BaseMessage) and not isinstance(m, RemoveMessage) and m.id is not None for m in value)
