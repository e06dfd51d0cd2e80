"""Coming back to a project (issue 26): which session was used last in it, and whether a
session has a Plan or Team run that was cut short.

``$PAICLI_HOME/history/projects.json`` maps a project root to the session a turn or run last
started in there; ``paicli --continue`` without ``--session`` and the REPL's start-up line read
it. Whether a run is unfinished is read from the ledger without compiling a graph (the REPL's
first prompt must not wait for LangGraph): a run's state says ``status`` only once it ended
(``completed``, ``partial``, ``failed``, ``cancelled``), so a latest checkpoint of the mode's
namespace without one is a run that did not end. ``ModeRun.unfinished`` asks the graph itself.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from paicli.modes import RUN_MODES

ENDED = {"completed", "partial", "failed", "cancelled"}
STARTUP = "⏸️ 这个项目最近的会话 {sid} 有未完成的 {mode} 运行，paicli --continue 继续执行。"
NO_SESSION = "这个项目还没有会话可以继续：用 paicli --session <id> --continue 指定一个会话"
NAMED = "⏸️ 会话 {sid} 有未完成的 {mode} 运行，输入 /continue 继续执行。"
UNKNOWN_SESSION = "未找到会话 {sid}：/resume 或 paicli -p /resume 列出已有的会话"
NEW_SESSION = "🆕 没有找到会话 {sid}，将以这个 id 新建会话（已有的会话可用 /resume 列出）"


def _index(home: Path) -> Path:
    return home / "history" / "projects.json"


def _read(home: Path) -> dict[str, Any]:
    try:
        data = json.loads(_index(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def newest_session(home: Path, project_root: Path) -> str | None:
    sid = _read(home).get(str(project_root))
    return sid if isinstance(sid, str) and sid else None


def remember_session(home: Path, project_root: Path, session_id: str) -> None:
    """Best effort: a lost write only loses the hint. Replaced atomically, so a reader never
    sees half a file."""
    data = _read(home)
    if data.get(str(project_root)) == session_id:
        return
    data[str(project_root)] = session_id
    path = _index(home)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".projects.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False)
        os.replace(tmp, path)
    except OSError:
        pass


def has_ledger(history: Path, session_id: str) -> bool:
    return (history / f"{session_id}.jsonl").is_file()


def unfinished_mode(saver: Any, session_id: str) -> str | None:
    """The mode of the session's run that did not end, read from ``saver`` (the ledger)."""
    from paicli.memory.ledger.namespaced import NamespacedSaver

    for mode in RUN_MODES:
        found = NamespacedSaver(saver, mode).get_tuple({"configurable": {"thread_id": session_id,
                                                                         "checkpoint_ns": ""}})
        if found is not None and found.checkpoint["channel_values"].get("status") not in ENDED:
            return mode
    return None


def startup_line(home: Path, history: Path, project_root: Path, session: str | None = None) -> str | None:
    """The REPL's one line about the project's newest session, or the one ``--session`` named,
    when its run did not end."""
    sid = newest_session(home, project_root) if session is None else session
    if sid is None or not has_ledger(history, sid):
        return None
    from paicli.memory.ledger.saver import JsonlLedgerSaver

    mode = unfinished_mode(JsonlLedgerSaver(history), sid)
    return (STARTUP if session is None else NAMED).format(sid=sid, mode=mode) if mode else None
