"""macOS: a Seatbelt profile for ``/usr/bin/sandbox-exec`` generated from the same ``Layout``.

It cannot run on Linux; ``tests/unit/test_sandbox.py`` checks the text. Seatbelt rules
are last-match-wins, so the protected paths are denied after the writable roots are allowed, and
unlike a bind mount a ``deny`` covers paths that do not exist yet. Seatbelt has no overlay, so
the toolchain caches stay writable only in their content folders: their ``bin/`` folders, shell
start-up scripts, ``init.d/`` and configuration files are denied (issue 34 item 4), and the
credential stores and paicli's own data are denied for reading.
"""

from __future__ import annotations

import os

from paicli.tools.sandbox.layout import PROTECTED, TEMP_DIRS, Layout

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
# Inside a writable cache, what a later shell or build runs: never writable.
CACHE_PROGRAMS = ("bin", "env", "env.fish", "nvm.sh", "bash_completion", "init.d", "init.gradle", "config",
                  "config.toml", "settings.xml", "gradle.properties", "versions", "alias", "hooks")


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(plan: Layout, network: bool) -> str:
    root = str(plan.root)
    lines = ["(version 1)", "(allow default)", "(deny file-write*)",
             '(allow file-write* (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/")'
             ' (regex #"^/dev/tty"))']
    for path in (*plan.writable, *plan.caches, *TEMP_DIRS):
        lines.append(f"(allow file-write* (subpath {_quote(str(path))}))")
    denied = [os.path.join(root, name) for name in PROTECTED]
    denied += [os.path.join(root, ".git", name) for name in ("config", "hooks", "commondir", "info", "modules",
                                                            "worktrees", "config.worktree")]
    denied += [os.path.join(str(cache), name) for cache in plan.caches for name in CACHE_PROGRAMS]
    if plan.read_only:  # a language server: nothing in the project, whatever writable root holds it
        denied.append(root)
    lines.append("(deny file-write* " + " ".join(f"(subpath {_quote(p)})" for p in denied)
                 + f" (regex #\"^{_regex(root)}/\\.env[^/]*$\"))")
    secrets = [*plan.hidden, *plan.masked]
    if secrets:
        lines.append("(deny file-read* " + " ".join(f"(subpath {_quote(str(p))})" for p in secrets) + ")")
    if not network:
        lines.append("(deny network-outbound (remote ip) (remote unix-socket))")
    return "\n".join(lines) + "\n"


def _regex(path: str) -> str:
    return "".join("\\" + c if c in r".^$*+?()[]{}|\#\"" else c for c in path)


def argv(plan: Layout, command: str, network: bool) -> list[str]:
    return [SANDBOX_EXEC, "-p", profile(plan, network), "bash", "-c", command]
