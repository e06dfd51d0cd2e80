"""A project's .env may pick the endpoint only together with its own key (issue 10 item 5),
and commands are told which variables hold the key (item 8). Every source combination."""

import itertools
import json

import pytest

from paicli.config.catalog import load_catalog
from paicli.config.settings import ConfigError, load_settings

URL = "http://127.0.0.1:1/v1"
# Where the endpoint setting comes from, and where the key does: (source, variable).
ENDPOINT_SOURCES = (None, "env", "dotenv", "config")
KEY_SOURCES = (None, ("env", "PAICLI_API_KEY"), ("env", "DEEPSEEK_API_KEY"), ("dotenv", "PAICLI_API_KEY"),
               ("dotenv", "DEEPSEEK_API_KEY"), ("config", "PAICLI_API_KEY"))
# The keys that come from outside the .env and that each setting's endpoint would receive
# (with a custom base URL no preset is chosen, so DEEPSEEK_API_KEY is not read).
LEAKED = {
    "PAICLI_BASE_URL": {("env", "PAICLI_API_KEY"), ("config", "PAICLI_API_KEY")},
    "PAICLI_PROVIDER": {("env", "PAICLI_API_KEY"), ("env", "DEEPSEEK_API_KEY"), ("config", "PAICLI_API_KEY")},
}
VALUES = {"PAICLI_BASE_URL": URL, "PAICLI_PROVIDER": "deepseek"}


def load(tmp_path, env=None, dotenv=None, config=None):
    """Settings from the three sources, each a {VARIABLE: value} dict."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if config:
        as_json = {name.removeprefix("PAICLI_").lower(): value for name, value in config.items()}
        (home / "config.json").write_text(json.dumps(as_json), encoding="utf-8")
    if dotenv is not None:
        (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in dotenv.items()), encoding="utf-8")
    return load_settings(tmp_path, {"PAICLI_HOME": str(home), "PAICLI_MODEL": "m", **(env or {})})


def place(endpoint: str, endpoint_source, key_source) -> dict[str, dict[str, str]]:
    sources: dict[str, dict[str, str]] = {"env": {}, "dotenv": {}, "config": {}}
    if endpoint_source:
        sources[endpoint_source][endpoint] = VALUES[endpoint]
    if key_source:
        where, name = key_source
        sources[where][name] = f"key-from-{where}"
    return sources


CASES = [(endpoint, e, k) for endpoint in VALUES for e, k in itertools.product(ENDPOINT_SOURCES, KEY_SOURCES)]


@pytest.mark.parametrize(("endpoint", "endpoint_source", "key_source"), CASES)
def test_dotenv_endpoint_needs_the_key_from_the_same_file(tmp_path, endpoint, endpoint_source, key_source):
    sources = place(endpoint, endpoint_source, key_source)
    refused = endpoint_source == "dotenv" and key_source in LEAKED[endpoint]
    if refused:
        with pytest.raises(ConfigError) as caught:
            load(tmp_path, **sources)
        message = str(caught.value)
        assert "\n" not in message
        assert f"{tmp_path / '.env'} 设置了 {endpoint}" in message and key_source[1] in message
    else:
        settings = load(tmp_path, **sources)
        if key_source and key_source[0] == "dotenv" and settings.api_key:
            assert settings.api_key == "key-from-dotenv"


def test_project_key_loses_to_the_environment_key_so_its_endpoint_is_refused(tmp_path):
    # Precedence stays env > .env: the environment's key would win and go to the .env's URL.
    with pytest.raises(ConfigError, match="设置了 PAICLI_BASE_URL.*PAICLI_API_KEY.*来自环境变量"):
        load(tmp_path, env={"PAICLI_API_KEY": "user"}, dotenv={"PAICLI_BASE_URL": URL, "PAICLI_API_KEY": "project"})


def test_project_provider_with_its_provider_key_loses_to_the_environment_general_key(tmp_path):
    with pytest.raises(ConfigError, match="设置了 PAICLI_PROVIDER"):
        load(tmp_path, env={"PAICLI_API_KEY": "user"},
             dotenv={"PAICLI_PROVIDER": "deepseek", "DEEPSEEK_API_KEY": "project"})


def test_project_endpoint_and_key_beat_config_json(tmp_path):
    s = load(tmp_path, dotenv={"PAICLI_BASE_URL": URL, "PAICLI_API_KEY": "project"},
             config={"PAICLI_BASE_URL": "http://127.0.0.1:2/v1", "PAICLI_API_KEY": "user"})
    assert (s.base_url, s.api_key) == (URL, "project")


def test_environment_endpoint_beats_the_dotenv_one_so_nothing_is_refused(tmp_path):
    s = load(tmp_path, env={"PAICLI_BASE_URL": "http://127.0.0.1:2/v1", "PAICLI_API_KEY": "user"},
             dotenv={"PAICLI_BASE_URL": URL})
    assert (s.base_url, s.api_key) == ("http://127.0.0.1:2/v1", "user")


def test_an_empty_dotenv_endpoint_still_counts_it_would_unset_the_users_choice(tmp_path):
    with pytest.raises(ConfigError, match="设置了 PAICLI_BASE_URL"):
        load(tmp_path, env={"PAICLI_API_KEY": "user"}, dotenv={"PAICLI_BASE_URL": ""},
             config={"PAICLI_BASE_URL": URL})


def test_harmless_dotenv_settings_work_with_the_users_key(tmp_path):
    s = load(tmp_path, env={"PAICLI_API_KEY": "user", "PAICLI_BASE_URL": URL},
             dotenv={"PAICLI_MODEL": "project-model", "PAICLI_LIGHT_MODEL": "small",
                     "PAICLI_TOOL_RESULT_CLEARING_KEEP": "5"})
    assert (s.base_url, s.api_key, s.model, s.light_model) == (URL, "user", "m", "small")


def test_no_key_at_all_is_left_to_the_missing_key_message(tmp_path):
    s = load(tmp_path, dotenv={"PAICLI_BASE_URL": URL})
    with pytest.raises(ConfigError, match="没有 .* 的 API key"):
        s.require_key()


# --- item 8: what commands must not see -------------------------------------------------------

def test_secret_env_names_every_key_variable_and_any_holding_the_key(tmp_path):
    s = load(tmp_path, env={"PAICLI_API_KEY": "sk-live", "PAICLI_BASE_URL": URL, "MY_COPY": "sk-live",
                            "UNRELATED": "sk-other"})
    assert {"PAICLI_API_KEY", "MY_COPY", *load_catalog().key_variables(), "PAICLI_SERPAPI_KEY", "SERPAPI_API_KEY"} == s.secret_env


def test_secret_env_catches_a_copy_of_a_key_that_came_from_config_json(tmp_path):
    s = load(tmp_path, env={"PAICLI_BASE_URL": URL, "STASHED": "sk-conf"}, config={"PAICLI_API_KEY": "sk-conf"})
    assert "STASHED" in s.secret_env


@pytest.mark.parametrize("setting", ["PAICLI_WEB_ALLOW_HOSTS", "PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT",
                                     "PAICLI_MEMORY_DIR", "PAICLI_AUDIT_DIR", "PAICLI_SEARXNG_URL",
                                     "PAICLI_STUDIO_ORIGINS"])
@pytest.mark.parametrize("where", ["env", "dotenv", "config"])
def test_guard_settings_come_only_from_the_user(tmp_path, setting, where):
    # A valid value of each kind: a flag's unknown word is an error of its own (test_config_flags).
    value = {"PAICLI_SEARXNG_URL": "http://127.0.0.1:9/", "PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT": "off",
             "PAICLI_STUDIO_ORIGINS": "https://tools.example.org"}.get(setting, "x")
    sources = {"env": {"PAICLI_API_KEY": "k"}, "dotenv": {}, "config": {}}
    sources[where][setting] = value
    if where == "config" and setting in ("PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT", "PAICLI_AUDIT_DIR"):
        pytest.skip("not a config.json key")
    if where == "dotenv":
        with pytest.raises(ConfigError, match=f"设置了 {setting}，而项目不能选择它"):
            load(tmp_path, **sources)
    else:
        load(tmp_path, **sources)
