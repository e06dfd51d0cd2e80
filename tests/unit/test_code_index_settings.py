"""The code index's settings and the project root moving with `/index <path>` (issue 37)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from paicli.memory.longterm.entry import normalize_project_key
from paicli.app import App
from paicli.config.settings import ConfigError, load_settings


def env(tmp_path, **extra):
    return {"PAICLI_HOME": str(tmp_path / "home"), "PAICLI_API_KEY": "chat-key", **extra}


def test_no_endpoint_means_no_vectors_and_provider_means_the_chat_endpoint(tmp_path):
    assert not load_settings(tmp_path, env(tmp_path)).code_index.embedding.enabled
    provider = load_settings(tmp_path, env(tmp_path, PAICLI_EMBEDDING_URL="provider", PAICLI_EMBEDDING_MODEL="embedding-3",
                                           PAICLI_PROVIDER="glm")).code_index.embedding
    assert provider.url == "https://open.bigmodel.cn/api/paas/v4" and provider.api_key == "chat-key"
    local = load_settings(tmp_path, env(tmp_path, PAICLI_EMBEDDING_URL="http://127.0.0.1:11434/v1",
                                        PAICLI_EMBEDDING_MODEL="nomic-embed-text", PAICLI_EMBEDDING_INPUT_TYPE="on",
                                        PAICLI_CODE_INDEX_AUTO_MAX_FILES="500")).code_index
    assert local.embedding.api_key == "" and local.embedding.input_type and local.auto_index_max_files == 500


@pytest.mark.parametrize("extra,message", [
    ({"PAICLI_EMBEDDING_URL": "http://127.0.0.1:9/v1"}, "没有 PAICLI_EMBEDDING_MODEL"),
    ({"PAICLI_EMBEDDING_URL": "ftp://x", "PAICLI_EMBEDDING_MODEL": "m"}, "必须以 http:// 或 https:// 开头"),
    ({"PAICLI_EMBEDDING_INPUT_TYPE": "maybe"}, "PAICLI_EMBEDDING_INPUT_TYPE"),
    ({"PAICLI_CODE_INDEX_MAX_FILE_BYTES": "0"}, "PAICLI_CODE_INDEX_MAX_FILE_BYTES"),
])
def test_a_bad_setting_is_one_line_naming_it(tmp_path, extra, message):
    if "PAICLI_EMBEDDING_INPUT_TYPE" in extra:
        extra = {**extra, "PAICLI_EMBEDDING_URL": "http://127.0.0.1:9/v1", "PAICLI_EMBEDDING_MODEL": "m"}
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path, env(tmp_path, **extra))


def test_a_project_env_may_not_choose_where_the_code_goes(tmp_path):
    (tmp_path / ".env").write_text("PAICLI_EMBEDDING_URL=https://collector.example/v1\nPAICLI_EMBEDDING_MODEL=m\n")
    with pytest.raises(ConfigError, match="PAICLI_EMBEDDING_URL"):
        load_settings(tmp_path, env(tmp_path))


def test_moving_the_project_root_moves_the_memory_key_and_the_run_context(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    for name, value in env(tmp_path, PAICLI_BASE_URL="http://127.0.0.1:9/v1", PAICLI_MODEL="m").items():
        monkeypatch.setenv(name, value)
    args = SimpleNamespace(project=str(first), session=None, mode="react", yes=False, dangerously_skip_sandbox=False)
    app = App(args)
    session = app.session
    app.move_project(second.resolve())
    assert app.settings.project_root == second.resolve()
    assert app.project_key == normalize_project_key(str(second))
    assert session.context.project_root == str(second.resolve())  # the tools' root, offload, snapshots, sandbox
