"""Turn snapshots (reference s.1 item 6, "Side-Git"): the project's working tree before every run,
kept in a shadow git repository under ``$PAICLI_HOME``, and restored on request.

Layout, one folder per project (``$PAICLI_HOME/snapshots/<name>-<hash of the real path>/``):
``repo/`` the bare shadow repository, ``index`` its staging index (a cache: git compares file
stat data with it, so a second snapshot re-reads only files that changed), ``snapshots.jsonl``
one line per snapshot, ``project`` the project's path, ``lock`` the lock every process takes
before touching any of them (``filelock``).

- **What a snapshot holds.** Tracked and untracked files as git would add them with the
  project's ``.gitignore`` files honoured, without the project's ``.git/`` and ``.paicli/``.
  The project need not be a git repository; its own ``.git`` is never read nor written. A file
  over ``max_file_bytes``, files past ``max_snapshot_bytes`` of new content, and unreadable
  files are left out; the snapshot lists them, and a restore leaves them alone.
- **Cost.** A snapshot is a tree object. Each distinct tree has a ref ``refs/snapshots/<tree>``
  (so git's gc keeps it); a snapshot that finds the tree unchanged writes a line to
  ``snapshots.jsonl`` and no git object.
- **Numbering.** ``entries()`` is newest first; snapshot 1 is the most recent. A restore first
  records the tree as it is (mode ``restore``), so ``/restore 1`` right after a restore undoes it.
- **Corruption.** A broken staging index is deleted and rebuilt. A broken repository is moved
  aside to ``repo.corrupt-<millis>`` (with its ``snapshots.jsonl``), one line says so, and a new
  one is started.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from paicli.tools.snapshots.git import Git, GitError, init_bare, nul_join, nul_list
from paicli.tools.snapshots.options import SnapshotOptions

INPUT_CHARS = 80  # of the input's first line, in a label
RESTORE_MODE = "restore"
# Never part of a snapshot: paicli's own project data. (git itself never adds a `.git`.)
ALWAYS_LEFT_OUT = (".paicli",)


class SnapshotError(Exception):
    """A snapshot or restore that could not be done; the message is one line for a person."""


def _one_line(method):
    """A file-system error (an unwritable $PAICLI_HOME, a vanished project) becomes a SnapshotError."""

    @functools.wraps(method)
    def guarded(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except OSError as error:
            where = f": {error.filename}" if error.filename else ""
            raise SnapshotError(f"{error.strerror or error}{where}") from None

    return guarded


@dataclass(frozen=True)
class Label:
    mode: str  # react | plan | team | restore
    input: str  # the input's first line, cut short
    session: str = ""

    @classmethod
    def of(cls, mode: str, text: str, session: str) -> Label:
        first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
        return cls(mode, first if len(first) <= INPUT_CHARS else first[:INPUT_CHARS] + "…", session)


@dataclass(frozen=True)
class LeftOut:
    path: str
    size: int
    why: str  # file | snapshot | unreadable


@dataclass(frozen=True)
class Entry:
    seq: int
    time: float  # epoch seconds
    mode: str
    input: str
    session: str
    tree: str
    left_out: tuple[LeftOut, ...] = ()

    def line(self) -> str:
        data = asdict(self)
        data["left_out"] = [asdict(x) for x in self.left_out]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def parse(cls, text: str) -> Entry | None:
        try:
            data = json.loads(text)
            return cls(int(data["seq"]), float(data["time"]), str(data["mode"]), str(data["input"]),
                       str(data.get("session") or ""), str(data["tree"]),
                       tuple(LeftOut(str(x["path"]), int(x["size"]), str(x["why"])) for x in data.get("left_out") or ()))
        except (ValueError, KeyError, TypeError):
            return None  # a torn or foreign line: skipped


@dataclass
class Taken:
    entry: Entry
    new_tree: bool  # False: nothing changed since the last snapshot, no object written
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Changes:
    """What a restore does to the working tree: re-create, delete, rewrite."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.added) + len(self.removed) + len(self.modified)


@dataclass
class Restore:
    target: Entry
    number: int
    changes: Changes
    kept: tuple[LeftOut, ...]  # left out of a snapshot: named, left alone
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Status:
    directory: Path
    count: int
    trees: int
    bytes: int
    options: SnapshotOptions


def snapshot_home(settings_home: Path) -> Path:
    """Where every project's snapshots live: ``$PAICLI_HOME/snapshots``."""
    return Path(settings_home) / "snapshots"


def project_folder(home: Path, root: Path) -> Path:
    real = os.path.realpath(root)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(real) or "root")[:40]
    return home / f"{name}-{hashlib.sha256(real.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


class TurnSnapshots:
    """The snapshot service of one ``$PAICLI_HOME`` (``Deps.snapshots``): a store per project."""

    def __init__(self, directory: Path, options: SnapshotOptions | None = None):
        self.directory, self.options = Path(directory), options or SnapshotOptions()

    def project(self, root: str | os.PathLike[str]) -> ProjectSnapshots:
        return ProjectSnapshots(self.directory, Path(os.path.realpath(root)), self.options)

    def take(self, root: str | os.PathLike[str], label: Label) -> Taken:
        return self.project(root).take(label)


class ProjectSnapshots:
    def __init__(self, home: Path, root: Path, options: SnapshotOptions):
        self.root, self.options = root, options
        self.folder = project_folder(home, root)
        self.repo, self.log = self.folder / "repo", self.folder / "snapshots.jsonl"
        self.git = Git(self.repo, root, self.folder / "index")
        # Not thread-local: /restore previews in one worker thread and restores in another.
        self._lock = FileLock(str(self.folder / "lock"), thread_local=False)

    # --- the lock and the repository ---------------------------------------------------------

    def _locked(self) -> Any:
        """The lock, held until the ``with`` block ends (another process waits for it)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            return self._lock.acquire(timeout=self.options.lock_timeout)
        except Timeout:
            raise SnapshotError(f"另一个 paicli 进程占用快照仓库超过 {self.options.lock_timeout:.0f} 秒") from None

    def _ensure_repo(self, notices: list[str]) -> None:
        if not self.root.is_dir():
            raise SnapshotError(f"项目目录不存在: {self.root}")
        if (self.repo / "HEAD").is_file() and (self.repo / "objects").is_dir():
            return
        if self.repo.exists():
            self._set_aside(notices)
        init_bare(self.repo)
        (self.folder / "project").write_text(str(self.root) + "\n", encoding="utf-8", errors="surrogateescape")

    def _set_aside(self, notices: list[str]) -> None:
        stamp = int(time.time() * 1000)
        aside = self.folder / f"repo.corrupt-{stamp}"
        os.replace(self.repo, aside)
        if self.log.exists():
            os.replace(self.log, self.folder / f"snapshots.jsonl.corrupt-{stamp}")
        self.git.index.unlink(missing_ok=True)
        notices.append(f"⚠️ 快照仓库已损坏，已移到 {aside}，新建了一个（之前的快照不能再恢复）")

    def _with_repair(self, work, notices: list[str]):
        """``work()``; a broken index is rebuilt, a broken repository set aside, then once more."""
        self._ensure_repo(notices)
        try:
            return work()
        except GitError as error:
            if error.stale_lock:  # we hold the lock: a git killed mid-write left it behind
                self._clear_locks()
            elif error.bad_index:
                self.git.index.unlink(missing_ok=True)
            elif error.corrupt:
                self._set_aside(notices)
                self._ensure_repo(notices)
            else:
                raise SnapshotError(str(error)) from None
        try:
            return work()
        except GitError as error:
            raise SnapshotError(str(error)) from None

    def _clear_locks(self) -> None:
        for stale in [*self.folder.glob("*.lock"), *self.repo.rglob("*.lock")]:
            if stale.name != "lock":
                stale.unlink(missing_ok=True)

    # --- snapshots ---------------------------------------------------------------------------

    def _excludes(self) -> list[str]:
        return [f":(exclude,literal,top){p}" for p in ALWAYS_LEFT_OUT] + self._home_inside()

    def _home_inside(self) -> list[str]:
        """$PAICLI_HOME (the parent of the snapshots folder: ledger, memory, the snapshots
        themselves) when it lies inside the project: a restore must never rewind it."""
        try:
            inner = Path(os.path.realpath(self.folder.parent.parent)).relative_to(self.root)
        except ValueError:
            return []
        return [f":(exclude,literal,top){inner.as_posix()}"]

    def _stage(self) -> tuple[str, tuple[LeftOut, ...]]:
        """The working tree as a tree object, and what was left out of it (lock held).

        One directory walk: ``ls-files`` lists what differs from the staging index (new,
        changed and deleted files, ignored ones excluded); only those are re-read, with the
        plumbing ``update-index``, and ``write-tree`` reuses the cached trees of the rest.
        """
        raw = self.git.run("ls-files", "-z", "--others", "--modified", "--exclude-standard", "--", ".",
                           *self._excludes()).stdout
        add: list[str] = []
        drop: list[str] = []
        left: list[LeftOut] = []
        total = 0
        for path in sorted(set(nul_list(raw))):
            try:
                info = os.lstat(self.root / path)
            except OSError:
                drop.append(path)  # deleted
                continue
            if stat.S_ISLNK(info.st_mode):
                add.append(path)  # stored as a link, never followed
            elif not stat.S_ISREG(info.st_mode):
                drop.append(path.rstrip("/"))  # a file that became a folder; a nested repository
            elif not os.access(self.root / path, os.R_OK):
                left.append(LeftOut(path, info.st_size, "unreadable"))
            elif info.st_size > self.options.max_file_bytes:
                left.append(LeftOut(path, info.st_size, "file"))
            elif total + info.st_size > self.options.max_snapshot_bytes:
                left.append(LeftOut(path, info.st_size, "snapshot"))
            else:
                total += info.st_size
                add.append(path)
        drop += [x.path for x in left]  # an earlier, smaller version must not stay in the snapshot
        if drop:
            self.git.run("update-index", "-z", "--force-remove", "--stdin", input=nul_join(drop))
        if add:
            self.git.run("update-index", "-z", "--add", "--replace", "--stdin", input=nul_join(add))
        return self.git.out("write-tree"), tuple(left)

    @_one_line
    def take(self, label: Label) -> Taken:
        notices: list[str] = []
        with self._locked():
            return self._take(label, notices)

    def _take(self, label: Label, notices: list[str], staged: tuple[str, tuple[LeftOut, ...]] | None = None) -> Taken:
        tree, left = staged or self._with_repair(self._stage, notices)
        entries = self._entries()
        new_tree = not any(e.tree == tree for e in entries)
        # The same files left out as last time are said once, not before every turn.
        repeated = bool(entries) and {x.path for x in entries[-1].left_out} == {x.path for x in left}
        if new_tree:
            self._with_repair(lambda: self.git.run("update-ref", f"refs/snapshots/{tree}", tree), notices)
        entry = Entry(max((e.seq for e in entries), default=0) + 1, time.time(), label.mode, label.input,
                      label.session, tree, left)
        with open(self.log, "a", encoding="utf-8") as log:
            log.write(entry.line() + "\n")
        if left and not repeated:
            notices.append(left_out_line(left))
        return Taken(entry, new_tree, notices)

    def _entries(self) -> list[Entry]:
        """Oldest first."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        return [e for e in (Entry.parse(line) for line in text.splitlines() if line.strip()) if e is not None]

    def entries(self) -> list[Entry]:
        """Newest first: ``entries()[n - 1]`` is snapshot ``n``."""
        return list(reversed(self._entries()))

    # --- comparing and restoring ---------------------------------------------------------------

    def _diff(self, now: str, target: str) -> Changes:
        raw = self.git.run("diff-tree", "-r", "-z", "--no-renames", "--name-status", now, target).stdout
        parts = nul_list(raw)
        added, removed, modified = [], [], []
        for status, path in zip(parts[::2], parts[1::2]):
            (added if status == "A" else removed if status == "D" else modified).append(path)
        return Changes(tuple(added), tuple(removed), tuple(modified))

    @_one_line
    def changed_since(self, limit: int) -> tuple[list[tuple[Entry, int | None]], int, list[str]]:
        """The newest ``limit`` snapshots, each with how many files differ between it and the
        working tree now (None: its tree is gone); how many there are in all; notices."""
        notices: list[str] = []
        with self._locked():
            now, _ = self._with_repair(self._stage, notices)
            rows: list[tuple[Entry, int | None]] = []
            entries = self.entries()
            for entry in entries[:limit]:
                try:
                    rows.append((entry, self._diff(now, entry.tree).count))
                except GitError:
                    rows.append((entry, None))
        return rows, len(entries), notices

    def _target(self, number: int) -> Entry:
        entries = self.entries()
        if not entries:
            raise SnapshotError("这个项目还没有快照")
        if not 1 <= number <= len(entries):
            raise SnapshotError(f"没有第 {number} 个快照（共 {len(entries)} 个，1 是最近的）")
        target = entries[number - 1]
        try:
            self.git.run("cat-file", "-e", f"{target.tree}^{{tree}}")
        except GitError:
            raise SnapshotError(f"快照 {number} 的内容已不在快照仓库中") from None
        return target

    def _plan(self, now: str, now_left: tuple[LeftOut, ...], target: Entry, number: int) -> Restore:
        kept_paths = {x.path for x in (*target.left_out, *now_left)}
        changes = self._diff(now, target.tree)

        def keep(paths: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(p for p in paths if p not in kept_paths and not _under(p, kept_paths))

        kept = {x.path: x for x in (*target.left_out, *now_left)}
        return Restore(target, number, Changes(keep(changes.added), keep(changes.removed), keep(changes.modified)),
                       tuple(kept[p] for p in sorted(kept)))

    @_one_line
    def preview(self, number: int) -> Restore:
        """What restoring snapshot ``number`` would change now; nothing is written but the
        staging cache."""
        notices: list[str] = []
        with self._locked():
            self._ensure_repo(notices)
            target = self._target(number)
            now, left = self._with_repair(self._stage, notices)
            plan = self._plan(now, left, target, number)
        plan.notices = notices
        return plan

    @_one_line
    def restore(self, number: int, label: Label) -> Restore:
        """Record the tree as it is (``label``), then bring snapshot ``number`` back. Files left
        out of either snapshot are not touched."""
        notices: list[str] = []
        with self._locked():
            self._ensure_repo(notices)
            target = self._target(number)
            staged = self._with_repair(self._stage, notices)
            if notices:  # the repository was set aside: the target is gone with it
                raise SnapshotError("快照仓库已损坏并已重建，无法恢复之前的快照")
            plan = self._plan(*staged, target, number)
            if not plan.changes.count:  # nothing to restore, nothing to undo later
                return plan
            self._take(label, notices, staged)
            try:
                self._apply(plan)
            except (GitError, OSError) as error:
                raise SnapshotError(f"{error}（恢复前的状态已保存为快照 1）") from None
        plan.notices = notices
        return plan

    def _apply(self, plan: Restore) -> None:
        for path in sorted(plan.changes.removed, key=lambda p: p.count("/"), reverse=True):
            target = self.root / path
            if not self._inside(target.parent):
                continue  # a folder turned into a link meanwhile: never delete through it
            if target.is_symlink() or target.is_file():
                target.unlink()
            _prune_empty(target.parent, self.root)
        writes = [*plan.changes.added, *plan.changes.modified]
        if not writes:
            return
        scratch = self.folder / "restore-index"
        scratch.unlink(missing_ok=True)
        try:
            self.git.run("read-tree", plan.target.tree, index=scratch)
            self.git.run("checkout-index", "-f", "-z", "--stdin", input=nul_join(writes), index=scratch)
        finally:
            scratch.unlink(missing_ok=True)

    def _inside(self, folder: Path) -> bool:
        real = os.path.realpath(folder)
        return real == str(self.root) or real.startswith(str(self.root).rstrip(os.sep) + os.sep)

    # --- status and clean ------------------------------------------------------------------------

    @_one_line
    def status(self) -> Status:
        with self._locked():
            entries = self._entries()
            size = sum(f.stat().st_size for f in self.repo.rglob("*") if f.is_file()) if self.repo.is_dir() else 0
        return Status(self.folder, len(entries), len({e.tree for e in entries}), size, self.options)

    @_one_line
    def clean(self, keep: int) -> tuple[int, int]:
        """Keep the newest ``keep`` snapshots; returns (snapshots removed, bytes freed)."""
        with self._locked():
            if not self.repo.is_dir():
                return 0, 0
            entries = self._entries()
            kept = entries[-keep:] if keep > 0 else []
            dropped = entries[:len(entries) - len(kept)]
            if not dropped:
                return 0, 0
            before = sum(f.stat().st_size for f in self.repo.rglob("*") if f.is_file())
            live = {e.tree for e in kept}
            gone = sorted({e.tree for e in dropped} - live)
            try:
                if gone:
                    commands = "".join(f"delete refs/snapshots/{tree}\n" for tree in gone)
                    self.git.run("update-ref", "--stdin", input=commands.encode())
                scratch = self.log.with_suffix(".tmp")
                scratch.write_text("".join(e.line() + "\n" for e in kept), encoding="utf-8")
                os.replace(scratch, self.log)
                self.git.run("gc", "--prune=now", "--quiet")
            except GitError as error:
                raise SnapshotError(str(error)) from None
            after = sum(f.stat().st_size for f in self.repo.rglob("*") if f.is_file())
        return len(dropped), max(0, before - after)


def _under(path: str, folders: set[str]) -> bool:
    return any(path.startswith(f.rstrip("/") + "/") for f in folders)


def _prune_empty(folder: Path, root: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def left_out_line(left: tuple[LeftOut, ...] | list[LeftOut], shown: int = 5) -> str:
    names = "、".join(f"{x.path}（{size_text(x.size)}）" if x.size else x.path for x in list(left)[:shown])
    more = f" 等 {len(left)} 个文件" if len(left) > shown else ""
    whys = {x.why for x in left}
    return f"📸 快照没有包含 {names}{more}：{WHY[whys.pop()] if len(whys) == 1 else '过大或无法读取'}"


WHY = {"file": "单个文件超过大小上限", "snapshot": "超过单个快照的大小上限", "unreadable": "无法读取"}


def size_text(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def describe(entry: Entry) -> str:
    when = time.strftime("%m-%d %H:%M:%S", time.localtime(entry.time))
    return f"{when} · {entry.mode} · {entry.input or '（无输入）'}"
