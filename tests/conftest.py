"""Suite-wide fixtures."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _jieba_cache_in_pytest_tmp(tmp_path_factory):
    """In-process memory searches build jieba's dictionary cache; keep it in this run's temporary
    directory, not jieba's default fixed name in the shared /tmp (paicli passes $PAICLI_HOME/cache)."""
    from memory.longterm.retriever import use_cache_dir

    use_cache_dir(tmp_path_factory.mktemp("jieba"))
