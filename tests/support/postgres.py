"""A real PostgreSQL for the tests (issue 28 item 8): a throwaway cluster, never a mock.

``.ci/run`` starts one and exports ``PAICLI_TEST_DATABASE_URL``; without it, ``server_url`` starts a
cluster of its own when Debian's binaries are there (``initdb`` and ``pg_ctl``, as the ``postgres``
user when the tests run as root, since PostgreSQL refuses to run as root), listening only on a
socket in a temporary directory. ``fresh_database`` makes an empty database per test.

Run as a script, it starts a cluster, prints its URL and stays up until stdin closes (``.ci/run``).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from urllib.parse import urlencode
from pathlib import Path

URL_VARIABLE = "PAICLI_TEST_DATABASE_URL"


def binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, or None."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


class Cluster:
    """``initdb`` + ``pg_ctl start`` in a temporary directory; ``stop()`` removes it all."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="paicli-pg-"))
        self.data, self.socket = self.root / "data", self.root / "socket"
        self.socket.mkdir()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:  # PostgreSQL will not run as root
            shutil.chown(self.root, "postgres")
            shutil.chown(self.socket, "postgres")
        self.user = "postgres" if self._as_postgres else os.environ.get("USER", "postgres")

    def _run(self, *argv: str) -> None:
        command = [str(self.bin_dir / argv[0]), *argv[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)

    def start(self) -> str:
        self._run("initdb", "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start_server()
        return self.url("postgres")

    def start_server(self) -> None:
        """Start the server (again, after ``stop_server``) on the same socket and data."""
        options = f"-c listen_addresses='' -c unix_socket_directories='{self.socket}' -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-w", "-l", str(self.root / "log"), "start")

    def stop_server(self, mode: str = "fast") -> None:
        """``fast``: a clean shutdown that ends every session (clients see ``AdminShutdown``);
        ``immediate``: as if the server were killed (no shutdown, recovery at the next start)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop_server("fast")
        self.start_server()

    def url(self, database: str) -> str:
        return f"postgresql:///{database}?{urlencode({'host': str(self.socket), 'user': self.user})}"

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except (subprocess.SubprocessError, OSError):
            pass
        shutil.rmtree(self.root, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new empty database on the server; its URL (a libpq URL, as PAICLI_DATABASE_URL takes)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = {k: str(v) for k, v in conninfo_to_dict(server_url).items() if k != "dbname"}
    return f"postgresql:///{name}?{urlencode(params)}"


if __name__ == "__main__":
    bin_dir = binaries()
    if bin_dir is None:
        sys.exit("PostgreSQL binaries not found (initdb, pg_ctl)")
    cluster = Cluster(bin_dir)
    try:
        print(cluster.start(), flush=True)
        sys.stdin.read()  # until the caller closes our stdin
    finally:
        cluster.stop()
