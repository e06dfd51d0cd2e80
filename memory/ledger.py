"""The session ledger as LangGraph's checkpointer (ARCHITECTURE.md "Persistence", reference h).

One append-only JSONL file per thread, ``<history_dir>/<thread_id>.jsonl`` (the CLI passes
``$PAICLI_HOME/history/raw``). Every line is a PaiCLI ledger event (``memory.ledger_format``):

- each message once, as its own event (``user``, ``assistant``, ``tool_call``, ``tool_result``,
  ``system``), when it first shows up in a checkpoint, a pending write or a channel value;
- each checkpoint a ``view_checkpoint`` event: ids; versions, versions_seen and metadata as
  changes on the parent's; the ``messages`` channel as ledger sequences (``{"base": parent,
  "append": [...]}`` when the list only grew, else ``{"refs": [...]}``); other channels only when
  their version changed (older values are found through the index);
- each ``put_writes`` a ``pending_write`` event, written once its checkpoint is in the file.
  LangGraph saves writes and checkpoints from different threads and a write can arrive first;
  until its checkpoint exists it cannot be resumed from, so the write waits in memory. That keeps
  message events in conversation order and stores no message twice;
- ``delete_for_runs`` / ``prune`` append ``checkpoint_delete`` / ``checkpoint_prune`` events that
  hide checkpoints: lines are never rewritten, and only ``delete_thread`` removes a file;
- a ``compaction`` event (reference c.3) before the view of a checkpoint whose ``compaction``
  channel changed: the compact node leaves ``{"source", "metadata", "mode"}`` there, so rewrites
  are recorded for CLI and Studio runs alike; other CLI events (``history_clear``) come through
  ``append_event``.

So the file grows with the conversation, not with its square. Every ``full_every`` (64) links, a
checkpoint is written in full (versions, metadata, the view as refs, every channel value): that
bounds the work of a read and what one garbled line can take with it, the checkpoints between it
and the next full one (hidden, counted in the warning). A garbled message line loses that message.

Durability: a line is one ``os.write`` on an O_APPEND descriptor, under ``<thread>.jsonl.lock``,
which also serialises sequence numbers across processes. ``fsync="turn"`` (default) syncs after a
checkpoint with no task left to run (a run ended), after an input checkpoint (the user's words are
on disk before the model is called), after writes carrying an interrupt or an error, and after
the saver's own events; ``"always"`` and ``"never"`` do what they say. Async methods run the sync
ones on one worker thread, first come first served: the file sees LangGraph's calls in the order
it made them, and the event loop never blocks.

Reads: an index per thread, built by replaying the file once per process, then topped up with only
the bytes appended since. A torn or garbled line is skipped and counted in one warning; before an
append after a torn last line, a newline closes it off.

Messages are values: one is never changed in place once checkpointed (LangGraph replaces messages
by id). Views and writes refer to messages by id, so the async methods give an id-less message
its id (uuid4) on the event loop, where ``add_messages`` would give it one a moment later; doing
it on any other thread would race ``add_messages`` and leave two ids for one message. The sync
methods are called from LangGraph's pool threads, so they store an id-less message in place.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import re
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

from filelock import FileLock, Timeout
from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata,
    CheckpointTuple, get_checkpoint_id, get_checkpoint_metadata, writes_sort_key,
)
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, TASKS

from memory.ledger_format import (
    SessionFold, apply_map, apply_seen, apply_versions, decode_line, decode_value, diff_map,
    diff_seen, diff_versions, encode_line, encode_value, is_mapping, make_event, message_event,
    message_to_record, pack_versions, record_to_message, unpack_versions,
)

MESSAGES = "messages"  # the conversation channel (add_messages), stored as views
COMPACTION = "compaction"  # the last compaction record, written as a compaction event
START = "__start__"
FULL_EVERY = 64  # default links of a delta chain before a full record
THREAD_ID = re.compile(r"[A-Za-z0-9._-]+")  # reference h.1
FSYNC_POLICIES = ("turn", "always", "never")
_OWN_EVENTS = frozenset({"view_checkpoint", "pending_write", "checkpoint_delete", "checkpoint_prune"})
_NOT_HEADER = frozenset({"id", "channel_values", "channel_versions", "versions_seen"})


class LedgerWarning(RuntimeWarning):
    """Lines of a ledger file could not be read and were skipped."""


@dataclass(slots=True)
class _Checkpoint:
    ns: str
    id: str
    parent: str | None
    header: Any  # encoded checkpoint fields other than id, values and versions
    metadata: Any = None  # encoded checkpoint metadata
    versions: dict = field(default_factory=dict)
    seen: dict = field(default_factory=dict)
    own: dict[str, tuple[str, Any]] = field(default_factory=dict)  # stored here: ("view" | "value", data)
    depth: int = 0  # links since the last full record
    broken: bool = False  # a record it builds on was lost
    hidden: bool = False  # broken, deleted or pruned


@dataclass(slots=True)
class _Writes:
    """One ``put_writes`` call, kept until its checkpoint is in the file."""

    ns: str
    checkpoint_id: str
    task_id: str
    task_path: str
    items: list[tuple[int, str, Any]]  # (idx, channel, value)
    mode: str
    actor: str


class _Thread:
    """The index of one ledger file; guarded by ``lock`` (threads) and ``flock`` (processes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.flock = FileLock(f"{path}.lock", mode=0o600, thread_local=False)
        self.waiting: list[_Writes] = []
        self.reset()

    def reset(self) -> None:
        self.offset, self.inode, self.max_seq, self.torn_at, self.broken = 0, None, -1, None, 0
        self.messages: dict[int, tuple[dict, dict]] = {}  # seq → (record, lc)
        self.by_id: dict[str, list] = {}  # message id → [seq, the object last seen or None]
        self.checkpoints: dict[str, dict[str, _Checkpoint]] = {}
        self.holders: dict[tuple[str, str, Any], str] = {}  # (ns, channel, version) → checkpoint id
        self.writes: dict[tuple[str, str], dict[tuple[str, int], tuple]] = {}
        self.seqs: dict[tuple[str, str], tuple[int, ...]] = {}  # a few recently resolved views

    def checkpoint(self, ns: str, checkpoint_id: str | None) -> _Checkpoint | None:
        return self.checkpoints.get(ns, {}).get(checkpoint_id) if checkpoint_id else None


@dataclass
class _Batch:
    """The events of one call: numbered and indexed as they are made, then written together."""

    thread: _Thread
    thread_id: str
    mode: str
    actor: str
    events: list[dict] = field(default_factory=list)


class JsonlLedgerSaver(BaseCheckpointSaver[str]):
    def __init__(self, history_dir: str | os.PathLike, *, serde: Any = None, fsync: str = "turn",
                 mode: str = "react", actor: str = "agent", full_every: int = FULL_EVERY) -> None:
        super().__init__(serde=serde)
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync must be one of {FSYNC_POLICIES}, not {fsync!r}")
        self.dir, self.fsync, self.mode, self.actor = Path(history_dir).expanduser(), fsync, mode, actor
        self.full_every = max(1, full_every)
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            os.chmod(self.dir, 0o700)  # reference h.1: the ledger holds raw prompts and tool output
        except OSError:
            pass
        self._threads: dict[str, _Thread] = {}
        self._lock = threading.Lock()
        self._folds: dict[Path, tuple[Any, int, SessionFold]] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger")

    # -- BaseCheckpointSaver -------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id, ns = _thread_id(config), config["configurable"].get("checkpoint_ns", "")
        t = self._thread(thread_id)
        with t.lock:
            self._catch_up(t)
            if checkpoint_id := get_checkpoint_id(config):
                ck = t.checkpoint(ns, checkpoint_id)
            else:
                ck = max((c for c in t.checkpoints.get(ns, {}).values() if not c.hidden), key=lambda c: c.id, default=None)
            return self._tuple(t, thread_id, ck, {}) if ck and not ck.hidden else None

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        ns = config["configurable"].get("checkpoint_ns") if config else None
        wanted = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        found = []
        for thread_id in [_thread_id(config)] if config else self._thread_ids():
            t = self._thread(thread_id)
            with t.lock:
                self._catch_up(t)
                found += [(ck.id, thread_id, ck) for cks in t.checkpoints.values() for ck in cks.values()
                          if not ck.hidden and ns in (None, ck.ns) and wanted in (None, ck.id)
                          and (before_id is None or ck.id < before_id) and self._matches(t, ck, filter)]
        found.sort(key=lambda f: f[0], reverse=True)
        memos: dict[str, dict] = {}  # messages are shared by the tuples of one call
        for _, thread_id, ck in found[:limit] if limit is not None else found:
            t = self._thread(thread_id)
            with t.lock:
                item = self._tuple(t, thread_id, ck, memos.setdefault(thread_id, {}))
            yield item

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        thread_id, ns = _thread_id(config), config["configurable"].get("checkpoint_ns", "")
        metadata = get_checkpoint_metadata(config, metadata)
        t = self._thread(thread_id)
        with t.lock, t.flock:
            self._catch_up(t, writing=True)
            batch = self._batch(t, thread_id, metadata)
            self._add_compaction(batch, checkpoint["channel_values"].get(COMPACTION) if COMPACTION in new_versions else None)
            view = self._view_record(batch, ns, config["configurable"].get("checkpoint_id"),
                                     checkpoint, metadata, new_versions)
            self._add(batch, "view_checkpoint", str(metadata.get("source") or "loop"), metadata=view)
            sync = self._add_waiting_writes(batch)
            self._flush(batch, sync or self._sync_after_put(checkpoint, metadata))
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        thread_id, configurable = _thread_id(config), config["configurable"]
        t = self._thread(thread_id)
        with t.lock, t.flock:
            self._catch_up(t, writing=True)
            batch = self._batch(t, thread_id, get_checkpoint_metadata(config, {}))
            items = [(WRITES_IDX_MAP.get(channel, i), channel, value) for i, (channel, value) in enumerate(writes)]
            t.waiting.append(_Writes(configurable.get("checkpoint_ns", ""), configurable["checkpoint_id"],
                                     task_id, task_path, items, batch.mode, batch.actor))
            sync = self._add_waiting_writes(batch)
            if batch.events:
                self._flush(batch, sync)

    def delete_thread(self, thread_id: str) -> None:
        """Remove the thread's file and lock: the one operation that does not append."""
        t = self._thread(thread_id)
        with t.lock, t.flock:
            _unlink(t.path)
            t.reset()
            t.waiting.clear()
        _unlink(Path(f"{t.path}.lock"))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Hide the checkpoints (and writes) of these runs with a ``checkpoint_delete`` event."""
        runs = set(run_ids)
        for thread_id in self._thread_ids() if runs else []:
            t = self._thread(thread_id)
            with t.lock, t.flock:
                self._catch_up(t, writing=True)
                doomed = [[ck.ns, ck.id] for cks in t.checkpoints.values() for ck in cks.values()
                          if not ck.hidden and self._metadata(t, ck).get("run_id") in runs]
                if doomed:
                    self._append_own(t, thread_id, "checkpoint_delete", "delete_for_runs",
                                     {"runIds": sorted(runs), "checkpoints": doomed})

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy the file under the new id, sessionId rewritten; the target must not exist yet."""
        src, dst = self._thread(source_thread_id), self._thread(target_thread_id)
        with src.lock:
            self._catch_up(src)
            data = _read(src.path, 0, src.offset) if src.offset else b""
        events = (decode_line(line) for line in data.split(b"\n") if line.strip())
        lines = [encode_line({**e, "sessionId": target_thread_id}) for e in events if e is not None]
        if not lines:
            return
        with dst.lock, dst.flock:
            if dst.path.exists() and dst.path.stat().st_size:
                raise ValueError(f"thread {target_thread_id!r} already has a ledger")
            temporary = dst.path.with_name(dst.path.name + ".tmp")
            _write_file(temporary, b"".join(lines), sync=self.fsync != "never")
            os.replace(temporary, dst.path)
            dst.reset()
            self._sync_dir()

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Hide all but the latest checkpoint per namespace (``"delete"``: all of them) with a
        ``checkpoint_prune`` event. The lines stay: they are the session's history."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}")
        for thread_id in thread_ids:
            t = self._thread(thread_id)
            with t.lock, t.flock:
                self._catch_up(t, writing=True)
                latest = {ns: max(live, key=lambda c: c.id).id for ns, cks in t.checkpoints.items()
                          if (live := [c for c in cks.values() if not c.hidden])}
                if latest:
                    keep = latest if strategy == "keep_latest" else {}
                    self._append_own(t, thread_id, "checkpoint_prune", "prune", {"strategy": strategy, "keep": keep})

    def get_next_version(self, current: str | None, channel: None) -> str:
        number = 0 if current is None else int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"  # InMemorySaver's format (notes §2.6)

    # -- the CLI's events and the session list -----------------------------------------------
    def append_event(self, thread_id: str, event: str, *, mode: str | None = None, actor: str | None = None,
                     source: str = "", metadata: dict | None = None) -> int:
        """Append a non-message event (``compaction``, ``history_clear``…); returns its sequence."""
        if event.strip() in _OWN_EVENTS:
            raise ValueError(f"{event!r} events are written by the checkpointer itself")
        t = self._thread(thread_id)
        with t.lock, t.flock:
            self._catch_up(t, writing=True)
            batch = _Batch(t, thread_id, mode or self.mode, actor or self.actor)
            sequence = self._add(batch, event, source, metadata=dict(metadata or {}))
            self._flush(batch, self.fsync != "never")
        return sequence

    def sessions(self) -> list[dict]:
        """``{id, started, last_activity, mode, title, messages}`` per ledger, newest first.
        A file is read once; later calls read only what was appended since."""
        with self._lock:
            found = [self._summary(path) for path in self.dir.glob("*.jsonl")]
        return sorted((s for s in found if s), key=lambda s: s["last_activity"], reverse=True)

    # -- async twins: the sync methods on the worker thread ------------------------------------
    async def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._worker, functools.partial(fn, *args, **kwargs))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._run(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        for item in await self._run(lambda: [*self.list(config, filter=filter, before=before, limit=limit)]):
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        _give_ids(checkpoint["channel_values"].get(channel) for channel in new_versions)
        return await self._run(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        _give_ids(value for _, value in writes)
        await self._run(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._run(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._run(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._run(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._run(self.prune, thread_ids, strategy=strategy)

    async def aappend_event(self, thread_id: str, event: str, **kwargs: Any) -> int:
        return await self._run(self.append_event, thread_id, event, **kwargs)

    async def asessions(self) -> list[dict]:
        return await self._run(self.sessions)

    # -- writing -------------------------------------------------------------------------------
    def _batch(self, t: _Thread, thread_id: str, metadata: dict) -> _Batch:
        mode, actor = metadata.get("mode"), metadata.get("actor")
        return _Batch(t, thread_id, mode if isinstance(mode, str) else self.mode,
                      actor if isinstance(actor, str) else self.actor)

    def _add(self, batch: _Batch, name: str, source: str, *, message: dict | None = None,
             metadata: dict | None = None) -> int:
        t = batch.thread
        event = make_event(batch.thread_id, t.max_seq + 1, name, mode=batch.mode, actor=batch.actor,
                           source=source, message=message, metadata=metadata)
        self._apply(t, event)
        batch.events.append(event)
        return event["sequence"]

    def _append_own(self, t: _Thread, thread_id: str, name: str, source: str, metadata: dict) -> None:
        batch = _Batch(t, thread_id, self.mode, self.actor)
        self._add(batch, name, source, metadata=metadata)
        self._flush(batch, self.fsync != "never")

    def _flush(self, batch: _Batch, sync: bool) -> None:
        t = batch.thread
        created = t.inode is None
        try:
            lines = [encode_line(e) for e in batch.events]
            fd = os.open(t.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                for line in lines:  # one write per line: a reader never sees two half lines
                    _write_all(fd, line)
                if sync:
                    os.fsync(fd)
                stat = os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException:
            t.reset()  # the index is ahead of the file: replay it next time
            raise
        t.offset, t.inode = t.offset + sum(map(len, lines)), (stat.st_dev, stat.st_ino)
        if created:
            self._sync_dir()

    def _sync_dir(self) -> None:
        if self.fsync != "never":
            fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _sync_after_put(self, checkpoint: Checkpoint, metadata: dict) -> bool:
        if self.fsync != "turn":
            return self.fsync == "always"
        values = checkpoint["channel_values"]
        pending = any(ch == START or ch.startswith("branch:to:") or (ch == TASKS and values[ch]) for ch in values)
        return metadata.get("source") == "input" or not pending

    def _view_record(self, batch: _Batch, ns: str, parent_id: str | None, checkpoint: Checkpoint,
                     metadata: dict, new_versions: ChannelVersions) -> dict:
        parent = batch.thread.checkpoint(ns, parent_id)
        if parent is None or parent.broken or parent.depth + 1 >= self.full_every:
            parent = None  # a full record: it needs no earlier checkpoint
        record = {"checkpointNs": ns, "checkpointId": checkpoint["id"], "parentId": parent_id,
                  "checkpoint": self._encode(batch, {k: v for k, v in checkpoint.items() if k not in _NOT_HEADER})}
        record.update(_changes(parent, checkpoint["channel_versions"], checkpoint["versions_seen"],
                               self._encode(batch, metadata)))
        values, channels = checkpoint["channel_values"], {}
        for channel in (c for c in (new_versions if parent else values) if c in values):
            if channel == MESSAGES and _is_conversation(values[channel]):
                record["messages"] = self._view(batch, parent, values[channel])
            else:
                channels[channel] = self._encode(batch, values[channel])
        if channels:
            record["channels"] = channels
        return record

    def _view(self, batch: _Batch, parent: _Checkpoint | None, messages: list) -> dict:
        seqs = [self._message_seq(batch, m) for m in messages]
        base = self._seqs(batch.thread, parent) if parent is not None else None
        if base and len(base) <= len(seqs) and tuple(seqs[:len(base)]) == base:
            return {"base": parent.id, "append": seqs[len(base):]}
        return {"refs": seqs}

    def _add_compaction(self, batch: _Batch, record: Any) -> None:
        if isinstance(record, dict) and isinstance(record.get("metadata"), dict):
            mode = record.get("mode") if isinstance(record.get("mode"), str) else batch.mode
            own = _Batch(batch.thread, batch.thread_id, mode, batch.actor, batch.events)
            self._add(own, "compaction", str(record.get("source") or ""), metadata=self._encode(own, record["metadata"]))

    def _add_waiting_writes(self, batch: _Batch) -> bool:
        """Add the waiting writes whose checkpoint is now indexed; True when they call for fsync."""
        t, sync = batch.thread, False
        ready = [w for w in t.waiting if t.checkpoint(w.ns, w.checkpoint_id)]
        t.waiting = [w for w in t.waiting if not t.checkpoint(w.ns, w.checkpoint_id)]
        for w in ready:
            stored = t.writes.get((w.ns, w.checkpoint_id), {})
            own = _Batch(t, batch.thread_id, w.mode, w.actor, batch.events)
            items = [[idx, ch, self._encode(own, value)] for idx, ch, value in w.items
                     if idx < 0 or (w.task_id, idx) not in stored]  # regular writes are written once
            if items:
                self._add(own, "pending_write", "task_writes", metadata={
                    "checkpointNs": w.ns, "checkpointId": w.checkpoint_id, "taskId": w.task_id,
                    "taskPath": w.task_path, "writes": items})
                sync |= self.fsync == "always" or (self.fsync == "turn" and any(i[1] in (INTERRUPT, ERROR) for i in items))
        return sync

    def _encode(self, batch: _Batch, value: Any) -> Any:
        return encode_value(value, self.serde, functools.partial(self._message_ref, batch))

    def _message_ref(self, batch: _Batch, message: BaseMessage) -> dict:
        if message.id is None:  # see the module docstring: no id is given from this thread
            return {"$message": list(message_to_record(message, self.serde))}
        return {"$msg": self._message_seq(batch, message)}

    def _message_seq(self, batch: _Batch, message: BaseMessage) -> int:
        """The sequence of the event holding ``message``; written now if it is new or changed."""
        t = batch.thread
        known = t.by_id.get(message.id)
        if known and (known[1] is message or self._message_at(t, known[0], {}) == message):
            known[1] = message
            return known[0]
        record, lc = message_to_record(message, self.serde)
        name, source = message_event(record)
        seq = self._add(batch, name, source, message=record, metadata={"lc": lc})
        t.by_id[message.id] = [seq, message]
        return seq

    # -- reading -------------------------------------------------------------------------------
    def _catch_up(self, t: _Thread, writing: bool = False) -> None:
        """Apply what was appended since the last look (by another process, or all of it)."""
        try:
            stat = os.stat(t.path)
        except FileNotFoundError:
            if t.inode is not None:
                t.reset()
            return
        if t.inode not in (None, (stat.st_dev, stat.st_ino)) or stat.st_size < t.offset:
            t.reset()
        t.inode = (stat.st_dev, stat.st_ino)
        if stat.st_size == t.offset:
            return
        data = _read(t.path, t.offset, stat.st_size)
        end, broken = data.rfind(b"\n") + 1, t.broken
        skipped = sum(not self._apply_line(t, line) for line in data[:end].split(b"\n")[:-1] if line.strip())
        t.offset += end
        if end < len(data) and (writing or self._torn(t, stat.st_size)):
            skipped += t.torn_at != t.offset  # an unfinished last line, counted once
            t.torn_at = t.offset
            if writing:  # close it off so the next event starts on a line of its own
                _append_bytes(t.path, b"\n")
                t.offset, t.torn_at = stat.st_size + 1, None
        _warn_skipped(t, skipped, t.broken - broken)

    def _torn(self, t: _Thread, size: int) -> bool:
        """An unfinished last line is torn if no writer holds the lock and the file stays put."""
        try:
            t.flock.acquire(timeout=0)
        except Timeout:
            return False
        try:
            return os.stat(t.path).st_size == size
        finally:
            t.flock.release()

    def _apply_line(self, t: _Thread, line: bytes) -> bool:
        """Apply one line; False when it is torn, garbled or not a well-formed event."""
        event = decode_line(line)
        if event is None:
            return False
        try:
            self._apply(t, event)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            return False
        return True

    def _apply(self, t: _Thread, event: dict) -> None:
        t.max_seq = max(t.max_seq, event["sequence"])
        name, metadata = event["event"], event.get("metadata") or {}
        if event.get("message") is not None:
            lc = metadata.get("lc") or {}
            t.messages[event["sequence"]] = (event["message"], lc)
            if lc.get("id") is not None:
                t.by_id[lc["id"]] = [event["sequence"], None]
        elif name == "view_checkpoint":
            self._apply_view(t, metadata)
        elif name == "pending_write":
            stored = t.writes.setdefault((metadata["checkpointNs"], metadata["checkpointId"]), {})
            task = metadata["taskId"]
            for idx, channel, value in metadata["writes"]:
                if idx < 0 or (task, idx) not in stored:
                    stored[(task, idx)] = (task, idx, channel, value, metadata["taskPath"])
        elif name in ("checkpoint_delete", "checkpoint_prune"):
            _hide(t, metadata)

    def _apply_view(self, t: _Thread, record: dict) -> None:
        ns, checkpoint_id = record["checkpointNs"], record["checkpointId"]
        parent = t.checkpoint(ns, record.get("parentId"))
        ck = _Checkpoint(ns, checkpoint_id, record.get("parentId"), record.get("checkpoint", {}))
        if "channelVersions" in record:
            ck.versions, ck.metadata = unpack_versions(record["channelVersions"]), record["checkpointMetadata"]
            ck.seen = {node: unpack_versions(v) for node, v in record["versionsSeen"].items()}
        elif parent is not None and not parent.broken:
            ck.versions = apply_versions(parent.versions, record["channelVersionsDelta"])
            ck.seen = apply_seen(parent.seen, record["versionsSeenDelta"])
            ck.metadata = apply_map(parent.metadata, record["checkpointMetadataDelta"])
            ck.depth = parent.depth + 1
        else:  # built on a lost line; the versions it sets still say which values it holds
            ck.broken, ck.versions = True, apply_versions({}, record["channelVersionsDelta"])
        ck.own = {ch: ("value", value) for ch, value in record.get("channels", {}).items()}
        if "messages" in record:
            ck.own[MESSAGES] = ("view", record["messages"])
            self._link_view(t, ck, record["messages"])
        ck.hidden = ck.broken
        t.broken += ck.broken
        cks = t.checkpoints.setdefault(ns, {})
        if checkpoint_id in cks:  # the same checkpoint put again: resolved views may be stale
            t.seqs.clear()
        cks[checkpoint_id] = ck
        for channel in ck.own:
            t.holders[(ns, channel, ck.versions.get(channel))] = checkpoint_id

    def _link_view(self, t: _Thread, ck: _Checkpoint, view: dict) -> None:
        if "base" in view:
            base = t.checkpoint(ck.ns, view["base"])
            holder = self._holder(t, base, MESSAGES) if base is not None and not base.broken else None
            ck.broken |= holder is None or holder.own[MESSAGES][0] != "view"

    def _holder(self, t: _Thread, ck: _Checkpoint, channel: str) -> _Checkpoint | None:
        """The checkpoint that stored ``ck``'s version of ``channel``."""
        if channel not in ck.versions:
            return None
        if channel in ck.own:
            return ck
        return t.checkpoint(ck.ns, t.holders.get((ck.ns, channel, ck.versions[channel])))

    def _seqs(self, t: _Thread, ck: _Checkpoint) -> tuple[int, ...] | None:
        """The message sequences of ``ck``'s conversation (None: not stored as a view)."""
        holder = self._holder(t, ck, MESSAGES)
        if holder is None or holder.own[MESSAGES][0] != "view":
            return None
        chain, visited, seqs = [], set(), ()
        while holder is not None and holder.own[MESSAGES][0] == "view" and holder.id not in visited:
            visited.add(holder.id)  # a checkpoint put twice could otherwise close a loop
            if (cached := t.seqs.get((ck.ns, holder.id))) is not None:
                seqs = cached
                break
            view = holder.own[MESSAGES][1]
            chain.append((holder.id, view))
            if "refs" in view:
                break
            base = t.checkpoint(ck.ns, view["base"])
            holder = self._holder(t, base, MESSAGES) if base else None
        for _, view in reversed(chain):
            seqs = tuple(view["refs"]) if "refs" in view else seqs + tuple(view["append"])
        if chain:
            if len(t.seqs) >= 16:
                t.seqs.pop(next(iter(t.seqs)))
            t.seqs[(ck.ns, chain[0][0])] = seqs
        return seqs

    def _tuple(self, t: _Thread, thread_id: str, ck: _Checkpoint, memo: dict) -> CheckpointTuple:
        values = {}
        for channel in ck.versions:
            holder = self._holder(t, ck, channel)
            if holder is None:
                continue
            kind, data = holder.own[channel]
            if kind == "value":
                values[channel] = self._decode(t, data, memo)
            elif (seqs := self._seqs(t, holder)) is not None:
                values[channel] = [m for m in (self._message_at(t, s, memo) for s in seqs) if m is not None]
        checkpoint = {**self._decode(t, ck.header, memo), "id": ck.id, "channel_values": values,
                      "channel_versions": dict(ck.versions), "versions_seen": {n: dict(v) for n, v in ck.seen.items()}}
        writes = sorted(t.writes.get((ck.ns, ck.id), {}).values(), key=lambda w: writes_sort_key(w[4], w[0], w[1]))

        def config(checkpoint_id: str) -> RunnableConfig:
            return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ck.ns, "checkpoint_id": checkpoint_id}}

        return CheckpointTuple(config(ck.id), checkpoint, self._metadata(t, ck, memo),
                               config(ck.parent) if ck.parent else None,
                               [(w[0], w[2], self._decode(t, w[3], memo)) for w in writes])

    def _decode(self, t: _Thread, value: Any, memo: dict) -> Any:
        return decode_value(value, self.serde, lambda seq: self._message_at(t, seq, memo))

    def _metadata(self, t: _Thread, ck: _Checkpoint, memo: dict | None = None) -> dict:
        return self._decode(t, ck.metadata, {} if memo is None else memo)

    def _matches(self, t: _Thread, ck: _Checkpoint, filter: dict | None) -> bool:
        metadata = self._metadata(t, ck) if filter else {}
        return all(metadata.get(k) == v for k, v in (filter or {}).items())

    def _message_at(self, t: _Thread, seq: int, memo: dict) -> BaseMessage | None:
        """A fresh message object for event ``seq``, shared within one call through ``memo``."""
        if seq not in memo:
            stored = t.messages.get(seq)
            message = memo[seq] = record_to_message(*stored, self.serde) if stored else None
            known = t.by_id.get(message.id) if message is not None else None
            if known and known[0] == seq:
                known[1] = message  # the graph hands this very object back to put
        return memo[seq]

    def _thread(self, thread_id: str) -> _Thread:
        if not THREAD_ID.fullmatch(thread_id):
            raise ValueError(f"thread id {thread_id!r} must match [A-Za-z0-9._-]+ (it names a file)")
        with self._lock:
            if thread_id not in self._threads:
                self._threads[thread_id] = _Thread(self.dir / f"{thread_id}.jsonl")
            return self._threads[thread_id]

    def _thread_ids(self) -> list[str]:
        names = (p.name[:-len(".jsonl")] for p in self.dir.glob("*.jsonl"))
        return sorted(n for n in names if THREAD_ID.fullmatch(n))

    def _summary(self, path: Path) -> dict | None:
        try:
            return self._fold(path).summary(path.name[:-len(".jsonl")])
        except FileNotFoundError:  # deleted since the directory was listed
            return None

    def _fold(self, path: Path) -> SessionFold:
        stat = path.stat()
        inode, offset, fold = self._folds.get(path, (None, 0, None))
        if fold is None or inode != (stat.st_dev, stat.st_ino) or stat.st_size < offset:
            inode, offset, fold = (stat.st_dev, stat.st_ino), 0, SessionFold()
        if stat.st_size > offset:
            data = _read(path, offset, stat.st_size)
            end = data.rfind(b"\n") + 1
            for event in filter(None, map(decode_line, data[:end].split(b"\n")[:-1])):
                fold.add(event)
            offset += end
        self._folds[path] = (inode, offset, fold)
        return fold


def _changes(parent: _Checkpoint | None, versions: dict, seen: dict, metadata: Any) -> dict:
    """Versions, versions_seen and metadata: as changes on ``parent``'s, or in full without one."""
    if parent is None or not is_mapping(metadata) or not is_mapping(parent.metadata):
        return {"channelVersions": pack_versions(versions),
                "versionsSeen": {node: pack_versions(v) for node, v in seen.items()},
                "checkpointMetadata": metadata}
    return {"channelVersionsDelta": diff_versions(parent.versions, versions),
            "versionsSeenDelta": diff_seen(parent.seen, seen),
            "checkpointMetadataDelta": diff_map(parent.metadata, metadata)}


def _thread_id(config: RunnableConfig) -> str:
    return str(config["configurable"]["thread_id"])


def _is_conversation(value: Any) -> bool:
    return type(value) is list and all(
        isinstance(m, BaseMessage) and not isinstance(m, RemoveMessage) and m.id is not None for m in value)


def _give_ids(values: Any) -> None:
    """Give every id-less message in ``values`` an id (on the event loop; see the module docstring)."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, BaseMessage):
            if value.id is None and not isinstance(value, RemoveMessage):
                value.id = str(uuid4())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())


def _hide(t: _Thread, metadata: dict) -> None:
    if "checkpoints" in metadata:  # checkpoint_delete: these ones
        doomed = {(ns, cid) for ns, cid in metadata["checkpoints"]}
    else:  # checkpoint_prune: every checkpoint before this line but the kept ones
        keep = metadata.get("keep", {})
        doomed = {(ns, cid) for ns, cks in t.checkpoints.items() for cid in cks if keep.get(ns) != cid}
    for ns, cid in doomed:
        if ck := t.checkpoint(ns, cid):
            ck.hidden = True
        t.writes.pop((ns, cid), None)


def _warn_skipped(t: _Thread, lines: int, checkpoints: int) -> None:
    if lines or checkpoints:
        lost = f" and {checkpoints} checkpoint(s) built on a lost line" if checkpoints else ""
        warnings.warn(f"ledger {t.path}: skipped {lines} unreadable line(s) (torn or garbled){lost}",
                      LedgerWarning, stacklevel=4)


def _read(path: Path, start: int, end: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _append_bytes(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes, sync: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


@asynccontextmanager
async def make_checkpointer() -> AsyncIterator[JsonlLedgerSaver]:
    """The checkpointer ``langgraph.json`` names (``./memory/ledger.py:make_checkpointer``).

    The server's entry point, hence the one place besides ``paicli/settings.py`` that reads the
    environment (ARCHITECTURE.md: ``PAICLI_HOME``, default ``~/.paicli``). The saver is built on a
    worker thread: creating its directory is a blocking call ``langgraph dev`` refuses on its loop.
    """
    home = Path(os.environ.get("PAICLI_HOME") or "~/.paicli").expanduser()
    yield await asyncio.to_thread(JsonlLedgerSaver, home / "history" / "raw")
