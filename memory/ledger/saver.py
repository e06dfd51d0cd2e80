"""The session ledger as LangGraph's checkpointer (reference h; docs/architecture.md, "Persistence").

One append-only JSONL file per thread, ``<history_dir>/<thread_id>.jsonl`` (the CLI passes
``$PAICLI_HOME/history/raw``). Every line is a PaiCLI ledger event (``paicli.memory.ledger.format``): each
message once, each checkpoint a ``view_checkpoint`` referring to messages by sequence, each
``put_writes`` on the event of the message it brought or as a ``pending_write``
(``paicli.memory.ledger.batch``). So the file grows with the conversation, not with its square. ``delete_for_runs`` / ``prune`` append ``checkpoint_delete`` /
``checkpoint_prune`` events that hide checkpoints: lines are never rewritten, and only
``delete_thread`` removes a file. Other CLI events (``history_clear``) come through
``append_event``.

One writer per session (``paicli.memory.ledger.owner``): ``put`` refuses while another process holds
the thread's turn lock, and refuses a child of a checkpoint another writer has added a child to
since the run read it, so two processes never silently hide each other's turns.

Appends, locking and fsync: ``paicli.memory.ledger.io``. A call that writes (``put``, ``put_writes``,
``append_event``, ``prune``...) while another process runs a turn on the thread is refused with
``SessionBusy``: that process holds the append lock for its turn. Reads: an index per thread
(``paicli.memory.ledger.index``). Async methods run the sync ones on one worker thread, first come first
served, the calls made within two turns of the event loop in one hop: the file sees LangGraph's
calls in the order it made them, and the event loop never blocks.

Messages are values: one is never changed in place once checkpointed (LangGraph replaces messages
by id). Views and writes refer to messages by id, so the async methods give an id-less message
its id (uuid4) on the event loop, where ``add_messages`` would give it one a moment later; doing
it on any other thread would race ``add_messages`` and leave two ids for one message. The sync
methods are called from LangGraph's pool threads, so they store an id-less message in place.
"""

from __future__ import annotations

import asyncio
import functools
import operator
import os
import random
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any
from uuid import uuid4

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata,
    CheckpointTuple, get_checkpoint_id, get_checkpoint_metadata,
)

from paicli.memory.ledger.batch import Batch, PendingWrites
from paicli.memory.ledger.format import decode_line, encode_line
from paicli.memory.ledger.index import LedgerWarning, ThreadIndex, check_writer, refuse_if_busy
from paicli.memory.ledger.io import FSYNC_POLICIES, replace_file, sync_after_put, sync_dir, unlink
from paicli.memory.ledger.owner import LedgerConflict, SessionBusy, TurnLock
from paicli.memory.ledger.sessions import SessionList

__all__ = ["JsonlLedgerSaver", "LedgerConflict", "LedgerWarning", "SessionBusy"]

COMPACTION = "compaction"  # the last compaction record, written as a compaction event
FULL_EVERY = 64  # default links of a delta chain before a full record
THREAD_ID = re.compile(r"[A-Za-z0-9._-]+")  # reference h.1
_OWN_EVENTS = frozenset({"view_checkpoint", "pending_write", "message_id", "checkpoint_delete", "checkpoint_prune"})


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
        self._threads: dict[str, ThreadIndex] = {}
        self._lock = threading.Lock()
        self._sessions = SessionList(self.dir)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger")
        self._queued: dict[asyncio.AbstractEventLoop, list[tuple[Callable[[], Any], asyncio.Future]]] = {}

    # -- BaseCheckpointSaver -------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        t, ns = self._thread(_thread_id(config)), _ns(config)
        with t.lock:
            t.catch_up()
            checkpoint_id = get_checkpoint_id(config)
            ck = t.checkpoint(ns, checkpoint_id) if checkpoint_id else t.latest(ns)
            found = ck if ck and not ck.hidden else None
            t.read(ns, found.id if found else checkpoint_id)
            return t.tuple(found, {}) if found else None

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        ns = config["configurable"].get("checkpoint_ns") if config else None
        wanted = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        found = []
        for thread_id in [_thread_id(config)] if config else self._thread_ids():
            t = self._thread(thread_id)
            with t.lock:
                t.catch_up()
                found += [(ck.id, t, ck) for ck in t.live() if ns in (None, ck.ns) and wanted in (None, ck.id)
                          and (before_id is None or ck.id < before_id) and t.matches(ck, filter)]
        found.sort(key=lambda f: f[0], reverse=True)
        memos: dict[str, dict] = {}  # messages are shared by the tuples of one call
        for _, t, ck in found[:limit] if limit is not None else found:
            with t.lock:
                item = t.tuple(ck, memos.setdefault(t.thread_id, {}))
            yield item

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        t, ns = self._thread(_thread_id(config)), _ns(config)
        metadata = get_checkpoint_metadata(config, metadata)
        with t.lock, self._appending(t):
            t.catch_up(writing=True)
            check_writer(t, ns, config["configurable"].get("checkpoint_id"), checkpoint["id"])
            with _replayed_on_error(t):
                batch = self._batch(t, metadata)
                batch.add_compaction(checkpoint["channel_values"].get(COMPACTION) if COMPACTION in new_versions else None)
                batch.add_view(ns, config["configurable"].get("checkpoint_id"), checkpoint, metadata, new_versions,
                               self.full_every)
                sync = batch.add_ready_writes(self.fsync)
                self._flush(batch, sync or sync_after_put(self.fsync, checkpoint, metadata))
            t.own.add(checkpoint["id"])
            t.read(ns, checkpoint["id"])  # the run goes on from what it just put
        return {"configurable": {"thread_id": t.thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        t, configurable = self._thread(_thread_id(config)), config["configurable"]
        with t.lock, self._appending(t):
            t.catch_up(writing=True)
            batch = self._batch(t, get_checkpoint_metadata(config, {}))
            items = [(WRITES_IDX_MAP.get(channel, i), channel, value) for i, (channel, value) in enumerate(writes)]
            t.waiting.append(PendingWrites(configurable.get("checkpoint_ns", ""), configurable["checkpoint_id"],
                                           task_id, task_path, items, batch.mode, batch.actor))
            with _replayed_on_error(t):
                sync = batch.add_ready_writes(self.fsync)
                if batch.events:
                    self._flush(batch, sync)

    def delete_thread(self, thread_id: str) -> None:
        """Remove the thread's file and lock: the one operation that does not append."""
        t = self._thread(thread_id)
        with t.lock, self._appending(t):
            unlink(t.path)
            t.reset()
            t.waiting.clear()
        unlink(Path(f"{t.path}.lock"))
        unlink(t.turn.owner_path)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Hide the checkpoints (and writes) of these runs with a ``checkpoint_delete`` event."""
        runs = set(run_ids)
        for thread_id in self._thread_ids() if runs else []:
            t = self._thread(thread_id)
            with t.lock, self._appending(t):
                t.catch_up(writing=True)
                doomed = [[ck.ns, ck.id] for ck in t.live() if t.metadata(ck).get("run_id") in runs]
                if doomed:
                    self._append_own(t, "checkpoint_delete", "delete_for_runs",
                                     {"runIds": sorted(runs), "checkpoints": doomed})

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy the file under the new id, sessionId rewritten; the target must not exist yet."""
        src, dst = self._thread(source_thread_id), self._thread(target_thread_id)
        with src.lock:
            src.catch_up()
            data = src.file.read_all()
        events = (decode_line(line) for line in data.split(b"\n") if line.strip())
        lines = [encode_line({**e, "sessionId": target_thread_id}) for e in events if e is not None]
        if not lines:
            return
        with dst.lock, self._appending(dst):
            if dst.path.exists() and dst.path.stat().st_size:
                raise ValueError(f"thread {target_thread_id!r} already has a ledger")
            replace_file(dst.path, b"".join(lines), sync=self.fsync != "never")
            dst.reset()
            sync_dir(self.dir, self.fsync)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Hide all but the latest checkpoint per namespace (``"delete"``: all of them) with a
        ``checkpoint_prune`` event. The lines stay: they are the session's history. LangGraph's
        contract (``PostgresSaver.prune``): a single string is refused (``TypeError``), not read
        as one thread per character; an unknown strategy is a ``ValueError``."""
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}")
        for thread_id in thread_ids:
            t = self._thread(thread_id)
            with t.lock, self._appending(t):
                t.catch_up(writing=True)
                latest = {ns: ck.id for ns in t.checkpoints if (ck := t.latest(ns))}
                if latest:
                    keep = latest if strategy == "keep_latest" else {}
                    self._append_own(t, "checkpoint_prune", "prune", {"strategy": strategy, "keep": keep})

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
        with t.lock, self._appending(t):
            t.catch_up(writing=True)
            with _replayed_on_error(t):
                batch = Batch(t, mode or self.mode, actor or self.actor)
                sequence = batch.add(event, source, metadata=dict(metadata or {}))
                self._flush(batch, self.fsync != "never")
        return sequence

    def turn_lock(self, thread_id: str) -> TurnLock:
        """The lock a front end holds for a turn on this thread (paicli.memory.ledger.owner)."""
        return self._thread(thread_id).turn

    def sessions(self) -> list[dict]:
        """``{id, started, last_activity, mode, title, messages}`` per ledger, newest first.
        A file is read once; later calls read only what was appended since."""
        with self._lock:
            return self._sessions.summaries()

    # -- async twins: the sync methods on the worker thread ------------------------------------
    async def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Queue the call for the worker. Calls queued within two turns of the event loop go
        over in one hop, in order: LangGraph saves a task's writes and then the step's
        checkpoint from two tasks it starts a turn apart, so a step costs one hop, not two. A
        call waits at most those two turns longer, so what a kill -9 can lose is unchanged."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        queued = self._queued.get(loop)
        if queued is None:
            queued = self._queued[loop] = []
            loop.call_soon(loop.call_soon, self._send, loop)  # two turns: see the docstring
        queued.append((functools.partial(fn, *args, **kwargs), future))
        try:
            return await future
        except asyncio.CancelledError:
            self._send(loop)  # a cancelled caller's call still runs (as with run_in_executor), now
            raise

    def _send(self, loop: asyncio.AbstractEventLoop) -> None:
        jobs = self._queued.pop(loop, None)
        if jobs:  # None: sent already
            self._worker.submit(_run_jobs, loop, jobs)

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

    # -- helpers -------------------------------------------------------------------------------
    def _thread(self, thread_id: str) -> ThreadIndex:
        if not THREAD_ID.fullmatch(thread_id):
            raise ValueError(f"thread id {thread_id!r} must match [A-Za-z0-9._-]+ (it names a file)")
        with self._lock:
            if thread_id not in self._threads:
                self._threads[thread_id] = ThreadIndex(thread_id, self.dir / f"{thread_id}.jsonl", self.serde)
            return self._threads[thread_id]

    def _thread_ids(self) -> list[str]:
        names = (p.name[:-len(".jsonl")] for p in self.dir.glob("*.jsonl"))
        return sorted(n for n in names if THREAD_ID.fullmatch(n))

    @staticmethod
    def _appending(t: ThreadIndex) -> AbstractContextManager[None]:
        """The append lock for one call: while another process's turn holds it, the call is
        refused (``SessionBusy``) rather than left waiting for that turn to end."""
        return t.file.appending(lambda: refuse_if_busy(t))

    def _batch(self, t: ThreadIndex, metadata: dict) -> Batch:
        """A batch labelled with the run's mode and actor (config metadata), else the saver's."""
        mode, actor = metadata.get("mode"), metadata.get("actor")
        return Batch(t, mode if isinstance(mode, str) else self.mode, actor if isinstance(actor, str) else self.actor)

    def _append_own(self, t: ThreadIndex, name: str, source: str, metadata: dict) -> None:
        with _replayed_on_error(t):
            batch = Batch(t, self.mode, self.actor)
            batch.add(name, source, metadata=metadata)
            self._flush(batch, self.fsync != "never")

    def _flush(self, batch: Batch, sync: bool) -> None:
        """Append the batch's lines (the caller replays the index if this fails: ``_replayed_on_error``)."""
        created = batch.thread.file.append(batch.lines(), sync)
        if created:
            sync_dir(self.dir, self.fsync)


@contextmanager
def _replayed_on_error(t: ThreadIndex) -> Iterator[None]:
    """A batch indexes each event as it adds it, so a call that fails before its lines are in
    the file (a value that does not encode, a failed write) leaves the index ahead of the file:
    it is forgotten, and the next call replays the file rather than refer to events never written."""
    try:
        yield
    except BaseException:
        t.reset()
        raise


def _run_jobs(loop: asyncio.AbstractEventLoop, jobs: list[tuple[Callable[[], Any], asyncio.Future]]) -> None:
    """On the worker: run each job in order, then settle their futures on the loop at once."""
    settled: list[tuple[asyncio.Future, Any, BaseException | None]] = []
    for job, future in jobs:
        try:
            settled.append((future, job(), None))
        except BaseException as exc:  # noqa: BLE001 - the caller's await raises it, as run_in_executor does
            settled.append((future, None, exc))
    try:
        loop.call_soon_threadsafe(_settle, settled)
    except RuntimeError:  # the loop closed meanwhile: nobody is waiting any more
        pass


def _settle(settled: list[tuple[asyncio.Future, Any, BaseException | None]]) -> None:
    for future, result, exc in settled:
        if future.done():  # cancelled (Ctrl-C): the job ran all the same, as with run_in_executor
            continue
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)


def _thread_id(config: RunnableConfig) -> str:
    return str(config["configurable"]["thread_id"])


def _ns(config: RunnableConfig) -> str:
    return config["configurable"].get("checkpoint_ns", "")


def _give_ids(values: Any) -> None:
    """Give every id-less message in ``values`` an id (on the event loop; see the module docstring)."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, BaseMessage):
            if value.id is None and not isinstance(value, RemoveMessage):
                value.id = str(uuid4())
        elif isinstance(value, (list, tuple)):
            if not _all_named(value):
                stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())


def _all_named(items: list | tuple) -> bool:
    """True when every item has an id: a conversation, looked at in C rather than message by
    message (it is the whole history, on every put). An item without an ``id`` attribute (a
    list, a dict) says no, and the caller looks inside."""
    try:
        return None not in map(_ID, items)
    except AttributeError:
        return False


_ID = operator.attrgetter("id")
