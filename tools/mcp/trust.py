"""Which project MCP servers the user trusted: ``$PAICLI_HOME/mcp/trust.json``.

``{"<project root>": {"<server>": "<sha256 of its entry>"}}``. A project's ``.mcp.json`` is a
command line chosen by whoever wrote the repository, so a server of it starts only when this
file holds exactly its entry's digest: a changed entry (another command, other arguments) needs
``/mcp trust`` again. Written atomically under a lock, as two sessions may trust at once.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from filelock import FileLock

from paicli.tools.mcp.config import ServerConfig


class TrustStore:
    def __init__(self, path: Path | None, project: str):
        self.path, self.project = path, project

    def trusted(self, server: ServerConfig) -> bool:
        if not server.needs_trust:
            return True
        return self._read().get(self.project, {}).get(server.name) == server.digest

    def trust(self, server: ServerConfig) -> None:
        if self.path is None:
            raise OSError("没有保存 MCP 信任决定的目录（$PAICLI_HOME/mcp）")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            data = self._read()
            data.setdefault(self.project, {})[server.name] = server.digest
            self._write(data)

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8")) if self.path else {}
        except (OSError, ValueError):
            return {}  # missing or garbled: nothing is trusted, which is the safe reading
        return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}

    def _write(self, data: dict[str, dict[str, str]]) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
        os.replace(tmp, self.path)
