"""A graph's checkpoints inside another thread's ledger, under a namespace of their own.

A Plan or Team run belongs to its session: its messages and checkpoints go to the session's
ledger file, labelled with their mode and actor. But the session's root namespace ``""`` is the
ReAct conversation, and a second graph checkpointing there would overwrite it. So the CLI
compiles the Plan and Team graphs with ``NamespacedSaver(ledger, "plan")``: what LangGraph
sees as the root namespace of the thread is namespace ``plan`` of the same thread in the ledger,
and a task's subgraph namespace ``task:<id>`` is ``plan|task:<id>`` there. Nothing else
changes: the inner saver stores namespaces as it always has (the conformance suite covers them).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata,
                                       CheckpointTuple)

SEP = "|"  # LangGraph's separator of nested namespaces (langgraph._internal._constants.NS_SEP)


class NamespacedSaver(BaseCheckpointSaver):
    def __init__(self, inner: BaseCheckpointSaver, namespace: str) -> None:
        if not namespace or SEP in namespace or ":" in namespace:
            raise ValueError(f"namespace {namespace!r} must be a plain non-empty name")
        super().__init__(serde=inner.serde)
        self.inner, self.namespace = inner, namespace

    # -- config translation --------------------------------------------------------------------
    def _inner_ns(self, ns: str | None) -> str | None:
        if ns is None:
            return None
        return self.namespace if ns == "" else f"{self.namespace}{SEP}{ns}"

    def _outer_ns(self, ns: str) -> str | None:
        if ns == self.namespace:
            return ""
        prefix = self.namespace + SEP
        return ns[len(prefix):] if ns.startswith(prefix) else None

    def _inward(self, config: RunnableConfig | None) -> RunnableConfig | None:
        if config is None:
            return None
        configurable = dict(config.get("configurable") or {})
        configurable["checkpoint_ns"] = self._inner_ns(configurable.get("checkpoint_ns", ""))
        return {**config, "configurable": configurable}

    def _outward(self, config: RunnableConfig | None) -> RunnableConfig | None:
        if config is None:
            return None
        configurable = dict(config.get("configurable") or {})
        configurable["checkpoint_ns"] = self._outer_ns(configurable.get("checkpoint_ns", "")) or ""
        return {**config, "configurable": configurable}

    def _mine(self, item: CheckpointTuple) -> bool:
        return self._outer_ns(item.config["configurable"].get("checkpoint_ns", "")) is not None

    def _tuple(self, item: CheckpointTuple | None) -> CheckpointTuple | None:
        if item is None or not self._mine(item):
            return None
        return item._replace(config=self._outward(item.config), parent_config=self._outward(item.parent_config))

    def _list_config(self, config: RunnableConfig | None) -> RunnableConfig | None:
        """``list`` without a namespace means every namespace: ours are filtered afterwards."""
        if config is None or "checkpoint_ns" not in (config.get("configurable") or {}):
            return config
        return self._inward(config)

    # -- BaseCheckpointSaver -------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._tuple(self.inner.get_tuple(self._inward(config)))

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        found = 0
        for item in self.inner.list(self._list_config(config), filter=filter, before=self._inward(before)):
            if limit is not None and found >= limit:
                return
            if self._mine(item):
                found += 1
                yield self._tuple(item)

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        return self._outward(self.inner.put(self._inward(config), checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self.inner.put_writes(self._inward(config), writes, task_id, task_path)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._tuple(await self.inner.aget_tuple(self._inward(config)))

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        found = 0
        async for item in self.inner.alist(self._list_config(config), filter=filter, before=self._inward(before)):
            if limit is not None and found >= limit:
                return
            if self._mine(item):
                found += 1
                yield self._tuple(item)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return self._outward(await self.inner.aput(self._inward(config), checkpoint, metadata, new_versions))

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await self.inner.aput_writes(self._inward(config), writes, task_id, task_path)

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.inner.get_next_version(current, channel)
