"""What a sandboxed command sees and may write: plain paths computed from the project, HOME, the
user's sandbox settings and the session (paicli issues 24 and 34).

Apart from ``exists`` checks and a cached ``git ls-files`` when the index changed, this is pure:
the mechanisms (``bwrap``, ``seatbelt``) turn a ``Layout`` into their own language, ``sweep``
undoes what a command created at a protected path, ``prepare`` makes the directories it names.

- Writable: the project (its protected paths excepted), the session's private ``/tmp`` and
  ``/var/tmp`` (kept under ``$PAICLI_HOME/sandbox/tmp/<session>``), ``PAICLI_SANDBOX_WRITABLE``,
  and the toolchain caches as copy-on-write layers: reads see the real cache, writes land in a
  per-project upper layer under ``$PAICLI_HOME/sandbox/caches/`` that nothing outside the
  sandbox reads (so a ``~/.cargo/bin/git`` or a line in ``~/.nvm/nvm.sh`` never reaches a later
  shell, paicli or git).
- Empty: the host's temp dirs, ``/run`` (runtime and socket directories), ``$PAICLI_HOME`` and
  paicli's memory and audit folders, the credential stores (``paicli.tools.sandbox.secrets``), every
  Unix socket still visible (``paicli.tools.sandbox.sockets``).
- Read-only: everything else; inside the project ``PAI.md``, ``.mcp.json``, ``.env*``, CI workflows,
  ``.paicli/`` and all of ``.git`` but what git writes (``paicli.tools.sandbox.gitdirs``), and the
  interpreter paicli runs on and paicli's own code when they live inside a writable root, and
  shown again read-only where an emptied temp dir would hide them (a checkout or venv under /tmp).
- ``read_only`` (a language server, issue 38): the whole project is read-only, mounted after every
  writable root that holds it, and no ``PAICLI_SANDBOX_WRITABLE`` root inside it stays writable;
  there are no protected paths to pin or sweep, since nothing in the project can be written.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import re
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from paicli.tools.sandbox import gitdirs
from paicli.tools.sandbox.options import SandboxOptions
from paicli.tools.sandbox.secrets import CREDENTIAL_PATHS, SYSTEM_SECRETS

# Regenerable toolchain caches under HOME (issue 24): a sandbox that breaks `./gradlew test` gets switched off.
HOME_CACHES = (".cache", ".npm", ".yarn", ".pnpm-store", ".cargo", ".rustup", "go", ".gradle", ".m2", ".gem",
               ".bun", ".deno", ".nvm", ".local/share/pnpm", "Library/Caches")
# Of those, the ones a build writes without the network and later builds reuse (Go's build cache, pip's
# built wheels, ccache, Gradle's build cache): their layer persists for every command. The others hold
# downloads, which only a network command can add: their layer persists for network commands, and an
# offline command reads it beneath a layer of its own that ends with it (bug 34b: a persistent overlay
# on the disk costs a few ms to mount and a sync of that file system at its end).
BUILD_CACHES = (".cache", ".gradle", "Library/Caches")
TEMP_DIRS = ("/tmp", "/var/tmp")
RUN_DIRS = ("/run", "/var/run")
# Under the emptied /run, what programs need that holds no socket (NixOS's system profile, resolver files).
RUN_KEPT = ("/run/current-system", "/run/booted-system", "/run/opengl-driver", "/run/wrappers",
            "/run/systemd/resolve/resolv.conf", "/run/systemd/resolve/stub-resolv.conf")
# Project-relative protected paths and the rule each belongs to (shown when a write is refused).
PROTECTED = {
    "PAI.md": "项目指令文件，下次会话会作为指令载入",
    "PAI.local.md": "项目指令文件，下次会话会作为指令载入",
    ".paicli": "paicli 的项目数据（配置、记忆与工具输出）",
    ".mcp.json": "MCP 配置可以让 paicli 启动任意程序",
    ".github/workflows": "CI 工作流，推送后会在 CI 中执行",
}
ENV_RULE = "环境变量文件，常含密钥并会被工具自动加载"  # .env, .env.local, ... at the project root
GIT_RULE = "git 仓库：hooks 与 config 会在之后的 git 操作中执行"  # a .git the command created
OWN_RULE = "paicli 自身的解释器与依赖，paicli 之后会运行它们"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Mount:
    """One step of the sandbox's file system, in order (later ones win)."""

    kind: str  # bind | ro | tmpfs | null | overlay | tmp-overlay
    dest: str
    src: str = ""
    upper: str = ""
    work: str = ""
    above: tuple[str, ...] = ()  # tmp-overlay: read-only layers over ``src`` (a cache's persistent layer)


@dataclass(frozen=True)
class Layout:
    root: Path
    writable: tuple[Path, ...]  # existing directories, the project first (caches and temp dirs included)
    protected: tuple[Path, ...]  # existing protected paths inside the project: mounted read-only
    pinned: tuple[Path, ...]  # existing directories holding protected paths: cannot be renamed away
    missing: tuple[Path, ...]  # protected paths that do not exist yet: removed if a command creates them
    masked: tuple[Path, ...] = ()  # files shown as /dev/null: credential files, sockets
    hidden: tuple[Path, ...] = ()  # directories shown empty: runtime dirs, $PAICLI_HOME, credential stores
    mounts: tuple[Mount, ...] = ()  # the whole view, in order, for bubblewrap
    gitdirs: tuple[gitdirs.GitDir, ...] = ()  # git dirs whose new entries are swept
    nested: tuple[Path, ...] = ()  # where a .git the command creates is swept (submodules, tracked dirs)
    caches: tuple[Path, ...] = ()  # the toolchain caches, copy-on-write
    temp: tuple[Path, ...] = ()  # the session's private temp dirs (host paths)
    seen_nested: frozenset[Path] = frozenset()  # of ``nested``, those with a .git before the command
    git_dir: str = ""  # the project's git dir ("" without one), for finding nested repositories again
    make: tuple[str, ...] = field(default=(), compare=False)  # directories ``prepare`` creates
    read_only: bool = False  # the project is read-only as a whole (a language server's view)


def rule_for(root: Path, path: Path) -> str | None:
    """Why ``path`` (inside ``root``) is protected, or None."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return None
    if rel == ".git":
        return GIT_RULE
    if rel.startswith(".git/"):
        return gitdirs.rule(rel.split("/")[1])
    if "/" not in rel and rel.startswith(".env"):
        return ENV_RULE
    for name, rule in PROTECTED.items():
        if rel == name or rel.startswith(name + "/"):
            return rule
    return None


def env_files(root: Path) -> list[Path]:
    """``.env*`` entries at the project root, existing now."""
    try:
        return sorted(root / e.name for e in os.scandir(root) if e.name.startswith(".env"))
    except OSError:
        return []


def data_dir(options: SandboxOptions) -> str:
    if options.data:
        return options.data
    home = os.environ.get("PAICLI_HOME") or os.path.join(os.path.expanduser("~"), ".paicli")
    return os.path.join(os.path.expanduser(home), "sandbox")


def session_temp(options: SandboxOptions, session: str) -> tuple[str, str]:
    """The session's private /tmp and /var/tmp on the host."""
    name = _SAFE_NAME.sub("_", session or "default")[:80] or "default"
    base = os.path.join(data_dir(options), "tmp", name)
    return os.path.join(base, "tmp"), os.path.join(base, "var-tmp")


def cache_layer(options: SandboxOptions, root: str, cache: str) -> tuple[str, str]:
    """(upper, work) of the project's copy-on-write layer over ``cache``."""
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = _SAFE_NAME.sub("_", cache.strip("/"))[-80:]
    base = os.path.join(data_dir(options), "caches", digest, name)
    return os.path.join(base, "upper"), os.path.join(base, "work")


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _homes(env: dict[str, str]) -> list[str]:
    """HOME and the account's own home (a HOME pointed elsewhere leaves the real one's keys)."""
    found = []
    for home in (env.get("HOME") or "", _account_home()):
        real = os.path.realpath(home) if home else ""
        if real and real != "/" and real not in found:
            found.append(real)
    return found


@lru_cache(maxsize=1)
def _account_home() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, AttributeError, OSError):
        return ""


@lru_cache(maxsize=1)
def _own_install() -> tuple[str, ...]:
    """The interpreter paicli runs on and paicli's own code (read-only when inside a writable root)."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    return os.path.realpath(sys.prefix), here


@dataclass
class _View:
    """What ``layout`` builds step by step: the mounts in order, the directories to make, and
    what the view empties or replaces (``gone``: a path under one is not the host's)."""

    mounts: list[Mount] = field(default_factory=lambda: [Mount("ro", "/", "/")])
    make: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=lambda: ["/dev", "/proc"])


@dataclass
class _Project:
    """Step 5's findings: the read-only paths, the swept ones and the git dirs."""

    protected: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    pinned: set[str] = field(default_factory=set)
    guarded: list[gitdirs.GitDir] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    seen_nested: set[str] = field(default_factory=set)
    git_dir: str = ""


def layout(root: Path, env: dict[str, str], options: SandboxOptions = SandboxOptions(), session: str = "default",
           *, copy_on_write: bool = True, sockets: set[str] | None = None,
           tracked: gitdirs.Tracked | None = gitdirs.TRACKED, read_only: bool = False,
           network: bool = False) -> Layout:
    """``env``: the command's environment (HOME, TMPDIR); ``copy_on_write``: the caches get a
    persistent per-project layer (False: writes vanish with the command, where the data folder's
    file system cannot hold an overlay layer), for a download cache only when ``network`` (else
    the command reads that layer and its own writes vanish); ``sockets``: bound socket paths
    (``paicli.tools.sandbox.sockets.bound_paths``), masked where still visible; ``read_only``: the
    project as a whole cannot be written (a language server, ``CommandSandbox.wrap``).

    The view is built in seven steps, each mounting over the ones before."""
    top, homes, view = str(root), _homes(env), _View()
    run_kept = _runtime_dirs(view)  # 1. runtime directories emptied
    temp, host_tmp = _temp_dirs(view, options, session, env, top, homes)  # 2. the session's temp dirs
    caches = _caches(view, options, top, env.get("HOME") or "", copy_on_write, network)  # 3. caches, copy-on-write
    writable = _writable(view, top, options, read_only)  # 4. the project and the user's writable roots
    project = _project_paths(view, top, root, tracked, read_only, writable, host_tmp)  # 5. protected paths
    seen_inside = [top] if read_only else []  # visible though not writable
    shown = writable + seen_inside + [str(c) for c in caches]
    hidden, masked = _secrets(view, options, homes, shown)  # 6. secrets, even inside a writable root
    for path in _visible_sockets(sockets or set(), view.gone + hidden, shown + run_kept, masked):  # 7. sockets
        masked.append(path)
        view.mounts.append(Mount("null", path))
    return Layout(root, tuple(Path(p) for p in writable), tuple(Path(p) for p in project.protected),
                  tuple(Path(p) for p in sorted(project.pinned)), tuple(Path(p) for p in project.missing),
                  tuple(Path(p) for p in masked), tuple(Path(p) for p in hidden), tuple(view.mounts),
                  tuple(project.guarded), tuple(Path(p) for p in project.nested), tuple(caches), tuple(temp),
                  frozenset(Path(p) for p in project.seen_nested), project.git_dir, tuple(view.make), read_only)


def _runtime_dirs(view: _View) -> list[str]:
    """Step 1: /run and /var/run emptied (sockets of daemons, agents, the session bus,
    /run/secrets), with what programs need from them shown again; returns those."""
    for run in RUN_DIRS:
        if os.path.isdir(run) and not os.path.islink(run):
            view.mounts.append(Mount("tmpfs", run))
            view.gone.append(run)
    kept = [k for k in RUN_KEPT if os.path.lexists(k)]
    view.mounts += [Mount("ro", k, k) for k in kept]
    return kept


def _temp_dirs(view: _View, options: SandboxOptions, session: str, env: dict[str, str], top: str,
               homes: list[str]) -> tuple[list[Path], str]:
    """Step 2: the session's private temp dirs over /tmp and /var/tmp, then the host's TMPDIR
    emptied (unless the project or a home is inside it); returns the private dirs and TMPDIR."""
    tmp, var_tmp = session_temp(options, session)
    temp = []
    for private, dest in ((tmp, "/tmp"), (var_tmp, "/var/tmp")):
        if os.path.isdir(dest):
            view.mounts.append(Mount("bind", dest, private))
            view.make.append(private)
            temp.append(Path(private))
            view.gone.append(dest)
    host_tmp = os.path.realpath(env["TMPDIR"]) if env.get("TMPDIR") else ""
    if host_tmp and not _under(host_tmp, view.gone) and os.path.isdir(host_tmp) and host_tmp != "/" \
            and not _under(top, [host_tmp]) and not any(_under(h, [host_tmp]) for h in homes):
        view.mounts.append(Mount("tmpfs", host_tmp))
        view.gone.append(host_tmp)
    return temp, host_tmp


def _caches(view: _View, options: SandboxOptions, top: str, home: str, copy_on_write: bool,
            network: bool) -> list[Path]:
    """Step 3: the toolchain caches under HOME, each an overlay whose writes land in a layer of
    the project's (a download cache's only for a network command)."""
    data = os.path.realpath(data_dir(options))
    caches = []
    for cache, builds in _home_caches(home):
        if _under(data, [cache]) or _under(cache, [data]):
            continue  # the layer cannot sit inside what it covers
        upper, work = cache_layer(options, top, cache) if copy_on_write else ("", "")
        if copy_on_write and (network or builds):
            view.mounts.append(Mount("overlay", cache, cache, upper, work))
            view.make += [upper, work]
        else:  # what an earlier network command downloaded stays visible, read-only
            view.mounts.append(Mount("tmp-overlay", cache, cache, above=(upper,) if upper and _has_entries(upper) else ()))
        caches.append(Path(cache))
    return caches


def _writable(view: _View, top: str, options: SandboxOptions, read_only: bool) -> list[str]:
    """Step 4: the project (not when ``read_only``: then only the extra roots outside it) and
    ``PAICLI_SANDBOX_WRITABLE``, bound writable."""
    extra = [os.path.expanduser(e) for e in options.writable]
    if read_only:
        writable = [p for p in _existing_dirs(extra) if not _under(p, [os.path.realpath(top)])]
    else:
        writable = _existing_dirs([top, *extra])
    view.mounts += [Mount("bind", path, path) for path in writable]
    return writable


def _project_paths(view: _View, top: str, root: Path, tracked: gitdirs.Tracked | None, read_only: bool,
                   writable: list[str], host_tmp: str) -> _Project:
    """Step 5: the project's protected paths (.git, ``paicli.tools.sandbox.gitdirs``, PAI.md and the
    rest) read-only; or, ``read_only``, the project itself, mounted after every writable root that
    may hold it. paicli's own install too, read-only inside a writable root and shown again
    (read-only) where an emptied temp dir hides it (a checkout or venv under /tmp: language
    servers and paicli's own helpers run from it). A linked worktree's or submodule's git dirs
    end up writable, after the common dir's protections, with their own protected entries; they
    join ``writable``."""
    found, linked = _Project(), []
    if read_only:
        found.protected.append(top)
    else:
        found.git_dir, linked, found.nested, found.seen_nested = _protected(
            top, root, tracked, found.protected, found.missing, found.pinned, found.guarded)
    emptied = [str(t) for t in ("/tmp", "/var/tmp", host_tmp) if t and _under(str(t), view.gone)]
    found.protected += [p for p in _own_install() if (_under(p, writable) or _under(p, emptied)) and os.path.exists(p)]
    view.mounts += [Mount("bind", path, path) for path in sorted(found.pinned)]
    view.mounts += [Mount("ro", path, path) for path in found.protected]
    for gd_path in reversed(linked):  # the common dir first, the worktree's own git dir on top
        view.mounts.append(Mount("bind", gd_path, gd_path))
        gd, ro = gitdirs.guarded(gd_path)
        found.guarded.append(gd)
        for path in ro:
            view.mounts.append(Mount("ro", path, path))
            found.protected.append(path)
        writable.append(gd_path)
    return found


def _secrets(view: _View, options: SandboxOptions, homes: list[str], shown: list[str]) -> tuple[list[str], list[str]]:
    """Step 6: credential stores emptied and credential files shown as /dev/null, inside a writable
    root too, unless ``PAICLI_SANDBOX_READABLE`` names them or an emptied directory already hides
    them (and nothing in ``shown`` shows them again); returns (hidden dirs, masked files)."""
    readable = {os.path.realpath(os.path.expanduser(r)) for r in options.readable}
    candidates = [os.path.realpath(os.path.expanduser(h)) for h in options.hidden if h]
    candidates += [os.path.join(h, c) for h in homes for c in CREDENTIAL_PATHS]
    candidates += list(SYSTEM_SECRETS)
    hidden, masked = [], []
    for path in dict.fromkeys(candidates):
        if not os.path.lexists(path) or path in readable or _under(path, view.gone) and not _under(path, shown):
            continue
        if os.path.isdir(path):
            hidden.append(path)
            view.mounts.append(Mount("tmpfs", path))
        else:
            masked.append(path)
            view.mounts.append(Mount("null", path))
    return hidden, masked


def _protected(top: str, root: Path, tracked: gitdirs.Tracked | None, protected: list[str], missing: list[str],
               pinned: set[str], guarded: list[gitdirs.GitDir]) -> tuple[str, list[str], list[str], set[str]]:
    """Step 5 of ``layout`` for a writable project: fills ``protected`` (mounted read-only),
    ``missing`` (swept), ``pinned`` and ``guarded``; returns (git dir, linked git dirs, nested
    repository candidates, those with a .git now)."""
    dotgit = os.path.join(top, ".git")
    git_dir = ""
    if os.path.isdir(dotgit) and not os.path.islink(dotgit):
        git_dir = dotgit
        gd, ro = gitdirs.guarded(dotgit)
        guarded.append(gd)
        protected += ro
        pinned.add(dotgit)
    elif not os.path.lexists(dotgit):
        missing.append(dotgit)
    linked = gitdirs.linked(top)
    if linked:
        git_dir = linked[0]
        protected.append(dotgit)  # the .git file itself
    for name in PROTECTED:
        path = os.path.join(top, name)
        (protected if os.path.lexists(path) else missing).append(path)
    protected += [str(p) for p in env_files(root)]  # a new .env* is found by listing the root again (sweep)
    for path in protected + missing:
        parent = os.path.dirname(path)
        if parent != top and _under(parent, [top]) and os.path.isdir(parent) and not os.path.islink(parent):
            pinned.add(parent)
    # Nested repositories where the user's next git meets them: submodules, tracked dirs, the top level.
    nested, seen_nested = nested_candidates(top, git_dir, tracked)
    for candidate in sorted(seen_nested):
        inner = os.path.join(candidate, ".git")
        if os.path.isdir(inner) and not os.path.islink(inner):
            gd, ro = gitdirs.guarded(inner)
            guarded.append(gd)
            protected += ro
            pinned.add(inner)
        else:
            protected.append(inner)
    return git_dir, linked, nested, seen_nested


def _visible_sockets(paths: set[str], gone: list[str], shown: list[str], masked: list[str]) -> list[str]:
    from paicli.tools.sandbox.sockets import visible

    found = []
    for path in visible(paths, ()):
        if _under(path, gone) and not _under(path, shown):
            continue
        if path not in masked:
            found.append(path)
    return found


def nested_candidates(top: str, git_dir: str, tracked: gitdirs.Tracked | None) -> tuple[list[str], set[str]]:
    """Directories where a nested ``.git`` matters, and those that have one now."""
    candidates: list[str] = []
    if git_dir and tracked is not None:
        links, dirs = tracked.of(top, git_dir)
        candidates += [*links, *dirs]
    try:
        candidates += [e.path for e in os.scandir(top)
                       if e.name not in (".git", ".paicli") and e.is_dir(follow_symlinks=False)]
    except OSError:
        pass
    candidates = list(dict.fromkeys(candidates))
    seen = {c for c in candidates if os.path.lexists(os.path.join(c, ".git"))}
    return candidates, seen


_made: set[str] = set()  # directories made already by this process


def prepare(plan: Layout) -> None:
    """Make the directories the layout names (private temp dirs, cache layers), and clear any
    link inside the private temp dirs on the way to a mount point (a command's symlink must not
    move where the next command's project is mounted)."""
    for path in plan.make:
        if path not in _made or not os.path.isdir(path):
            os.makedirs(path, mode=0o700, exist_ok=True)
            if path in (str(t) for t in plan.temp):
                os.chmod(path, 0o1777)  # a /tmp: sticky, for every user of the sandbox
            _made.add(path)
    temps = {"/tmp": str(plan.temp[0]) if plan.temp else "", "/var/tmp": str(plan.temp[1]) if len(plan.temp) > 1 else ""}
    for mount in plan.mounts:
        for dest, private in temps.items():
            if private and mount.dest.startswith(dest + "/") and mount.kind != "null":
                _clear_links(private, mount.dest[len(dest) + 1:])


def _clear_links(base: str, rel: str) -> None:
    current = base
    for part in rel.split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current) or (os.path.lexists(current) and not os.path.isdir(current)):
            try:
                os.unlink(current)
            except OSError:
                return
            return
        if not os.path.lexists(current):
            return


_CACHE_SECONDS = 2.0  # how long the list of caches under a HOME is reused (realpath of each costs)
_caches_seen: dict[str, tuple[float, list[tuple[str, bool]]]] = {}


def _home_caches(home: str) -> list[tuple[str, bool]]:
    """The toolchain caches that exist under ``home``, at their real paths, and whether each is a
    build cache (``BUILD_CACHES``)."""
    if not home:
        return []
    now = time.monotonic()
    seen = _caches_seen.get(home)
    if seen is None or now - seen[0] > _CACHE_SECONDS:
        builds = set(_existing_dirs([os.path.join(home, c) for c in BUILD_CACHES]))
        seen = (now, [(c, c in builds) for c in _existing_dirs([os.path.join(home, c) for c in HOME_CACHES])])
        _caches_seen[home] = seen
    return list(seen[1])


def _has_entries(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return next(it, None) is not None
    except OSError:
        return False


def _existing_dirs(paths: list[str]) -> list[str]:
    """Real directories, each once, in order (a symlinked cache is bound at its target)."""
    seen: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen and os.path.isdir(real):
            seen.append(real)
    return seen
