"""``paicli db import`` and ``paicli db export`` (issue 28 item 5): moving to and from the database.

- ``import`` copies this machine's ledger sessions (every checkpoint and pending write, parents
  first, and ``/clear``'s events, each once) and ``long_term_memory.json`` into ``PAICLI_DATABASE_URL``'s database. Idempotent: a
  checkpoint is keyed by its id and rewritten with the same content; a memory whose id is there
  already, or that duplicates one there, is skipped. It prints the counts, which a second run repeats.
  A project memory keyed by a path of this machine whose checkout has an ``origin`` remote is
  re-keyed to the remote's key (issue 35), the key database mode looks it up by; so are such
  memories an earlier import left under the path. Global memories become the user's own.
- ``export`` writes the database's memories into ``long_term_memory.json`` (PaiCLI's format) in
  ``PAICLI_MEMORY_DIR`` or ``--to DIR``, adding those the file holds neither by id nor as a
  duplicate. With ``--project DIR``, only that project's memories (re-keyed from its remote's
  key to its path, so file mode finds them there) and the user's global ones.
Sessions imported are listed by ``/resume`` in the project ``import`` ran in.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from paicli.memory.errors import PaicliError
from paicli.ui.arguments import Parser
from paicli.config.settings import Settings, load_settings

# The ledger's events that are not checkpoints (``/clear``'s), copied to paicli_session_events.
CLI_EVENTS = frozenset({"history_clear"})


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="paicli db", description="把会话和记忆迁入或迁出 PAICLI_DATABASE_URL 的数据库。",
                                add_help=False)
    p.add_argument("-h", "--help", action="help", help="显示本帮助并退出")  # argparse's own is English
    p.add_argument("action", choices=("import", "export"),
                   help="import：把本机 ledger 中的会话和 long_term_memory.json 导入数据库；"
                   "export：把数据库中的记忆导出到 long_term_memory.json")
    p.add_argument("--to", metavar="DIR", help="export：long_term_memory.json 所在目录（默认 PAICLI_MEMORY_DIR）")
    p.add_argument("--project", metavar="DIR", help="import：导入的会话在哪个项目的 /resume 中列出（默认当前目录）；"
                   "export：只导出这个项目的记忆（项目键从远程仓库地址改回它的路径）和你的全局记忆")
    p.add_argument("--debug", action="store_true", help="意外错误时显示 traceback")
    return p


def run_db(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    settings = load_settings(args.project)
    if not settings.database_url:
        raise PaicliError("paicli db 需要 PAICLI_DATABASE_URL（环境变量或 $PAICLI_HOME/config.json 的 database_url）")
    from paicli.run.database import open_database, project_key

    database = open_database(settings.database_url, project_key(settings.project_root))
    try:
        if args.action == "import":
            sessions, checkpoints = import_sessions(settings, database.saver)
            added, present, moved = import_memories(settings, database)
            print(f"已导入 {sessions} 个会话（{checkpoints} 个检查点）；长期记忆新增 {added} 条，已存在 {present} 条"
                  + _moved(moved, "由项目路径改为远程仓库地址"))
        else:
            one = settings.project_root if args.project else None
            added, present, moved = export_memories(settings, database, Path(args.to) if args.to else settings.memory_dir,
                                                    one)
            print(f"已导出长期记忆{'（项目 ' + str(one) + '）' if one else ''}：新增 {added} 条，文件中已存在 {present} 条"
                  + _moved(moved, "由远程仓库地址改为项目路径"))
    finally:
        database.close()
    return 0


def import_sessions(settings: Settings, saver: Any) -> tuple[int, int]:
    from paicli.memory.ledger.saver import JsonlLedgerSaver
    from paicli.run.wiring import history_dir

    ledger = JsonlLedgerSaver(history_dir(settings))
    sessions = [s["id"] for s in ledger.sessions()]
    count = 0
    for thread in sessions:
        for item in reversed(list(ledger.list({"configurable": {"thread_id": thread}}))):  # parents first
            _copy(item, saver)
            count += 1
        for line in _cli_events(history_dir(settings) / f"{thread}.jsonl"):
            saver.import_event(thread, line)
    return len(sessions), count


def _cli_events(path: Path) -> list[dict[str, Any]]:
    """The ledger's lines of ``CLI_EVENTS``, in order; torn or garbled lines are skipped, as the ledger does."""
    from paicli.memory.ledger.format import decode_line

    with path.open("rb") as f:
        found = [decode_line(line) for line in f]
    return [e for e in found if e is not None and e["event"] in CLI_EVENTS and type(e.get("timestamp")) is int]


def _copy(item: Any, saver: Any) -> None:
    conf = item.config["configurable"]
    parent = (item.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    target = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": conf.get("checkpoint_ns", ""),
                               **({"checkpoint_id": parent} if parent else {})}}
    saved = saver.put(target, item.checkpoint, item.metadata, dict(item.checkpoint["channel_versions"]))
    writes: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    for task_id, channel, value in item.pending_writes or ():
        writes[task_id].append((channel, value))
    for task_id, pairs in writes.items():
        saver.put_writes(saved, pairs, task_id)


def _moved(count: int, how: str) -> str:
    return f"；{count} 条项目记忆的项目键{how}" if count else ""


def import_memories(settings: Settings, database: Any) -> tuple[int, int, int]:
    """``(added, present, re-keyed)``: the file's memories into the database (see the module docstring)."""
    from paicli.memory.longterm.manager import LongTermMemory
    from paicli.memory.longterm.transfer import merge, owned_by, rekey

    memory = database.memory(settings.memory.options)
    source = LongTermMemory(settings.memory_dir, settings.memory.options).entries()

    def add(current: list) -> tuple[int, int, int]:
        keys = remote_keys(e.project for e in [*source, *current] if e.project)
        current[:], moved = rekey(current, keys)  # what an earlier import left under a path
        incoming, rekeyed = rekey(owned_by(source, memory.owner), keys)
        counts = merge(current, incoming)
        return len(counts.added), counts.present, len(moved) + sum(e.id in rekeyed for e in counts.added)

    return memory.file.mutate(add)


def export_memories(settings: Settings, database: Any, directory: Path,
                    project: Path | None = None) -> tuple[int, int, int]:
    """``(added, present, re-keyed)``: the database's memories (or one project's and the user's
    global ones) into the file at ``directory``."""
    from paicli.memory.longterm.entry import SCOPE_GLOBAL, is_visible_in_project, normalize_project_key
    from paicli.memory.longterm.manager import LongTermMemory
    from paicli.memory.longterm.transfer import merge, owned_by, rekey
    from paicli.run.database import project_key

    source = database.memory(settings.memory.options).entries()
    keys: dict[str, str] = {}
    if project is not None:
        remote, path = project_key(project), normalize_project_key(project)
        source = [e for e in source if e.scope == SCOPE_GLOBAL or is_visible_in_project(e, remote)]
        keys = {remote: path}
    incoming, rekeyed = rekey(owned_by(source, None), keys)
    target = LongTermMemory(directory, settings.memory.options)

    def add(current: list) -> tuple[int, int, int]:
        current[:], moved = rekey(current, keys)  # what an earlier export left under the remote's key
        counts = merge(current, incoming)
        return len(counts.added), counts.present, len(moved) + sum(e.id in rekeyed for e in counts.added)

    return target.file.mutate(add)


def remote_keys(projects: Any) -> dict[str, str]:
    """``{path: remote key}`` for the project paths of this machine whose checkout has an ``origin``
    remote (``paicli.run.database.project_key``); other keys (remotes already, paths elsewhere) stay."""
    from paicli.run.database import project_key

    keys = {}
    for key in set(projects):
        if key in keys or not Path(key).is_absolute() or not Path(key).is_dir():
            continue
        new = project_key(Path(key))
        if new != key:
            keys[key] = new
    return keys
