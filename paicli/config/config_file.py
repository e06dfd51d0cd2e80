"""Writing ``$PAICLI_HOME/config.json`` for a command (``/model add``, ``/config provider``): read it,
change one part, write it back whole and atomically, so a reader sees the old file or the new one
and every key the user wrote by hand stays as it was. A file that is not a JSON object is never
overwritten: the command says so and changes nothing."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paicli.config.feature_settings import ConfigError


def update_config(home: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    path = home / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"❌ {path} 无法读取或不是合法的 JSON（{exc}），未修改；请先修正它") from None
    if not isinstance(data, dict):
        raise ConfigError(f"❌ {path} 不是 JSON 对象，未修改；请先修正它")
    change(data)
    home.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".config.", suffix=".json", dir=home)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
        os.chmod(temp, 0o600)  # it may hold keys
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
