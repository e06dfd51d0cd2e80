"""macOS: a Seatbelt profile for ``/usr/bin/sandbox-exec`` generated from the same ``Layout``.

It cannot run on Linux; ``tests/unit/test_sandbox.py`` checks the text. Seatbelt rules
are last-match-wins, so the protected paths are denied after the writable roots are allowed, and
unlike a bind mount a ``deny`` covers paths that do not exist yet.
"""

from __future__ import annotations

import os

from tools.sandbox.layout import PROTECTED, Layout

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(plan: Layout, network: bool) -> str:
    root = str(plan.root)
    lines = ["(version 1)", "(allow default)", "(deny file-write*)",
             '(allow file-write* (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/")'
             ' (regex #"^/dev/tty"))']
    for path in plan.writable:
        lines.append(f"(allow file-write* (subpath {_quote(str(path))}))")
    denied = [os.path.join(root, name) for name in PROTECTED]
    lines.append("(deny file-write* " + " ".join(f"(subpath {_quote(p)})" for p in denied)
                 + f" (regex #\"^{_regex(root)}/\\.env[^/]*$\"))")
    if not network:
        lines.append("(deny network-outbound (remote ip) (remote unix-socket))")
    return "\n".join(lines) + "\n"


def _regex(path: str) -> str:
    return "".join("\\" + c if c in r".^$*+?()[]{}|\#\"" else c for c in path)


def argv(plan: Layout, command: str, network: bool) -> list[str]:
    return [SANDBOX_EXEC, "-p", profile(plan, network), "bash", "-c", command]
