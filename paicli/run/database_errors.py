"""A database that went away during a turn or a command (issue 35): one line, never a traceback.

With ``PAICLI_DATABASE_URL`` every checkpoint and memory write is a round trip; a server that
stops or restarts meanwhile fails that call with ``psycopg.OperationalError`` (``AdminShutdown``,
a closed connection, the pool's ``PoolTimeout``). The REPL shows ``failure_line`` for it and stays
(what was saved before is in the database; the next turn reconnects); ``-p`` prints it and exits
1 (``paicli.errors.run_guarded``). psycopg is not imported here: a process that never opened a
database cannot have such an error, and the REPL starts without loading it.
"""

from __future__ import annotations

import sys

_NAMED: list[str] = []  # the database the process opened, named without its password


def remember(url: str) -> None:
    """``paicli.run.database.open_database``: the database later failures are named after."""
    _NAMED[:] = [describe(url)]


def describe(url: str) -> str:
    """``<database>@<host or socket directory>[:<port>]``, from the URL's parts only (no password)."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - a name for a message: whatever cannot be read is left out
        return "PAICLI_DATABASE_URL"
    where = str(parts.get("host") or "localhost")
    if parts.get("port"):
        where += f":{parts['port']}"
    return f"{parts.get('dbname') or parts.get('user') or '?'}@{where}"


def connection_error(exc: BaseException) -> BaseException | None:
    """The error in ``exc``'s chain (cause or context) that says the connection is gone: a
    ``psycopg.OperationalError`` (a closed connection, the pool's timeout) or an error of
    PostgreSQL's class 57 (operator intervention: ``AdminShutdown``, ``CrashShutdown``...), not
    one of the operational errors a live server reports (a deadlock, a serialization failure)."""
    psycopg = sys.modules.get("psycopg")
    kind = getattr(psycopg, "OperationalError", None)
    if kind is None:
        return None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind) and _gone(current):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _gone(error: BaseException) -> bool:
    state = getattr(error, "sqlstate", None)
    return state is None or state.startswith(("57", "08"))  # no server answer, shutdown, connection exception


def failure_line(exc: BaseException) -> str | None:
    """The one line for a database connection failure in ``exc``, or None when it is none."""
    found = connection_error(exc)
    if found is None:
        return None
    reason = " ".join(str(found).split())[:200] or type(found).__name__
    name = _NAMED[0] if _NAMED else "PAICLI_DATABASE_URL"
    return (f"❌ 数据库 {name} 连接中断（{type(found).__name__}：{reason}）；这一步没有完成，"
            "之前保存的会话和记忆都还在，数据库恢复后重试即可")
