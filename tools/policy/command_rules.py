"""CommandGuard's rules, judged on parsed commands rather than on text (reference v.6).

The reference matches regular expressions against the whole command line, so ``rm -r -f ~``,
``r''m -rf ~`` or ``cd ~ && rm -rf ./*`` pass and ``echo "rm -rf ~" > notes.txt`` is refused.
Here each rule looks at the simple commands ``paicli.tools.policy.shell_parse`` found, by command name,
flags in any spelling, and targets resolved against the directory they run in. The refusal
texts are the reference's; the rules it lacks have their own.

Where the reference was silent or too blunt:
- Targets are judged by their real path (symlinks resolved, then ``..``): with ``build ->
  ~/docs``, ``rm -rf build/*`` and ``find build/ -delete`` are outside the project.
- ``rm -r`` (force or not) is refused when a target is the project root or outside it, or
  cannot be known (a variable, ``$(…)``, xargs input, a ``cd`` to somewhere unknown). Inside
  the project, absolute paths included, it runs; the reference refused every ``rm -rf /…``.
- ``find`` may not start at ``/``, the home directory or an ancestor of it; ``find … -delete``
  may not delete outside the project.
- Resolving a target reads the file system (``os.path.realpath``): the guard runs in a worker
  thread.
- Each reason is either a rule the command certainly breaks (a plain string) or a ``Doubt``:
  the guard cannot tell where it points (``RM_UNKNOWN``, ``chmod -R 777 $X``).
- A shell or interpreter reading its script from a pipe is refused when anything earlier in
  the pipeline downloads (curl, wget …) or decodes (base64 -d, xxd -r, gunzip …) text.
"""

from __future__ import annotations

import os

from paicli.tools.policy.shell_parse import DECODED, Doubt, Parsed
from paicli.tools.policy.shell_words import INTERPRETERS, SHELLS, Simple, Word, find_starts, reads_script_from_stdin

# reference (v.6): the denial texts
SUDO = "禁止 sudo 提权"
RM = "禁止 rm -rf 删除全盘或用户目录"
MKFS = "禁止 mkfs 格式化磁盘"
DD = "禁止 dd 写入裸设备"
FORK_BOMB = "识别为 fork bomb"
PIPE = "禁止 curl / wget 管道直接执行远端脚本"
FIND = "不允许扫描 /、~ 或整个文件系统"
CHMOD = "禁止 chmod 777 全盘"
SHUTDOWN = "禁止 shutdown / reboot / halt"
# ours
RM_UNKNOWN = Doubt("禁止 rm -rf 删除无法确定的路径（变量、命令替换、xargs 输入或去向不明的 cd）")
RAW_DEVICE = "禁止写入裸设备"

PRIVILEGE = frozenset({"sudo", "doas", "su", "pkexec", "run0"})
POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh"})
ALWAYS_DECODE = frozenset({"uudecode", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "bunzip2", "zstdcat", "rev", "tr"})
DECODE_FLAG = {"base64": "d", "base32": "d", "basenc": "d", "gzip": "d", "xz": "d", "bzip2": "d", "zstd": "d",
               "openssl": "d", "xxd": "r"}
SAFE_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty"})
WORLD_WRITABLE = frozenset({"777", "0777", "a+rwx", "ugo+rwx", "a=rwx", "ugo=rwx", "+rwx", "=rwx"})


def refusal(parsed: Parsed, root: str) -> str | None:
    """The first rule a parsed command breaks, or None."""
    if parsed.recursive_calls:
        return FORK_BOMB
    for simple in parsed.simples:
        reason = judge(simple, root)
        if reason:
            return reason
    for stages in parsed.pipelines:
        reason = piped_script(stages)
        if reason:
            return reason
    return None


def judge(simple: Simple, root: str) -> str | None:
    name = simple.name
    if name in PRIVILEGE:
        return SUDO
    if name == "rm":
        return rm(simple, root)
    if name == "mkfs" or name.startswith("mkfs.") or name == "mke2fs":
        return MKFS
    if name == "dd" and any(_raw_device(w.text[3:]) for w in simple.args if w.text.startswith("of=")):
        return DD
    if name == ">" and _raw_device(simple.args[0].text):
        return RAW_DEVICE
    if name in POWER or _power_verb(simple):
        return SHUTDOWN
    if name == "find":
        return find(simple, root)
    if name == "chmod":
        return chmod(simple, root)
    return script_from_substitution(simple)


def rm(simple: Simple, root: str) -> str | None:
    flags, targets = split_flags(simple.args)
    recursive = any(f.startswith("--re") and "--recursive".startswith(f) or
                    not f.startswith("--") and ("r" in f or "R" in f) for f in flags)
    if not recursive:
        return None
    if simple.stdin_args:
        return RM_UNKNOWN
    for target in targets:
        path = real_location(target, simple.cwd, follow=False)  # rm unlinks a symlink, unless `link/`
        if path is None:
            return RM_UNKNOWN
        if not inside(path, real_root(root)):
            return RM
    return None


def find(simple: Simple, root: str) -> str | None:
    starts, _ = find_starts(simple)
    paths = [real_location(w, simple.cwd) for w in starts]
    home = os.path.realpath(simple.home or "/")
    if any(p is not None and (p == "/" or home == p or home.startswith(p.rstrip("/") + "/")) for p in paths):
        return FIND
    if any(w.text == "-delete" for w in simple.args):
        # find follows a starting point that is a symlink with -H / -L, or when spelt `link/`
        follow = any(w.text in ("-H", "-L", "-follow") for w in simple.args)
        paths = [real_location(w, simple.cwd, follow) for w in starts]
        if any(p is None for p in paths):
            return RM_UNKNOWN
        if any(not (p == real_root(root) or inside(p, real_root(root))) for p in paths):
            return RM
    return None


def chmod(simple: Simple, root: str) -> str | None:
    flags, operands = split_flags(simple.args)
    recursive = any(f == "--recursive" or not f.startswith("--") and "R" in f for f in flags)
    if not recursive or len(operands) < 2 or operands[0].text not in WORLD_WRITABLE:
        return None
    for target in operands[1:]:
        path = real_location(target, simple.cwd)  # chmod follows a symlink named on its command line
        if path is None:
            return Doubt(CHMOD)
        if not (path == real_root(root) or inside(path, real_root(root))):
            return CHMOD
    return None


def piped_script(stages: list[list[Simple]]) -> str | None:
    """``curl … | sh``, ``echo … | base64 -d | bash``: fetched or decoded text run as a script."""
    for i, stage in enumerate(stages):
        if not any(reads_script_from_stdin(s) for s in stage):
            continue
        earlier = [s for previous in stages[:i] for s in previous]
        if any(s.name in DOWNLOADERS for s in earlier):
            return PIPE
        if any(decodes(s) for s in earlier):
            return DECODED
    return None


def script_from_substitution(simple: Simple) -> str | None:
    """``sh <(curl …)``, ``source <(base64 -d …)``: the script is what the substitution prints."""
    if simple.name not in SHELLS | INTERPRETERS | {"source", "."}:
        return None
    inner = [s for w in simple.args for s in (w.inner or ())]
    if any(s.name in DOWNLOADERS for s in inner):
        return PIPE
    return DECODED if any(decodes(s) for s in inner) else None


def decodes(simple: Simple) -> bool:
    if simple.name in ALWAYS_DECODE:
        return True
    letter = DECODE_FLAG.get(simple.name)
    flags, _ = split_flags(simple.args)
    return letter is not None and any(
        f in ("--decode", "-revert") or (not f.startswith("--") and letter in f.lower()) for f in flags)


def split_flags(words: tuple[Word, ...]) -> tuple[list[str], list[Word]]:
    """Options anywhere before ``--`` (GNU tools permute them) and the operands."""
    flags: list[str] = []
    operands: list[Word] = []
    for i, word in enumerate(words):
        if word.text == "--":
            return flags, operands + list(words[i + 1:])
        if word.text.startswith("-") and len(word.text) > 1 and word.known:
            flags.append(word.text)
        else:
            operands.append(word)
    return flags, operands


def location(word: Word, cwd: str | None) -> str | None:
    """The absolute path a word names, or None when it cannot be known."""
    if not word.known:
        return None
    if os.path.isabs(word.text):
        return os.path.normpath(word.text)
    return os.path.normpath(os.path.join(cwd, word.text)) if cwd else None


def real_location(word: Word, cwd: str | None, follow: bool = True) -> str | None:
    """The path a word names as the kernel resolves it: symlinks followed, then ``..`` applied
    to where they lead (``build/../x`` with ``build -> ~/docs`` is ``~/x``). With ``follow``
    False the last component is not followed (``rm link`` unlinks the link), unless the word
    ends in ``/`` (``rm -rf link/`` empties its target). Touches the file system."""
    if not word.known or (cwd is None and not os.path.isabs(word.text)):
        return None
    path = os.path.join(cwd or "/", word.text)
    head, tail = os.path.split(path)
    if follow or tail in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(head), tail)


def real_root(root: str) -> str:
    return os.path.realpath(root)


def inside(path: str, root: str) -> bool:
    """Strictly below the project root: the root itself is not a target."""
    return path.startswith(os.path.normpath(root).rstrip("/") + "/")


def _raw_device(path: str) -> bool:
    return path.startswith("/dev/") and path not in SAFE_DEVICES and not path.startswith("/dev/fd/")


def _power_verb(simple: Simple) -> bool:
    verbs = {w.text for w in simple.args}
    return (simple.name == "systemctl" and bool(verbs & (POWER | {"kexec"}))) or \
        (simple.name in ("init", "telinit") and bool(verbs & {"0", "6"}))
