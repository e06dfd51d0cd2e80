"""What a simple command's words mean to the guard: wrappers, shells, and literal output.

Pure functions over ``shell_parse.Simple``; nothing here runs or reads anything.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash"})
INTERPRETERS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php", "lua"})
STDIN_NAMES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
STDIN_SCRIPTS = object()  # script_source: the shell reads its script from stdin

# Wrappers run the rest of their words as a command; the set holds the options that take a
# value as the next word, so the value is not mistaken for the command.
WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "command": frozenset(), "builtin": frozenset(), "exec": frozenset({"-a"}), "nohup": frozenset(),
    "setsid": frozenset(), "busybox": frozenset(), "unbuffer": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "-t", "--class", "--classdata"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--eof",
                        "--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars"}),
}
@dataclass(frozen=True)
class Word:
    text: str  # quotes removed; ~, $HOME, $PWD expanded when known
    known: bool = True  # False: holds a value the guard cannot know ($X, $(…), ~user)
    inner: tuple[Simple, ...] | None = None  # the commands of a $(…) / <(…) inside it
    escaped: bool = False  # its source held a backslash (echo -e / printf may decode it)


@dataclass(frozen=True)
class Simple:
    words: tuple[Word, ...]  # wrappers stripped: words[0] is the command that runs
    cwd: str | None  # where it runs; None after a `cd` to somewhere unknown
    home: str | None  # what ~ means for it; None after HOME was reassigned
    stdin_args: bool = False  # xargs: more arguments arrive on stdin
    stdin: Word | None = None  # literal text it reads on stdin (a here-document or here-string)
    at: int = 0  # where it starts in the text parsed, for a script's line (0 inside `bash -c`)

    @property
    def name(self) -> str:
        return os.path.basename(self.words[0].text) if self.words else ""

    @property
    def args(self) -> tuple[Word, ...]:
        return self.words[1:]


FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")  # {a,b} and {1..3}: bash expands these first


@dataclass(frozen=True)
class Inner:
    """The command a wrapper runs, where, and how its arguments arrive."""

    words: tuple[Word, ...]
    cwd: str | None
    script: Word | None = None  # env -S 'text': a command line to split and run
    stdin_args: bool = False  # xargs appends arguments read from stdin


def options(words: tuple[Word, ...], takes_value: frozenset[str]) -> tuple[dict[str, Word | None], int]:
    """Leading options (``--opt=value`` split) and the index of the first operand."""
    found: dict[str, Word | None] = {}
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            return found, i + 1
        if not text.startswith("-") or text == "-":
            break
        key, eq, value = text.partition("=")
        if eq and key.startswith("--"):
            found[key] = _word(value, words[i].known)
        elif text in takes_value:
            found[text] = words[i + 1] if i + 1 < len(words) else None
            i += 1
        else:
            found[text] = None
        i += 1
    return found, i


def unwrap(simple: Simple) -> list[Inner]:
    """The commands a wrapper (``env``, ``nice``, ``xargs``, ``find -exec`` …) runs, and the
    command lines some programs run through a shell (``flock -c``, ``script -c``,
    ``tar --to-command``, ``git -c alias.x='!…'``)."""
    if simple.name == "find":
        return find_execs(simple)
    if simple.name in RUNNERS:
        return RUNNERS[simple.name](simple)
    if simple.name not in WRAPPERS:
        return []
    opts, first = options(simple.args, WRAPPERS[simple.name])
    rest = simple.args[first:]
    if simple.name == "command" and ("-v" in opts or "-V" in opts):
        return []  # `command -v rm` only looks rm up
    if simple.name == "env":
        while rest and "=" in rest[0].text and not rest[0].text.startswith("="):
            rest = rest[1:]
        split = opts.get("-S") or opts.get("--split-string")
        if split is not None:
            line = " ".join([split.text, *(w.text for w in rest)])
            return [Inner((), _env_cwd(simple, opts), _word(line, split.known and all(w.known for w in rest)))]
    if simple.name == "timeout":
        rest = rest[1:]  # the duration
    if not rest:
        return []
    return [Inner(tuple(rest), _env_cwd(simple, opts), stdin_args=simple.name == "xargs")]


def _env_cwd(simple: Simple, opts: dict[str, Word | None]) -> str | None:
    target = opts.get("-C") or opts.get("--chdir")
    if target is None:
        return simple.cwd
    if not target.known or (simple.cwd is None and not os.path.isabs(target.text)):
        return None
    return os.path.normpath(os.path.join(simple.cwd or "/", target.text))


def find_starts(simple: Simple) -> tuple[tuple[Word, ...], int]:
    """find's starting points (``.`` when none) and the index where its expression begins."""
    args, i = simple.args, 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P") or args[i].text[:2] in ("-D", "-O")):
        i += 1
    start = i
    while i < len(args) and not (args[i].text.startswith("-") or args[i].text in ("(", "!", ")")):
        i += 1
    return (args[start:i] or (_word("."),)), i


def find_execs(simple: Simple) -> list[Inner]:
    """``find START … -exec CMD {} ;``: CMD once per start, with ``{}`` a path below it."""
    starts, i = find_starts(simple)
    args, found = simple.args, []
    while i < len(args):
        if args[i].text in FIND_ACTIONS:
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            for start in starts:
                found.append(Inner(tuple(_below(w, start) for w in args[i + 1:j]), simple.cwd))
            i = j
        i += 1
    return [inner for inner in found if inner.words]


def _below(word: Word, start: Word) -> Word:
    if "{}" not in word.text:
        return word
    return _word(word.text.replace("{}", os.path.join(start.text, "{}")), word.known and start.known)


def script_source(simple: Simple) -> Word | object | None:
    """Where a shell's script comes from: the ``-c`` text, ``STDIN_SCRIPTS``, or None (a file)."""
    flags, operand = shell_operand(simple)
    if "c" in flags:
        return operand
    if "s" in flags or operand is None or operand.text in STDIN_NAMES:
        return STDIN_SCRIPTS  # -s: the operands are arguments, the script is stdin
    return None


def script_file(simple: Simple) -> Word | None:
    """The script file a shell runs (``bash -e F args``, ``sh -- F``), or None."""
    return shell_operand(simple)[1] if simple.name in SHELLS and script_source(simple) is None else None


def shell_operand(simple: Simple) -> tuple[str, Word | None]:
    """A shell's single-letter flags and its first operand (the -c text, or the script file)."""
    args, i, flags = simple.args, 0, ""
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 1  # the option's value
        elif not text.startswith("--"):
            flags += text[1:]
        i += 1
    return flags, args[i] if i < len(args) else None


def reads_script_from_stdin(simple: Simple) -> bool:
    """A shell or interpreter that would run whatever arrives on its stdin."""
    if simple.name in SHELLS:
        return script_source(simple) is STDIN_SCRIPTS
    if simple.name in ("source", "."):
        return bool(simple.args) and simple.args[0].text in STDIN_NAMES
    if simple.name.rstrip("0123456789.") in INTERPRETERS:
        texts = [w.text for w in simple.args]
        if any(t in ("-c", "-e", "-E", "-m", "-r", "-p") for t in texts):
            return False
        operands = [t for t in texts if not t.startswith("-") or t == "-"]
        return not operands or operands[0] in STDIN_NAMES
    return False


def literal_output(simple: Simple) -> Word | None:
    """What ``echo`` / ``printf`` / ``cat <<EOF`` print, unknown when escapes or formats decide."""
    if simple.name == "echo":
        opts, first = options(simple.args, frozenset())
        words = simple.args[first:]
        text = " ".join(w.text for w in words)
        return _word(text, all(w.known and not w.escaped for w in words) and "\\" not in text)
    if simple.name == "printf":
        text = " ".join(w.text for w in simple.args)
        plain = all(w.known and not w.escaped for w in simple.args)
        return _word(text, plain and not re.search(r"[\\%]", text))
    if simple.name == "cat" and not simple.args:
        return simple.stdin
    return None


def has_braces(text: str) -> bool:
    return bool(_BRACES.search(text))


def _word(text: str, known: bool = True) -> Word:
    return Word(text, known)


def getopt(words: tuple[Word, ...], short: str, long: frozenset[str],
           permute: bool = False) -> tuple[list[tuple[str, Word | None]], list[Word]]:
    """Options as getopt_long reads them: short clusters (``-qc CMD``, ``-cCMD``), ``--opt=v``
    and ``--opt v`` for the long options in ``long``; ``short`` lists the letters that take a
    value. Returns the options in order and the operands (all of them with ``permute``, else
    those from the first one on)."""
    found: list[tuple[str, Word | None]] = []
    operands: list[Word] = []
    i = 0
    while i < len(words):
        word, text = words[i], words[i].text
        i += 1
        if text == "--":
            operands.extend(words[i:])
            break
        if text.startswith("--"):
            key, eq, value = text.partition("=")
            if eq:
                found.append((key, _word(value, word.known)))
            elif key in long:
                found.append((key, words[i] if i < len(words) else None))
                i += 1
            else:
                found.append((key, None))
        elif text.startswith("-") and len(text) > 1:
            for j, letter in enumerate(text[1:], 1):
                if letter in short:
                    rest = text[j + 1:]
                    if rest:
                        found.append(("-" + letter, _word(rest, word.known)))
                    else:
                        found.append(("-" + letter, words[i] if i < len(words) else None))
                        i += 1
                    break
                found.append(("-" + letter, None))
        else:
            operands.append(word)
            if not permute:
                operands.extend(words[i:])
                break
    return found, operands


def _flock(simple: Simple) -> list[Inner]:
    """``flock [opts] FILE CMD …`` or ``flock [opts] FILE -c 'CMD'``."""
    short, long = "wEc", frozenset({"--wait", "--timeout", "--conflict-exit-code", "--command"})
    opts, operands = getopt(simple.args, short, long)
    if len(operands) < 2:
        return _scripts(opts, ("-c", "--command"), simple.cwd)
    more, rest = getopt(tuple(operands[1:]), short, long)  # options may follow the file
    scripts = _scripts(opts + more, ("-c", "--command"), simple.cwd)
    return scripts or ([Inner(tuple(rest), simple.cwd)] if rest else [])


def _unshare(simple: Simple) -> list[Inner]:
    opts, rest = getopt(simple.args, "RwSG", frozenset({"--root", "--wd", "--setuid", "--setgid", "--propagation",
                                                      "--setgroups", "--monotonic", "--boottime"}))
    cwd = simple.cwd
    for key, value in opts:
        if key in ("-R", "--root"):
            cwd = None  # paths are the new root's
        elif key in ("-w", "--wd"):
            cwd = _env_cwd(simple, {"-C": value}) if cwd is not None else None
    return [Inner(tuple(rest), cwd)] if rest else []


def _script(simple: Simple) -> list[Inner]:
    opts, _ = getopt(simple.args, "cEIOBTmo", frozenset({"--command", "--echo", "--log-in", "--log-out", "--log-io",
                                                        "--log-timing", "--logging-format", "--output-limit"}), True)
    return _scripts(opts, ("-c", "--command"), simple.cwd)


TAR_COMMANDS = ("--to-command", "-I", "--use-compress-program", "-F", "--info-script", "--new-volume-script",
                "--rsh-command", "--rmt-command")


def _tar(simple: Simple) -> list[Inner]:
    args, short = simple.args, "bCfFgHIKLNTVX"
    if args and not args[0].text.startswith("-"):  # old style: `tar xIf CMD a.tar`, values in order
        letters = [c for c in args[0].text if c in short]
        values = args[1:1 + len(letters)]
        args = (*(_word("-" + c) for c in args[0].text if c not in short),
                *(w for c, v in zip(letters, values) for w in (_word("-" + c), v)), *args[1 + len(letters):])
    long = frozenset(k for k in TAR_COMMANDS if k.startswith("--")) | {"--checkpoint-action", "--file", "--directory"}
    opts, _ = getopt(args, short, long, True)
    found = _scripts(opts, TAR_COMMANDS, simple.cwd)
    for key, value in opts:
        if key == "--checkpoint-action" and value is not None and value.text.startswith("exec="):
            found.append(Inner((), simple.cwd, _word(value.text[5:], value.known)))
    return found


# git settings whose value git runs as a shell command (git config's documentation); the
# ``*`` stands for any subsection. Keys are compared in lower case, as git does.
GIT_COMMAND_KEYS = ("core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.fsmonitor", "sequence.editor",
                    "diff.external", "gpg.program", "gpg.*.program", "pager.*", "diff.*.command", "diff.*.textconv",
                    "filter.*.clean", "filter.*.smudge", "filter.*.process", "merge.*.driver", "difftool.*.cmd",
                    "mergetool.*.cmd", "uploadpack.packobjectshook", "sendemail.sendmailcmd", "man.*.cmd",
                    "browser.*.cmd", "remote.*.uploadpack", "remote.*.receivepack", "credential.helper",
                    "credential.*.helper", "alias.*")
GIT_CONFIG_ENV = "git --config-env 的值来自环境变量，无法检查"


def git_settings(simple: Simple) -> list[tuple[str, Word]]:
    """The ``-c key=value`` settings before git's subcommand and what ``git config [set] KEY
    VALUE`` stores (later git commands use it), keys in lower case."""
    found, args, i = [], simple.args, 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        if text in ("-c", "--config-env") and i + 1 < len(args):
            pair, i = args[i + 1], i + 1
        elif text.startswith("--config-env="):
            pair = _word(text.partition("=")[2], args[i].known)
        elif text in ("-C", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix", "--list-cmds"):
            i += 2 if text == "-C" else 1
            continue
        else:
            i += 1
            continue
        key, _, value = pair.text.partition("=")
        env = text.startswith("--config-env")
        found.append((key.lower(), _word(value, pair.known and not env)))
        i += 1
    if i < len(args) and args[i].text == "config":
        found.extend(_git_config(args[i + 1:]))
    return found


_CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"})
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
                           "-l", "--list", "--unset", "--unset-all", "--remove-section", "--rename-section", "-e",
                           "--edit"})


def _git_config(args: tuple[Word, ...]) -> list[tuple[str, Word]]:
    operands, i = [], 0
    while i < len(args):
        text = args[i].text
        if text in _CONFIG_READS:
            return []
        if text in _CONFIG_VALUE_OPTIONS:
            i += 2
            continue
        if not text.startswith("-"):
            operands.append(args[i])
        i += 1
    if operands and operands[0].text == "set":
        operands = operands[1:]
    elif operands and operands[0].text in ("get", "list", "unset", "rename-section", "remove-section", "edit"):
        return []
    return [(operands[0].text.lower(), operands[1])] if len(operands) >= 2 else []


def _git(simple: Simple) -> list[Inner]:
    found = []
    for key, value in git_settings(simple):
        if not any(_key_matches(key, pattern) for pattern in GIT_COMMAND_KEYS):
            continue
        text = value.text
        if key.startswith("alias.") or key.startswith("credential."):
            if value.known and not text.startswith("!"):
                continue  # a plain alias expands to git arguments; a plain helper is a program name
            text = text[1:] if text.startswith("!") else text
        found.append(Inner((), simple.cwd, _word(text, value.known)))
    return found


def _key_matches(key: str, pattern: str) -> bool:
    head, star, tail = pattern.partition("*")
    if not star:
        return key == pattern
    return key.startswith(head) and key.endswith(tail) and len(key) > len(head) + len(tail)


def _scripts(opts: list[tuple[str, Word | None]], keys: tuple[str, ...], cwd: str | None) -> list[Inner]:
    return [Inner((), cwd, value) for key, value in opts if key in keys and value is not None]


RUNNERS = {"flock": _flock, "unshare": _unshare, "script": _script, "tar": _tar, "git": _git}


def trap_action(simple: Simple) -> Word | None:
    """The command ``trap 'ACTION' SIG…`` will run (None for ``trap - SIG``, ``trap '' SIG``,
    ``trap -p`` or a lone signal, which resets it)."""
    if simple.name != "trap":
        return None
    _, operands = getopt(simple.args, "", frozenset())
    if len(operands) < 2 or operands[0].text in ("-", ""):
        return None
    return operands[0]
