"""Variables no command sees, sandboxed or not (reference t: execute_command's sanitising)."""

from __future__ import annotations

# reference (t): names ending so, containing so, or equal to these.
SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_ACCESS_TOKEN", "_REFRESH_TOKEN", "_SECRET", "_PASSWORD")
SECRET_PARTS = ("PRIVATE_KEY", "SECRET_ACCESS_KEY", "CLIENT_SECRET")
SECRET_NAMES = frozenset({"ANTHROPIC_AUTH_TOKEN", "AUTHORIZATION"})


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in SECRET_NAMES or upper.endswith(SECRET_SUFFIXES) or any(p in upper for p in SECRET_PARTS)
