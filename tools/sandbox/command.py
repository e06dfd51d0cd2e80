"""Deciding how one command runs: sandboxed, sandboxed with network, or outside (and why).

``CommandSandbox.launch`` turns one ``execute_command`` into a ``Launch``; ``CommandSandbox.wrap``
does the same for any long-running program (a language server, issue 38) with no network. Either
way the caller spawns ``launch.argv`` with ``env=launch.env`` and ``pass_fds=launch.fds`` (and
``preexec_fn=launch.preexec``), calls ``launch.started()`` right after the spawn, and
``launch.finish(output)`` once the process has ended.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

from paicli.tools.sandbox import bwrap, seatbelt
from paicli.tools.sandbox.layout import Layout, cache_layer, data_dir, layout, prepare
from paicli.tools.sandbox.options import MODES, SandboxOptions
from paicli.tools.sandbox.sweep import Before, before, undo

__all__ = ["MODES", "CommandSandbox", "Launch", "Mechanism", "SandboxOptions", "SandboxState", "Unavailable",
           "find_mechanism"]

# reference (t): required refuses to run a command without the sandbox.
REQUIRED_REFUSAL = "命令沙箱不可用（{why}），PAICLI_COMMAND_SANDBOX=required 时不在宿主直接执行命令"
REQUIRED_OUTSIDE = "PAICLI_COMMAND_SANDBOX=required 时不在沙箱外执行命令（sandbox: false 不可用）"
NETWORK_FAILED = "联网沙箱未能建立（{why}），命令没有运行"
SANDBOXED, NETWORK, OUTSIDE = "sandboxed", "network", "outside"  # how a command ran, for /audit
ISOLATED, HOST = "isolated", "host"  # how a network command reaches the network (issue 34 item 8)


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


def find_network():
    """slirp4netns (with nsenter and ip), or None: then a network command uses the host's network."""
    from paicli.tools.sandbox.network import find_helper

    return find_helper()


@dataclass(frozen=True)
class SandboxState:
    """What the banner, /context and /policy show."""

    on: bool
    mechanism: str  # label, or "" when off / unavailable
    why_not: str  # why commands run outside ("" when on)
    writable: tuple[str, ...]
    network: str  # "off" (per call with approval) | "on" | "host"
    isolation: str = ISOLATED  # how network commands reach the network: isolated | host
    hidden: tuple[str, ...] = ()  # what a command finds empty (shown briefly)
    seccomp: bool = True

    def lines(self) -> list[str]:
        if not self.on:
            return [f"⚠️ 命令沙箱未启用：{self.why_not}；命令直接在本机执行"]
        how = ("独立网络命名空间（slirp4netns，无本机回环与本机地址）" if self.isolation == ISOLATED
               else "本机网络（未找到 slirp4netns，需输入 y 确认）")
        net = {"off": f"关闭（单条命令可申请 network: true，需要批准；联网方式：{how}）",
               "on": f"开启（PAICLI_SANDBOX_NETWORK=on；{how}）"}
        lines = [f"🔒 命令沙箱: {self.mechanism}；网络: {net.get(self.network, self.network)}",
                 f"   可写: {', '.join(self.writable)}（受保护路径除外；工具链缓存为写时复制，写入只在沙箱内可见）"]
        if self.hidden:
            lines.append(f"   不可见: {', '.join(self.hidden)}；本机 /tmp、/run 与已有的 Unix socket 均不可见")
        if not self.seccomp:
            lines.append("   ⚠️ 未找到 libseccomp：沙箱未加载 seccomp 过滤（AF_VSOCK、内核密钥环仍可用）")
        return lines


@dataclass
class Launch:
    """One command (or long-running program), ready to run.

    Spawn ``argv`` with ``env`` (when not None), ``pass_fds=fds`` and ``preexec_fn=preexec``; then
    call ``started()`` (it closes the child's descriptors here and, for a network command, joins
    its namespace to the internet before the command may start: an ``OSError`` from it means the
    command never ran, so kill the process); ``finish(output)`` once it has ended."""

    argv: list[str]
    how: str  # SANDBOXED | NETWORK | OUTSIDE
    plan: Layout | None = None
    seen: Before | None = None
    command: str = ""
    env: dict[str, str] | None = None
    fds: tuple[int, ...] = ()
    preexec: Callable[[], None] | None = None
    _mine: list[int] = field(default_factory=list, repr=False)  # our ends: info read, block write
    _helper: object = field(default=None, repr=False)
    _link: object = field(default=None, repr=False)
    _holder: object = field(default=None, repr=False)  # the session's holder the command joins (its fds stay)

    def started(self) -> None:
        self._close_fds()
        if self._helper is None or len(self._mine) < 2:
            return
        from paicli.tools.sandbox.network import attach, read_info

        info, block = self._mine
        try:
            pid = read_info(info)
            self._link = attach(self._helper, pid)
            os.write(block, b"1")
        finally:
            self._close_mine()

    def finish(self, output: str = "", ok: bool = True) -> str:
        """Notes for the model after the command ended: removed protected paths, refusals seen."""
        self.close()
        if self.plan is None or self.seen is None:
            return ""
        from paicli.tools.sandbox.explain import explain  # its patterns only after a sandboxed command (issue 30)

        removed = undo(self.plan, self.seen)
        return explain(self.plan, output, removed, network=self.how == NETWORK, command=self.command, ok=ok)

    def close(self) -> None:
        """Release what the launch holds (also when the spawn failed)."""
        self._close_fds()
        self._close_mine()
        if self._holder is not None:
            self._holder.leave()  # type: ignore[attr-defined]
            self._holder = None
        if self._link is not None:
            self._link.close()  # type: ignore[attr-defined]
            self._link = None

    def _close_fds(self) -> None:
        shared = self._holder.pass_fds() if self._holder is not None else ()  # type: ignore[attr-defined]
        for fd in self.fds:
            if fd not in shared:
                _close(fd)
        self.fds = ()

    def _close_mine(self) -> None:
        for fd in self._mine:
            _close(fd)
        self._mine = []


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


@dataclass
class CommandSandbox:
    settings: SandboxOptions = field(default_factory=SandboxOptions)
    finder: Finder = find_mechanism  # a test passes one that finds nothing
    network_finder: Callable[[], object] = find_network  # a test passes one that finds no helper
    _found: Mechanism | Unavailable | None = field(default=None, init=False, repr=False)
    _helper: object = field(default=False, init=False, repr=False)  # False: not looked for yet
    _cow: dict[str, bool] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    # The sessions' holders (paicli.tools.sandbox.holder), by (project, network mode, session).
    _holders: dict[tuple, object] = field(default_factory=dict, init=False, repr=False)
    _holder_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _holders_failed: bool = field(default=False, init=False, repr=False)

    def mechanism(self) -> Mechanism | Unavailable:
        with self._lock:
            if self._found is None:
                self._found = self.finder()
            return self._found

    def network_helper(self) -> object:
        with self._lock:
            if self._helper is False:
                self._helper = self.network_finder()
            return self._helper

    def network_isolation(self) -> str:
        """``isolated`` where a network command gets a namespace of its own, else ``host``."""
        found = self.mechanism()
        if isinstance(found, Mechanism) and found.kind == "seatbelt":
            return HOST
        return ISOLATED if self.network_helper() is not None else HOST

    def why_outside(self) -> str | None:
        """Why this run's commands are not sandboxed, or None when they are."""
        if self.settings.skipped:
            return "--dangerously-skip-sandbox"
        if self.settings.mode == "off":
            return "PAICLI_COMMAND_SANDBOX=off"
        found = self.mechanism()
        return found.why if isinstance(found, Unavailable) else None

    def launch(self, command: str, root: Path, env: Mapping[str, str], *, network: bool = False,
               outside: bool = False, session: str = "default") -> Launch:
        """``outside``: a person approved ``sandbox: false`` for this call. Raises ``RuntimeError``
        with the reference's text when ``required`` cannot be met."""
        plain = ["bash", "-c", command]
        if outside and self.settings.mode == "required":
            raise RuntimeError(REQUIRED_OUTSIDE)
        if outside or self.settings.skipped or self.settings.mode == "off":
            return Launch(plain, OUTSIDE, command=command)
        found = self.mechanism()
        if isinstance(found, Unavailable):
            if self.settings.mode == "required":
                raise RuntimeError(REQUIRED_REFUSAL.format(why=found.why))
            return Launch(plain, OUTSIDE, command=command)
        return self._sandboxed(found, ["bash", "-c", command], root, env, network or self.settings.network,
                               session, command, joined=self.settings.holders)

    def wrap(self, argv: list[str], root: Path, env: Mapping[str, str], *, session: str = "default",
             read_only: bool = False) -> Launch:
        """A long-running program (a language server) in the same sandbox a command gets: the same
        view and write rules, secrets hidden, no network. ``env`` is filtered like a command's
        (``ToolContext.command_env``). ``read_only``: the project cannot be written at all (a
        language server runs what a repository names and has nothing to write there; the temp
        dirs, the caches' layers and ``PAICLI_SANDBOX_WRITABLE`` roots outside the project stay
        writable), so there is nothing to sweep either. Raises ``RuntimeError`` where there is no
        sandbox (whatever the mode: the caller decides whether to run it outside)."""
        found = self.mechanism()
        if isinstance(found, Unavailable) or self.why_outside() is not None:
            raise RuntimeError(REQUIRED_REFUSAL.format(why=self.why_outside() or getattr(found, "why", "")))
        import shlex

        from paicli.tools.sandbox.secrets import command_environment

        return self._sandboxed(found, list(argv), root, command_environment(env), False, session,
                               "exec " + shlex.join(argv), read_only=read_only)

    def _sandboxed(self, found: Mechanism, argv: list[str], root: Path, env: Mapping[str, str], network: bool,
                   session: str, command: str, *, read_only: bool = False, joined: bool = False) -> Launch:
        """``joined``: the command joins its session's holder (``paicli.tools.sandbox.holder``)
        where one can be had; otherwise (and for a long-running program) a bwrap of its own."""
        from paicli.tools.sandbox import own

        if not read_only:
            _make_own_dir(root)
        env = dict(env)
        own.writable_roots([str(root), *(os.path.expanduser(p) for p in self.settings.writable),
                            data_dir(self.settings)])
        kind = NETWORK if network else SANDBOXED
        if found.kind == "seatbelt":
            plan = layout(root, env, self.settings, session, copy_on_write=False, sockets=set(), read_only=read_only)
            seen = None if read_only else before(plan)
            return Launch(seatbelt.argv(plan, command, network), kind, plan, seen, command, env)
        from paicli.tools.sandbox.sockets import bound_paths

        plan = layout(root, env, self.settings, session, copy_on_write=self._copy_on_write(found.path, str(root)),
                      sockets=bound_paths(), read_only=read_only, network=network)
        seen = None if read_only else before(plan)  # no sweep: finish() only releases what the launch holds
        env["TMPDIR"] = "/tmp"  # the session's private one
        if joined and (not network or self.network_isolation() == ISOLATED):
            joining = self._join(found, plan, argv, network, session)
            if joining is not None:
                holder, args, preexec_fn = joining  # its mounts were made when it started
                return Launch(args, kind, plan, seen, command, env, holder.pass_fds(), preexec_fn, _holder=holder)
        prepare(plan)  # the directories the mounts name, and no link on the way to a mount point
        args, fds, preexec, mine, helper = self._own_bwrap(found, plan, argv, network)
        return Launch(args, kind, plan, seen, command, env, fds, preexec, mine, helper)

    def _own_bwrap(self, found: Mechanism, plan: Layout, argv: list[str],
                   network: bool) -> tuple[list[str], tuple[int, ...], Callable[[], None] | None, list[int], Any]:
        """A bwrap of the command's own: its command line, the descriptors it inherits, its
        ``preexec_fn``, the pipe ends kept here and the network helper (slirp4netns, joined once
        bwrap reports its pid), or the host's network under Landlock's scopes where there is none."""
        from paicli.tools.sandbox import seccomp

        fds: list[int] = []
        sc = seccomp.pipe_fd()
        if sc is not None:
            fds.append(sc)
        how, helper, mine = "none", None, []
        info_w = block_r = None
        preexec = None
        if network:
            helper = self.network_helper() if self.network_isolation() == ISOLATED else None
            if helper is not None:
                how = ISOLATED
                info_r, info_w = os.pipe()
                block_r, block_w = os.pipe()
                fds += [info_w, block_r]
                mine = [info_r, block_w]
            else:
                how = HOST
                from paicli.tools.sandbox import landlock

                preexec = landlock.restrict_scopes if landlock.available() else None
        args = bwrap.argv(found.path, plan, argv, network=how, seccomp_fd=sc, info_fd=info_w, block_fd=block_r,
                          resolv=_resolv(self.settings) if how == ISOLATED else "")
        return args, tuple(fds), preexec, mine, helper

    def _join(self, found: Mechanism, plan: Layout, argv: list[str], network: bool,
              session: str) -> tuple[object, list[str], Callable[[], None] | None] | None:
        """The session's holder for this layout (started, or replaced when the layout changed),
        entered, with the command line and ``preexec_fn`` that start ``argv`` inside; None where
        there is none (util-linux missing, or a holder failed to start here once)."""
        from paicli.tools.sandbox import holder as holders
        from paicli.tools.sandbox import seccomp

        tools = holders.find_tools()
        if tools is None or self._holders_failed:
            return None
        program_bytes = seccomp.program()
        how = ISOLATED if network else "none"
        helper = self.network_helper() if network else None
        resolv = _resolv(self.settings) if network else ""
        if network:
            from paicli.tools.sandbox.network import BLOCKED_RANGES, host_addresses

            blocked: tuple[str, ...] = (*host_addresses(), *BLOCKED_RANGES)
        else:
            blocked = ()
        key = (found.path, plan.mounts, str(plan.root), how, blocked, resolv, program_bytes is not None)
        slot = (str(plan.root), how, session)
        with self._holder_lock:
            current = self._holders.get(slot)
            if current is not None and (current.key != key or not current.enter()):  # type: ignore[attr-defined]
                self._holders.pop(slot)
                current.retire()  # type: ignore[attr-defined]
                current = None
            if current is None:
                try:
                    current = self._start_holder(found, plan, key, how, helper, resolv, program_bytes)
                except OSError:
                    self._holders_failed = True  # every command gets a bwrap of its own from now on
                    return None
                while len(self._holders) >= holders.MAX_IDLE * 2:  # the oldest first
                    self._holders.pop(next(iter(self._holders))).retire()  # type: ignore[attr-defined]
                self._holders[slot] = current
                current.enter()  # type: ignore[attr-defined]
        preexec = holders.seccomp_loader(program_bytes) if program_bytes is not None else None
        return current, current.argv(tools, argv), preexec  # type: ignore[attr-defined]

    def _start_holder(self, found: Mechanism, plan: Layout, key: tuple, how: str, helper: object, resolv: str,
                      program_bytes: bytes | None) -> object:
        from paicli.tools.sandbox import holder as holders
        from paicli.tools.sandbox import seccomp

        prepare(plan)
        fds: list[int] = []
        sc = seccomp.pipe_fd() if program_bytes is not None else None
        if sc is not None:
            fds.append(sc)
        info_r, info_w = os.pipe()
        fds.append(info_w)
        block_r = block_w = None
        attach = None
        if how == ISOLATED:
            from paicli.tools.sandbox.network import attach as attach_network

            block_r, block_w = os.pipe()
            fds.append(block_r)
            attach = lambda pid: attach_network(helper, pid)  # noqa: E731
        args = bwrap.argv(found.path, plan, holders.payload(), network=how, seccomp_fd=sc, info_fd=info_w,
                          block_fd=block_r, resolv=resolv, as_pid_1=True)
        started = holders.start(key, args, tuple(fds), info_r, attach, block_w)
        try:
            holders.check(started, holders.find_tools(), program_bytes)  # type: ignore[arg-type]
        except OSError:
            started.retire()
            raise
        return started

    def close(self) -> None:
        """End the sessions' holders (each once its last command has ended)."""
        with self._holder_lock:
            for holder in self._holders.values():
                holder.retire()  # type: ignore[attr-defined]
            self._holders.clear()

    def _copy_on_write(self, bwrap_path: str, root: str) -> bool:
        """Whether cache layers can persist in the data folder (overlayfs cannot sit on overlayfs)."""
        data = data_dir(self.settings)
        with self._lock:
            if data not in self._cow:
                upper, work = cache_layer(self.settings, "/probe", "probe")
                lower = os.path.join(os.path.dirname(upper), "lower")
                self._cow[data] = bwrap.probe_overlay(bwrap_path, upper, work, lower)
            return self._cow[data]

    def state(self, root: Path, env: Mapping[str, str] | None = None) -> SandboxState:
        why = self.why_outside()
        if why is not None:
            return SandboxState(False, "", why, (), "host")
        found = self.mechanism()
        source = dict(os.environ if env is None else env)
        plan = layout(root, source, self.settings, copy_on_write=False, sockets=set(), tracked=None)
        home = source.get("HOME") or ""
        shown = tuple(_tilde(str(p), home) for p in (*plan.writable, *plan.caches)) + ("/tmp", "/var/tmp")
        hidden = tuple(_tilde(str(p), home) for p in (*plan.hidden, *plan.masked))[:8]
        from paicli.tools.sandbox import seccomp

        kind = getattr(found, "kind", "bwrap")
        return SandboxState(True, getattr(found, "label", ""), "", shown, "on" if self.settings.network else "off",
                            self.network_isolation(), hidden, kind != "bwrap" or seccomp.available())


def _make_own_dir(root: Path) -> None:
    """paicli's own data directory (``.paicli``), made before it can be mounted read-only: swept
    instead, it would take with it what a parallel Plan task's offloader wrote there meanwhile.
    Empty, it is invisible to git."""
    own_dir = root / ".paicli"
    if not os.path.lexists(own_dir):
        try:
            own_dir.mkdir()
        except OSError:  # then it is swept like the other protected paths
            pass


def _resolv(options: SandboxOptions) -> str:
    from paicli.tools.sandbox.network import RESOLV_CONF

    path = os.path.join(data_dir(options), "resolv.conf")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == RESOLV_CONF:
                return path
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(RESOLV_CONF)
    return path


def _tilde(path: str, home: str) -> str:
    return "~" + path[len(home):] if home and (path == home or path.startswith(home.rstrip("/") + "/")) else path

