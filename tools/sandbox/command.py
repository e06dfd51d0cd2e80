"""Deciding how one command runs: sandboxed, sandboxed with network, or outside (and why)."""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable, Mapping

from tools.sandbox import bwrap, seatbelt
from tools.sandbox.layout import Layout, layout
from tools.sandbox.sweep import Before, before, undo

MODES = ("auto", "required", "off")  # PAICLI_COMMAND_SANDBOX; auto is paicli's default (reference t: off)
# reference (t): required refuses to run a command without the sandbox.
REQUIRED_REFUSAL = "命令沙箱不可用（{why}），PAICLI_COMMAND_SANDBOX=required 时不在宿主直接执行命令"
REQUIRED_OUTSIDE = "PAICLI_COMMAND_SANDBOX=required 时不在沙箱外执行命令（sandbox: false 不可用）"
SANDBOXED, NETWORK, OUTSIDE = "sandboxed", "network", "outside"  # how a command ran, for /audit


@dataclass(frozen=True)
class SandboxOptions:
    """The user's choices; ``paicli/settings.py`` fills them (never from a project's .env)."""

    mode: str = "auto"  # PAICLI_COMMAND_SANDBOX: auto | required | off
    network: bool = False  # PAICLI_SANDBOX_NETWORK=on: every command has network
    writable: tuple[str, ...] = ()  # PAICLI_SANDBOX_WRITABLE: more writable roots
    skipped: bool = False  # --dangerously-skip-sandbox: this run's commands run outside


@dataclass(frozen=True)
class Mechanism:
    kind: str  # "bwrap" | "seatbelt"
    path: str

    @cached_property
    def label(self) -> str:
        """What the banner shows; ``bwrap --version`` runs only when it is shown (issue 30)."""
        if self.kind == "seatbelt":
            return "macOS Seatbelt (sandbox-exec)"
        return f"{bwrap.version(self.path)} ({bwrap.short(self.path)})"


@dataclass(frozen=True)
class Unavailable:
    why: str


Finder = Callable[[], "Mechanism | Unavailable"]


@lru_cache(maxsize=1)
def find_mechanism() -> Mechanism | Unavailable:
    """This machine's sandbox, probed once per process."""
    if sys.platform == "darwin":
        if os.path.exists(seatbelt.SANDBOX_EXEC):
            return Mechanism("seatbelt", seatbelt.SANDBOX_EXEC)
        return Unavailable(f"找不到 {seatbelt.SANDBOX_EXEC}")
    if not sys.platform.startswith("linux"):
        return Unavailable(f"{sys.platform} 上没有支持的命令沙箱")
    problems = []
    for path in bwrap.candidates():
        problem = bwrap.probe(path)
        if problem is None:
            return Mechanism("bwrap", path)
        problems.append(problem)
    return Unavailable("; ".join(problems) or "找不到 bubblewrap（bwrap）")


@dataclass(frozen=True)
class SandboxState:
    """What the banner, /context and /policy show."""

    on: bool
    mechanism: str  # label, or "" when off / unavailable
    why_not: str  # why commands run outside ("" when on)
    writable: tuple[str, ...]
    network: str  # "off" (per call with approval) | "on" | "host"

    def lines(self) -> list[str]:
        if not self.on:
            return [f"⚠️ 命令沙箱未启用：{self.why_not}；命令直接在本机执行"]
        net = {"off": "关闭（单条命令可申请 network: true，需要批准）", "on": "开启（PAICLI_SANDBOX_NETWORK=on）"}
        return [f"🔒 命令沙箱: {self.mechanism}；网络: {net.get(self.network, self.network)}",
                f"   可写: {', '.join(self.writable)}（受保护路径除外）"]


@dataclass
class Launch:
    """One command, ready to run: ``argv``, how it runs, and what to check once it has ended."""

    argv: list[str]
    how: str  # SANDBOXED | NETWORK | OUTSIDE
    plan: Layout | None = None
    seen: Before | None = None
    command: str = ""

    def finish(self, output: str, ok: bool = True) -> str:
        """Notes for the model after the command ended: removed protected paths, refusals seen."""
        if self.plan is None or self.seen is None:
            return ""
        from tools.sandbox.explain import explain  # its patterns only after a sandboxed command (issue 30)

        removed = undo(self.plan, self.seen)
        return explain(self.plan, output, removed, network=self.how == NETWORK, command=self.command, ok=ok)


@dataclass
class CommandSandbox:
    settings: SandboxOptions = field(default_factory=SandboxOptions)
    finder: Finder = find_mechanism  # a test passes one that finds nothing
    _found: Mechanism | Unavailable | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def mechanism(self) -> Mechanism | Unavailable:
        with self._lock:
            if self._found is None:
                self._found = self.finder()
            return self._found

    def why_outside(self) -> str | None:
        """Why this run's commands are not sandboxed, or None when they are."""
        if self.settings.skipped:
            return "--dangerously-skip-sandbox"
        if self.settings.mode == "off":
            return "PAICLI_COMMAND_SANDBOX=off"
        found = self.mechanism()
        return found.why if isinstance(found, Unavailable) else None

    def launch(self, command: str, root: Path, env: Mapping[str, str], *, network: bool = False,
               outside: bool = False) -> Launch:
        """``outside``: a person approved ``sandbox: false`` for this call. Raises ``RuntimeError``
        with the reference's text when ``required`` cannot be met."""
        plain = ["bash", "-c", command]
        if outside and self.settings.mode == "required":
            raise RuntimeError(REQUIRED_OUTSIDE)
        if outside or self.settings.skipped or self.settings.mode == "off":
            return Launch(plain, OUTSIDE)
        found = self.mechanism()
        if isinstance(found, Unavailable):
            if self.settings.mode == "required":
                raise RuntimeError(REQUIRED_REFUSAL.format(why=found.why))
            return Launch(plain, OUTSIDE)
        network = network or self.settings.network
        # paicli's own data directory, made before it can be mounted read-only: swept instead, it
        # would take with it what a parallel Plan task's offloader wrote there meanwhile. Empty,
        # it is invisible to git.
        own = root / ".paicli"
        if not os.path.lexists(own):
            try:
                own.mkdir()
            except OSError:  # then it is swept like the other protected paths
                pass
        plan = layout(root, dict(env), self.settings.writable)
        seen = before(plan)
        if found.kind == "seatbelt":
            args = seatbelt.argv(plan, command, network)
        else:
            args = bwrap.argv(found.path, plan, command, network)
        return Launch(args, NETWORK if network else SANDBOXED, plan, seen, command)

    def state(self, root: Path, env: Mapping[str, str] | None = None) -> SandboxState:
        why = self.why_outside()
        if why is not None:
            return SandboxState(False, "", why, (), "host")
        found = self.mechanism()
        plan = layout(root, dict(os.environ if env is None else env), self.settings.writable)
        home = (env or os.environ).get("HOME") or ""
        shown = tuple(_tilde(str(p), home) for p in plan.writable)
        return SandboxState(True, getattr(found, "label", ""), "", shown, "on" if self.settings.network else "off")


def _tilde(path: str, home: str) -> str:
    return "~" + path[len(home):] if home and (path == home or path.startswith(home.rstrip("/") + "/")) else path
