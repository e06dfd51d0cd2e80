"""Worker processes that examine files for a big update, in the order the batches were given.

Each worker is ``python -m paicli.codeindex.pool`` (a fresh interpreter: nothing of the parent's state
or ``__main__`` is carried over, unlike multiprocessing's spawn) reading pickled batches of
``paicli.codeindex.worker.Job`` on stdin and writing pickled results on stdout, one length-prefixed
frame each. Pickle is safe here: both ends are this package. A worker ignores Ctrl-C (the
parent cancels and stops it) and ends when its stdin closes, so a parent that is killed leaves
no worker behind.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

_HEADER = struct.Struct("<Q")


def _send(stream: BinaryIO, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(size))


class Pool:
    def __init__(self, count: int):
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        # -P and a neutral working directory: the project being indexed is never on the worker's
        # import path (a repository's own codeindex/ or tree_sitter.py must not run).
        self.workers = [subprocess.Popen([sys.executable, "-P", "-m", "paicli.codeindex.pool"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, env=env, close_fds=True, cwd=os.path.abspath(os.sep))
                        for _ in range(count)]

    def map(self, batches: list[list[Any]], cancelled: Any = None) -> Iterator[list[Any]]:
        """Results per batch, in order; each worker keeps two batches in flight."""
        owner: list[int] = []
        sent = 0
        for _ in range(2):
            for index, worker in enumerate(self.workers):
                if sent < len(batches):
                    _send(worker.stdin, batches[sent])
                    owner.append(index)
                    sent += 1
        for position in range(len(batches)):
            if cancelled is not None and cancelled():
                return
            worker = self.workers[owner[position]]
            result = _receive(worker.stdout)
            if sent < len(batches):
                _send(worker.stdin, batches[sent])
                owner.append(owner[position])
                sent += 1
            yield result

    def close(self) -> None:
        for worker in self.workers:
            worker.kill()
            worker.wait()
            for stream in (worker.stdin, worker.stdout):
                try:
                    stream.close()
                except OSError:
                    pass


def _serve() -> None:
    from paicli.codeindex.worker import examine_many, quiet_worker

    quiet_worker()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            jobs = _receive(stdin)
        except EOFError:
            return
        _send(stdout, examine_many(jobs))


if __name__ == "__main__":
    _serve()
