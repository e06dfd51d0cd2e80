"""Suite-wide fixtures, options and the Hypothesis profile."""

import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.properties import DEV

# The checkout's root is no import root (issue 36): paicli is imported as installed, and its
# packages are paicli.graphs, paicli.tools..., never the checkout's graphs/ or tools/ as top-level
# packages of their own. `python -m pytest` puts the working directory first on sys.path, and
# pytest itself adds nothing (--import-mode=importlib); `tests` is imported already (this module
# is tests.conftest), so it stays importable.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]

# pytest-xdist's workers export COLUMNS=80 and LINES=24; a child paicli (and rich in process)
# would take them over the pseudo-terminal's size and wrap lines a serial run does not.
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)

# A suite started in the background (`.ci/run &` from a script, nohup) inherits SIGINT ignored,
# and every paicli, language server and engine it starts would inherit that too: the Ctrl-C
# tests would send a signal nobody hears (and the in-process runner's timeout could not stop a
# run). The default, as on a terminal: a handled SIGINT is SIG_DFL again in a child at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

if os.environ.get("HYPOTHESIS_PROFILE") == DEV:  # the fast loop; CI keeps Hypothesis's own profile
    settings.load_profile(DEV)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--subprocess-cli", action="store_true",
                     help="run every tests/cli run_paicli call as a real subprocess (default: in process "
                     "unless the test is marked `process`)")


@pytest.fixture(autouse=True, scope="session")
def _jieba_cache_in_pytest_tmp(tmp_path_factory):
    """In-process memory searches build jieba's dictionary cache; keep it in this run's temporary
    directory, not jieba's default fixed name in the shared /tmp (paicli passes $PAICLI_HOME/cache)."""
    from paicli.memory.longterm.retriever import use_cache_dir

    use_cache_dir(tmp_path_factory.mktemp("jieba"))


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server's URL (issue 28 item 8): $PAICLI_TEST_DATABASE_URL (``.ci/run`` starts
    one), else a throwaway cluster of our own when the binaries are installed. Without either the
    test is skipped, saying why; under CI=true it fails instead."""
    import os

    from tests.support.postgres import URL_VARIABLE, Cluster, binaries

    url = os.environ.get(URL_VARIABLE)
    if url:
        yield url
        return
    bin_dir = binaries()
    if bin_dir is None:
        reason = f"PostgreSQL not available: set {URL_VARIABLE} or install postgresql (initdb, pg_ctl)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    cluster = Cluster(bin_dir)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def own_cluster():
    """A PostgreSQL server of this test's own, to stop, kill and restart (issue 35): never the
    shared one of $PAICLI_TEST_DATABASE_URL. Needs the binaries (``.ci/run`` installs them);
    without them the test is skipped, saying why, and under CI=true it fails."""
    from tests.support.postgres import Cluster, binaries

    bin_dir = binaries()
    if bin_dir is None:
        reason = "PostgreSQL binaries not found (initdb, pg_ctl): install postgresql"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    cluster = Cluster(bin_dir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def database_url(postgres_server):
    """An empty database of its own for the test."""
    from tests.support.postgres import fresh_database

    return fresh_database(postgres_server)
