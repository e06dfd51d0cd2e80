"""The ``save_skill_reference`` tool (reference t): notes the model keeps in a user skill.

It writes ``references/**.md`` inside ``$PAICLI_HOME/skills/<name>/`` and nothing else, so a
skill can keep what it learned for later ``load_skill(name, file=...)`` reads. Decisions where the
reference is silent:

- **User skills only.** The name must resolve (as ``load_skill`` resolves it) to a user skill: a
  built-in is read-only package data, a project skill is the project author's, and a user skill
  a project skill of the same name shadows would receive a file no ``load_skill`` reads.
- **``file`` starts with ``references/``.** A bare ``foo.md`` is refused with a hint rather than
  moved there, so the model never believes it changed ``SKILL.md`` or another top-level file.
- **No symlink at any level** from the skill directory down: every directory is opened relative to
  its parent with ``O_NOFOLLOW`` (so nothing can be swapped between the check and the write),
  and the file too. ``$PAICLI_HOME`` and its ``skills/`` folder are the user's own set-up.
- **One lock** (``$PAICLI_HOME/skill-references.lock``, outside every skill, so no file a skill
  ships can stand in for it) serialises writes across processes: an append reads the size and the
  last bytes, checks the 64 KB limit and writes, with no other writer in between.
- **Append** separates entries with a blank line; **overwrite** writes a temporary file in the
  same directory, fsyncs it and renames it over the old one, so a reader sees old or new.

Whether the call may run (approval, external content) is the policy's: ``paicli.tools.policy``.
"""

from __future__ import annotations

import os
import secrets
import stat
from contextlib import ExitStack
from pathlib import Path, PurePosixPath
from typing import Any

from filelock import FileLock, Timeout

from paicli.tools.base import PolicyError, ToolContext, ToolSpec, failed
from paicli.tools.common import bool_arg, str_arg
from paicli.tools.skills.library import SkillLibrary
from paicli.tools.specs import SAVE_SKILL_REFERENCE

TOOL = "save_skill_reference"
REFERENCES = "references"
MAX_WRITE_CHARS = 8_000  # reference t
MAX_FILE_BYTES = 64 * 1024  # reference t
LOCK_FILE = "skill-references.lock"
LOCK_TIMEOUT = 30.0  # seconds; another process holds it only for one small write
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FAIL = "保存 Skill 参考文件失败: "


def save_skill_reference_spec(library: SkillLibrary) -> ToolSpec:
    return SAVE_SKILL_REFERENCE.bound(lambda args, ctx: save_skill_reference(args, ctx, library))


def save_skill_reference(args: dict[str, Any], ctx: ToolContext, library: SkillLibrary,
                         lock_timeout: float = LOCK_TIMEOUT) -> str:
    name = (str_arg(args, "name") or "").strip()
    file = (str_arg(args, "file") or "").strip()
    content = str_arg(args, "content")
    if not name or not file:
        return failed(FAIL + "name 和 file 不能为空")
    if not content:
        return failed(FAIL + "content 不能为空")
    if len(content) > MAX_WRITE_CHARS:
        return failed(FAIL + f"content 共 {len(content)} 字符，超过每次 {MAX_WRITE_CHARS} 字符上限；请分多次追加")
    parts = reference_parts(file)
    directory = user_skill_dir(library, ctx.root, name)
    overwrite = bool_arg(args, "overwrite", False)
    try:
        with FileLock(str(library.home / LOCK_FILE), timeout=lock_timeout, mode=0o600, thread_local=False):
            total = write(directory, parts, content.encode("utf-8"), overwrite)
    except Timeout:
        return failed(FAIL + f"另一个 paicli 进程正在写 Skill 参考文件，{lock_timeout:g} 秒内没有等到，请稍后重试")
    except LimitError as exc:
        return failed(FAIL + str(exc))
    except OSError as exc:
        return failed(FAIL + f"{'/'.join(parts)}: {exc.strerror or exc}")
    shown = "/".join(parts)
    verb = "已覆盖写入" if overwrite else "已追加"
    return (f"Skill 参考文件{verb}: {name}/{shown}（本次 {len(content)} 字符，文件共 {total} 字节）。"
            f'可用 load_skill(name="{name}", file="{shown}") 读取')


def reference_parts(file: str) -> tuple[str, ...]:
    """``file`` as its path components, ``references/`` first; anything else is refused."""
    raw = file.replace("\\", "/")
    rel = PurePosixPath(raw)
    if rel.is_absolute() or raw.startswith("~") or ".." in rel.parts:
        raise PolicyError(f"Skill 参考文件路径必须是 Skill 目录内的相对路径，不能是绝对路径或含 ..: {file}")
    parts = rel.parts
    if len(parts) < 2 or parts[0] != REFERENCES:
        raise PolicyError(f"只能写 Skill 目录 references/ 下的文件，例如 references/{rel.name or 'notes.md'}: {file}")
    if not parts[-1].lower().endswith(".md"):
        raise PolicyError(f"Skill 参考文件必须是 .md 文件: {file}")
    if any(p.startswith(".") or not p.isprintable() for p in parts):
        raise PolicyError(f"Skill 参考文件路径的每一段都不能以 . 开头或含控制字符: {file}")
    return parts


def user_skill_dir(library: SkillLibrary, project: Path, name: str) -> Path:
    """The directory of the user skill ``name`` as ``load_skill`` would find it now."""
    if library.home is None:
        raise PolicyError("没有用户 Skill 目录（未设置 PAICLI_HOME）")
    listed = library.lookup(project, name)
    if listed is None:
        raise PolicyError(f"用户 Skill '{name}' 不存在；只能写入 $PAICLI_HOME/skills/ 下已有的 Skill")
    skill = listed.skill
    if skill.source != "user":
        kind = "内置 Skill 是只读的" if skill.source == "builtin" else "项目 Skill 属于项目作者"
        raise PolicyError(f"Skill '{name}' 是 {skill.source} Skill（{kind}），只能写入用户 Skill 的参考文件")
    if skill.problem:
        raise PolicyError(f"Skill '{name}' 无法使用：{skill.problem}")
    return skill.directory


class LimitError(Exception):
    """The write would break a size limit; the message says which."""


def write(directory: Path, parts: tuple[str, ...], data: bytes, overwrite: bool) -> int:
    """Write under the held lock; returns the file's size after the write."""
    with ExitStack() as stack:
        fd = _open_dir(str(directory), None, directory.name)
        stack.callback(os.close, fd)
        for part in parts[:-1]:
            fd = _open_dir(part, fd, part, create=True)
            stack.callback(os.close, fd)
        name = parts[-1]
        existing = _existing(fd, name)
        if overwrite or existing is None:
            return _replace(fd, name, data)
        return _append(fd, name, data, existing)


def _open_dir(path: str, parent: int | None, shown: str, create: bool = False) -> int:
    if create:
        try:
            os.mkdir(path, 0o755, dir_fd=parent)
        except FileExistsError:
            pass
    try:
        return os.open(path, _DIR, dir_fd=parent)
    except OSError as exc:
        if _is_link(path, parent):
            raise PolicyError(f"Skill 参考文件路径中的 {shown} 是符号链接，拒绝写入") from None
        raise exc


def _is_link(path: str, parent: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path, dir_fd=parent).st_mode)
    except OSError:
        return False


def _existing(fd: int, name: str) -> os.stat_result | None:
    try:
        info = os.lstat(name, dir_fd=fd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise PolicyError(f"Skill 参考文件 {name} 是符号链接，拒绝写入")
    if not stat.S_ISREG(info.st_mode):
        raise PolicyError(f"Skill 参考文件 {name} 不是普通文件")
    return info


def _check_size(size: int) -> None:
    if size > MAX_FILE_BYTES:
        raise LimitError(f"写入后文件将有 {size} 字节，超过单个文件 64KB 上限；请精简或换一个文件")


def _replace(fd: int, name: str, data: bytes) -> int:
    _check_size(len(data))
    temp = f".{name}.{secrets.token_hex(6)}.tmp"
    out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
    try:
        with os.fdopen(out, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        _unlink_quietly(temp, fd)
        raise
    os.fsync(fd)  # the rename itself survives a crash
    return len(data)


def _append(fd: int, name: str, data: bytes, before: os.stat_result) -> int:
    out = os.open(name, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    with os.fdopen(out, "r+b", buffering=0) as stream:
        info = os.fstat(out)
        if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(info.st_mode):
            raise PolicyError(f"Skill 参考文件 {name} 在写入时被替换，拒绝写入")
        tail = os.pread(out, 2, max(0, info.st_size - 2)) if info.st_size else b""
        data = _separator(tail) + data
        _check_size(info.st_size + len(data))
        stream.write(data)
        os.fsync(out)
        return info.st_size + len(data)


def _separator(tail: bytes) -> bytes:
    """A blank line between the old text and the new entry, however the old text ended."""
    if not tail or tail.endswith(b"\n\n"):
        return b""
    return b"\n" if tail.endswith(b"\n") else b"\n\n"


def _unlink_quietly(name: str, fd: int) -> None:
    try:
        os.unlink(name, dir_fd=fd)
    except OSError:
        pass
