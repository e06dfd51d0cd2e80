"""A process that writes memories as one of paicli's writers does (issue 35's concurrency tests).

    python -m tests.support.memory_writer KIND TARGET WRITER GO WRITERS

KIND is who writes:
- ``server``: LangGraph Server's way, an ``AsyncPostgresStore`` on an async pool in an event loop,
  the nodes' ``memory_of(store).save_fact`` on worker threads (``asyncio.to_thread``), two at a time;
- ``cli``: the CLI's way with ``PAICLI_DATABASE_URL``, ``paicli.run.database.open_database(...).memory``;
- ``file-store``: paicli's file store (``MemoryStore``, what Studio's graphs get in file mode);
- ``file-cli``: the CLI's ``LongTermMemory`` over ``long_term_memory.json``.
TARGET is the database URL or the memory directory. The process touches ``GO.ready<WRITER>`` once
connected and waits for ``GO`` to exist; then it writes the ``same`` facts (50 every writer writes,
interleaved with 50 of its own, with ``--force``), waits until all WRITERS got that far, and writes
the ``ports`` facts (20 services on a port of this writer's own, without ``--force``: the writers'
facts conflict pairwise). It prints one JSON line: per phase, the write statuses it got and how
many of each.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections import Counter

PROJECT = "/work/shared-project"
SERVICES = ("订单中心", "支付网关", "库存系统", "用户画像", "消息推送", "搜索引擎", "日志平台", "配置中心", "风控引擎",
            "报表服务", "文件存储", "权限管理", "账单结算", "推荐算法", "客服工单", "监控告警", "短信通道", "地图定位",
            "视频转码", "数据仓库")


def facts(kind: str, writer: int) -> list[tuple[str, bool]]:
    """``(text, force)`` in writing order."""
    if kind == "same":
        shared = [(f"团队约定第 {i:02d} 条 shared-{i:02d}", True) for i in range(50)]
        own = [(f"第 {writer} 号写入者的第 {i:02d} 条记录 token-w{writer}n{i:02d}", True) for i in range(50)]
        return [pair for both in zip(shared, own) for pair in both]
    port = 8000 + writer * 1000
    return [(f"{name}服务监听端口 {port + i}", False) for i, name in enumerate(SERVICES)]


def wait_for(go: str, writer: int) -> None:
    open(f"{go}.ready{writer}", "w").close()
    while not os.path.exists(go):
        time.sleep(0.005)


def halfway(go: str, writer: int, writers: int) -> None:
    """Between the phases: every writer starts the conflicting facts at about the same moment."""
    open(f"{go}.half{writer}", "w").close()
    while not all(os.path.exists(f"{go}.half{w}") for w in range(writers)):
        time.sleep(0.005)


def write_all(memory, todo: list[tuple[str, bool]]) -> Counter:
    done: Counter = Counter()
    for text, force in todo:
        done[memory.save_fact(text, scope="project", project_key=PROJECT, allow_conflict=force).status.name] += 1
    return done


async def server(url: str, writer: int, go: str, writers: int) -> dict[str, Counter]:
    from langgraph.store.postgres.aio import AsyncPostgresStore

    from paicli.memory.longterm.config import MemoryOptions
    from paicli.memory.longterm.store_entries import memory_of

    async with AsyncPostgresStore.from_conn_string(url, pool_config={"min_size": 1, "max_size": 4}) as store:
        memory = memory_of(store, MemoryOptions(sync=False, user="server"))
        await asyncio.to_thread(wait_for, go, writer)
        done = {}
        for phase in PHASES:
            todo = facts(phase, writer)
            halves = [todo[0::2], todo[1::2]]  # two runs of the server's graphs at once
            counts = await asyncio.gather(*(asyncio.to_thread(write_all, memory, half) for half in halves))
            done[phase] = counts[0] + counts[1]
            if phase == "same":
                await asyncio.to_thread(halfway, go, writer, writers)
    return done


PHASES = ("same", "ports")


def main(argv: list[str]) -> None:
    kind, target, writer, go, writers = argv[0], argv[1], int(argv[2]), argv[3], int(argv[4])
    database = None
    if kind == "server":
        done = asyncio.run(server(target, writer, go, writers))
    else:
        from paicli.memory.longterm.config import MemoryOptions

        options = MemoryOptions(sync=False, user="cli")
        if kind == "cli":
            from paicli.run.database import open_database

            database = open_database(target, PROJECT)
            memory = database.memory(options)
        elif kind == "file-store":
            from paicli.memory.longterm.store import open_store
            from paicli.memory.longterm.store_entries import memory_of

            memory = memory_of(open_store(target, options))
        else:
            from paicli.memory.longterm.manager import LongTermMemory

            memory = LongTermMemory(target, options)
        wait_for(go, writer)
        done = {"same": write_all(memory, facts("same", writer))}
        halfway(go, writer, writers)
        done["ports"] = write_all(memory, facts("ports", writer))
        if database is not None:
            database.close()
    print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
