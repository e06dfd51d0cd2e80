"""Whether a file is byte for byte what git has for it: the guard's test for a script whose
metadata alone changed since paicli started (``chmod +x gradlew``).

Only that case asks git (one ``git ls-files`` with a short timeout); every other script is
judged from its ``stat`` alone. Anything git cannot answer (no repository, not tracked, git
missing, slow or failing, a merge conflict, a filter or line-ending conversion making the
stored blob differ) is a no: the script stays fresh and is judged strictly.
"""

from __future__ import annotations

import hashlib
import os
import subprocess

from paicli.tools.sandbox.own import child_environment, git

GIT_TIMEOUT = 2.0  # seconds; the guard runs before every command
MAX_BYTES = 32 * 1024 * 1024  # a larger file is not hashed: it stays fresh
FILE_MODES = ("100644", "100755")  # a regular file in git (not a symlink, not a submodule)

# A project's .git/config is written by strangers: a configured fsmonitor hook is a program git
# would run. No optional locks: the guard reads, it never rewrites the index. Literal pathspecs:
# a file named `*.sh` is that file, not a pattern.
# issue 34 item 5: git resolved outside every directory a command can write, run without the key.
GIT = ("--no-optional-locks", "--literal-pathspecs", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


def matches_index(path: str) -> bool:
    """Whether the regular file ``path`` has exactly the content of its entry in the index of
    the git repository it is in (the staged version; for a clean checkout, HEAD's)."""
    staged = _index_entry(path)
    if staged is None:
        return False
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError:
        return False
    return len(data) <= MAX_BYTES and _blob_id(data, len(staged)) == staged


def _index_entry(path: str) -> str | None:
    """The blob id git's index holds for ``path``, or None (untracked, conflicted, no git)."""
    folder, name = os.path.split(path)
    try:
        done = subprocess.run([git(), *GIT, "-C", folder, "ls-files", "-s", "-z", "--", name], env=child_environment(),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    entries = [e for e in done.stdout.split(b"\0") if e]
    if done.returncode != 0 or len(entries) != 1:  # several: stages of a merge conflict
        return None
    info, _, entry_path = entries[0].partition(b"\t")
    fields = info.decode("ascii", errors="replace").split()
    if len(fields) != 3 or fields[0] not in FILE_MODES or fields[2] != "0" or entry_path != os.fsencode(name):
        return None
    return fields[1]


def _blob_id(data: bytes, length: int) -> str:
    """The id git gives ``data`` as a blob: SHA-1, or SHA-256 in a repository using it."""
    digest = hashlib.sha256 if length == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()
