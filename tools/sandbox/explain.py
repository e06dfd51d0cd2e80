"""What the model reads after a sandboxed command: which path the sandbox refused, under which
rule, and how to proceed. Read from the command's own error messages (EROFS / EBUSY / no network),
which every tool prints in one of a few shapes."""

from __future__ import annotations

import re
from pathlib import Path

from paicli.tools.sandbox.layout import Layout, rule_for

# "touch: cannot touch '/x': Read-only file system", "bash: /x: Read-only file system",
# "[Errno 30] Read-only file system: '/x'", "rm: cannot remove 'PAI.md': Device or resource busy"
_DENIED = re.compile(r"(?:'(?P<q>[^']+)'|(?P<p>[^\s:'\"]+)):?\s*(?:Read-only file system|Device or resource busy)"
                     r"|(?:Read-only file system|Device or resource busy|Errno 30\][^:]*):\s*'(?P<a>[^']+)'")
# "mv: cannot move '.git' to 'x': Device or resource busy": the refusal is about the source (a
# protected path, or a directory pinned because it holds one) as much as the destination.
_MOVE = re.compile(r"cannot move '(?P<src>[^']+)' to '(?P<dest>[^']+)':\s*(?:Read-only file system|Device or resource busy)")
# "mv: inter-device move failed: 'a' to '/etc/a'; unable to remove target: Read-only file system"
_INTER_DEVICE = re.compile(r"inter-device move failed: '[^']+' to '(?P<dest>[^']+)'; unable to remove target:\s*"
                           r"(?P<why>Read-only file system|Device or resource busy)")
_NO_NETWORK = re.compile(r"Network is unreachable|Could not resolve host|Temporary failure in name resolution|"
                         r"Name or service not known|getaddrinfo|ENETUNREACH|EAI_AGAIN")
# A failed command that looks like it wanted the network (a silent `curl -s` prints nothing).
_NETWORK_WORDS = re.compile(r"\b(?:curl|wget|ssh|scp|rsync|nc|pip3?\s+install|npm\s+(?:install|i|ci)|yarn|pnpm|"
                            r"cargo\s+(?:install|fetch|build)|go\s+(?:get|mod)|git\s+(?:clone|fetch|pull|push))\b|"
                            r"https?://|/dev/tcp/")
MAX_PATHS = 3
OUTSIDE_RULE = "项目外只有临时目录、工具链缓存和 PAICLI_SANDBOX_WRITABLE 可写"
HOW_OUTSIDE = ("如确需写项目外的路径：请用户把它加入 PAICLI_SANDBOX_WRITABLE（用户配置），"
               "或带 sandbox: false 和 reason 重新调用（用户需输入 y 确认）")
HOW_PROTECTED = "受保护路径请用 write_file / edit_file 修改（用户会被询问）"
HOW_PINNED = "受保护路径及包含它们的目录不能移动、改名或删除；如确需如此，请带 sandbox: false 和 reason 重新调用（用户需输入 y 确认）"
HOW_NETWORK = "沙箱内没有网络；如确需联网，请带 network: true 和 reason 重新调用（需要用户批准）"


def denied_paths(output: str) -> list[str]:
    found: list[str] = []
    output = _INTER_DEVICE.sub(lambda m: f"'{m.group('dest')}': {m.group('why')}", output)
    for m in _DENIED.finditer(output):
        path = m.group("q") or m.group("p") or m.group("a")
        if path and path not in found:
            found.append(path)
    return found[:MAX_PATHS]


def refused_moves(output: str) -> list[tuple[str, str]]:
    """(source, destination) of each move the sandbox refused."""
    return list(dict.fromkeys((m.group("src"), m.group("dest")) for m in _MOVE.finditer(output)))[:MAX_PATHS]


def _held(plan: Layout, path: Path) -> tuple[Path, str] | None:
    """A protected path at or inside ``path`` (a directory pinned because it holds one), with its rule."""
    rule = rule_for(plan.root, path)
    if rule:
        return path, rule
    for inner in (*plan.protected, *plan.missing):
        if inner.is_relative_to(path) and inner != path and (found := rule_for(plan.root, inner)):
            return inner, found
    return None


def explain(plan: Layout, output: str, removed: list[tuple[str, str]], network: bool, command: str = "",
            ok: bool = True) -> str:
    notes = [f"🔒 沙箱已撤销命令新建的受保护路径 {path}（{rule}）；{HOW_PROTECTED}" for path, rule in removed]
    moved: set[str] = set()
    for src, dest in refused_moves(output):
        held = _held(plan, _full(plan, src))
        if held is None:
            continue  # the destination's fault: said below like any refused write
        inner, rule = held
        where = "" if inner == _full(plan, src) else f"其中有受保护路径 {_shown(plan, inner)}："
        notes.append(f"🔒 沙箱拒绝移动 {src}（{where}{rule}）；{HOW_PINNED}")
        moved.add(dest)
    for raw in denied_paths(output):
        if raw in moved:
            continue
        path = _full(plan, raw)
        rule = rule_for(plan.root, path)
        if rule:
            notes.append(f"🔒 沙箱拒绝写入受保护路径 {raw}（{rule}）；{HOW_PROTECTED}")
        else:
            notes.append(f"🔒 沙箱拒绝写入 {raw}（{OUTSIDE_RULE}）；{HOW_OUTSIDE}")
    if not network and (_NO_NETWORK.search(output) or (not ok and _NETWORK_WORDS.search(command))):
        notes.append(f"🔒 {HOW_NETWORK}")
    return "".join(note + "\n" for note in notes)


def _full(plan: Layout, raw: str) -> Path:
    return Path(raw) if raw.startswith("/") else plan.root / raw


def _shown(plan: Layout, path: Path) -> str:
    return path.relative_to(plan.root).as_posix() if path.is_relative_to(plan.root) else str(path)
