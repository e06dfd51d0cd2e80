"""Running git on the shadow repository, and nothing but the shadow repository.

Every call names the shadow's own ``GIT_DIR``, ``GIT_INDEX_FILE`` and the project as
``GIT_WORK_TREE``, so git never discovers (nor reads, nor locks) the project's own ``.git``. The
child gets a small environment of its own: no inherited ``GIT_*`` variable, no system or
global configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL``), no ``HOME`` (so no
``~/.config/git/ignore``), and the settings that would change what is stored or run are pinned
on the command line: hooks off, no fsmonitor, no line-ending conversion, no automatic gc.
A project's ``.gitattributes`` cannot turn conversions on either: the shadow's
``info/attributes``, which git reads last, unsets them (``ATTRIBUTES``). Messages are read in
the C locale, so a corrupt repository is recognised by its words.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from paicli.tools.sandbox.own import git as git_program, safe_path

PINNED = (
    "core.hooksPath=/dev/null", "core.excludesFile=/dev/null", "core.fsmonitor=false",
    "core.autocrlf=false", "core.safecrlf=false", "core.eol=lf", "core.quotePath=false",
    "core.untrackedCache=false", "core.symlinks=true", "core.fileMode=true", "core.bare=false",
    "gc.auto=0", "advice.addEmbeddedRepo=false", "advice.addIgnoredFile=false", "init.defaultBranch=snapshots",
    "index.threads=1", "feature.manyFiles=false",
)
# Stored bytes are the file's bytes: no eol conversion, no filter, no $Id$ expansion.
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"

# What git says when the shadow repository itself is damaged (C locale).
_CORRUPT = ("not a git repository", "bad config", "is corrupt", "corrupt loose", "bad object", "invalid object",
            "loose object", "unable to parse", "bad tree object", "not a valid object", "bad packed")
_BAD_INDEX = ("index file corrupt", "bad signature", "index file smaller than expected", "bad index",
              "unknown index entry format", "index uses")


class GitError(Exception):
    def __init__(self, args: list[str], code: int, stderr: str):
        self.code, self.stderr = code, stderr.strip()
        first = next((line for line in self.stderr.splitlines() if line.strip()), f"exit {code}")
        super().__init__(f"git {args[0] if args else ''}: {first}")

    @property
    def corrupt(self) -> bool:
        text = self.stderr.lower()
        return not self.bad_index and any(word in text for word in _CORRUPT)

    @property
    def stale_lock(self) -> bool:
        """``index.lock`` (or a ref's ``.lock``) exists: left by a git that was killed."""
        return ".lock': file exists" in self.stderr.lower()

    @property
    def bad_index(self) -> bool:
        text = self.stderr.lower()
        return any(word in text for word in _BAD_INDEX)


@dataclass(frozen=True)
class Git:
    """git bound to one shadow repository (``git_dir``), one index and one project."""

    git_dir: Path
    work_tree: Path
    index: Path

    def env(self, index: Path | None = None) -> dict[str, str]:
        return {
            "PATH": safe_path(),  # nothing else is inherited (issue 34: no entry a command could write)
            "GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.work_tree),
            "GIT_INDEX_FILE": str(index or self.index), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C", "LANG": "C",
        }

    def run(self, *args: str, input: bytes | None = None, index: Path | None = None, ok: tuple[int, ...] = (0,)
            ) -> subprocess.CompletedProcess[bytes]:
        command = [git_program(), *(part for setting in PINNED for part in ("-c", setting)), *args]
        try:
            done = subprocess.run(command, input=input, capture_output=True, cwd=self.work_tree,
                                  env=self.env(index), check=False)
        except OSError as exc:  # git missing, or the project folder is gone
            raise GitError(list(args), -1, str(exc)) from None
        if done.returncode not in ok:
            raise GitError(list(args), done.returncode, done.stderr.decode("utf-8", "replace"))
        return done

    def out(self, *args: str, input: bytes | None = None, index: Path | None = None) -> str:
        return self.run(*args, input=input, index=index).stdout.decode("utf-8", "surrogateescape").strip()


def init_bare(git_dir: Path) -> None:
    """A new, empty shadow repository without sample hooks, with our attributes."""
    git_dir.parent.mkdir(parents=True, exist_ok=True)
    env = {"PATH": safe_path(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "LC_ALL": "C"}
    done = subprocess.run([git_program(), "-c", "init.defaultBranch=snapshots", "init", "--quiet", "--bare", "--template=",
                           str(git_dir)], capture_output=True, env=env, check=False)
    if done.returncode != 0:
        raise GitError(["init"], done.returncode, done.stderr.decode("utf-8", "replace"))
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text(ATTRIBUTES, encoding="utf-8")


def nul_list(raw: bytes) -> list[str]:
    """``-z`` output as paths (surrogate escapes keep undecodable names round-trippable)."""
    return [part.decode("utf-8", "surrogateescape") for part in raw.split(b"\0") if part]


def nul_join(paths: list[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
