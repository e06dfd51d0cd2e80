"""The langgraph.json factories read the same settings as the CLI (paicli.config.settings)."""

import json

from langchain_core.messages import HumanMessage

from paicli.config.settings import load_settings
from paicli.studio.stores import make_checkpointer, make_store
from tests.unit.test_ledger import CONFIG, THREAD, tool_loop


def server_env(monkeypatch, tmp_path):
    """``langgraph dev`` started by hand in a project: only PAICLI_HOME is in the environment."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("PAICLI_MEMORY_DIR", "PAICLI_MEMORY_CONFLICT_THRESHOLD", "PAICLI_MEMORY_STALE_DAYS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAICLI_PROJECT_ROOT", str(project))
    return project


async def test_make_checkpointer_writes_under_paicli_home(tmp_path, monkeypatch):
    server_env(monkeypatch, tmp_path)
    async with make_checkpointer() as saver:
        await tool_loop(saver).ainvoke({"messages": [HumanMessage("hi")]}, CONFIG)
    assert (tmp_path / "home" / "history" / "raw" / f"{THREAD}.jsonl").exists()


async def test_make_store_opens_the_memory_file_the_cli_opens(tmp_path, monkeypatch):
    project = server_env(monkeypatch, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    # memory_dir from config.json: the old factory read only the environment and missed it.
    (home / "config.json").write_text(json.dumps({"memory_dir": str(tmp_path / "shared-memory")}))
    monkeypatch.setenv("PAICLI_MEMORY_CONFLICT_THRESHOLD", "0.5")
    cli = load_settings(project)
    async with make_store() as store:
        assert store.memory.directory == cli.memory_dir == tmp_path / "shared-memory"
        assert store.memory.options == cli.memory.options
        assert store.memory.options.conflict_threshold == 0.5
