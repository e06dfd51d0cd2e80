import json

import pytest

from paicli.config.settings import ConfigError, load_settings


def env(tmp_path, **values):
    return {"PAICLI_HOME": str(tmp_path / "home"), **values}


def test_preset_supplies_base_url_model_and_window(tmp_path):
    s = load_settings(tmp_path, env(tmp_path, PAICLI_PROVIDER="deepseek", DEEPSEEK_API_KEY="k"))
    assert (s.base_url, s.model, s.context_window, s.api_key) == ("https://api.deepseek.com/v1", "deepseek-chat", 128_000, "k")
    assert s.light_model == "deepseek-chat"


def test_environment_beats_dotenv_beats_config_json(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"model": "from-config", "api_key": "c", "context_window": 9000}))
    (tmp_path / ".env").write_text('export PAICLI_MODEL="from-dotenv"\n# comment\nPAICLI_LIGHT_MODEL=light\n')
    s = load_settings(tmp_path, env(tmp_path, PAICLI_LIGHT_MODEL="light-env"))
    assert (s.model, s.api_key, s.context_window, s.light_model) == ("from-dotenv", "c", 9000, "light-env")


def test_context_window_override_and_bad_values(tmp_path):
    assert load_settings(tmp_path, env(tmp_path, PAICLI_CONTEXT_WINDOW="32_000")).context_window == 32_000
    with pytest.raises(ConfigError, match="PAICLI_CONTEXT_WINDOW 必须是整数"):
        load_settings(tmp_path, env(tmp_path, PAICLI_CONTEXT_WINDOW="lots"))


def test_missing_key_names_what_to_set(tmp_path):
    s = load_settings(tmp_path, env(tmp_path, PAICLI_PROVIDER="kimi"))
    with pytest.raises(ConfigError, match="PAICLI_API_KEY.*MOONSHOT_API_KEY"):
        s.require_key()


def test_custom_endpoint_needs_a_model_and_unknown_provider_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="PAICLI_MODEL"):
        load_settings(tmp_path, env(tmp_path, PAICLI_PROVIDER="local", PAICLI_BASE_URL="http://127.0.0.1:1/v1"))
    with pytest.raises(ConfigError, match="未知的 PAICLI_PROVIDER"):
        load_settings(tmp_path, env(tmp_path, PAICLI_PROVIDER="nope"))
    s = load_settings(tmp_path, env(tmp_path, PAICLI_BASE_URL="http://127.0.0.1:1/v1", PAICLI_PROVIDER="x", PAICLI_MODEL="m"))
    assert (s.provider, s.model) == ("custom", "m")


def test_broken_config_json_is_reported_not_ignored(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="config.json 不是合法的 JSON"):
        load_settings(tmp_path, env(tmp_path))


def test_skill_body_budget_defaults_to_16k_and_must_be_positive(tmp_path):
    assert load_settings(tmp_path, env(tmp_path)).skill_budget == 16 * 1024
    assert load_settings(tmp_path, env(tmp_path, PAICLI_SKILL_BODY_BUDGET="32_000")).skill_budget == 32_000
    for bad, reason in (("lots", "整数"), ("0", "正整数")):
        with pytest.raises(ConfigError, match=f"PAICLI_SKILL_BODY_BUDGET 必须是{reason}"):
            load_settings(tmp_path, env(tmp_path, PAICLI_SKILL_BODY_BUDGET=bad))


def test_studio_origins_are_exact_origins_from_the_environment_or_config_json(tmp_path):
    raw = "https://Tools.Example.org:443/, http://localhost:3000"
    s = load_settings(tmp_path, env(tmp_path, PAICLI_MODEL="m", PAICLI_STUDIO_ORIGINS=raw))
    assert s.studio_origins == ("https://tools.example.org", "http://localhost:3000")
    (tmp_path / "home").mkdir()
    listed = {"studio_origins": ["https://a.example", "https://b.example:8443"]}
    (tmp_path / "home" / "config.json").write_text(json.dumps(listed))
    assert load_settings(tmp_path, env(tmp_path, PAICLI_MODEL="m")).studio_origins == (
        "https://a.example", "https://b.example:8443")
    # an empty value in the environment clears the list config.json gives
    assert load_settings(tmp_path, env(tmp_path, PAICLI_MODEL="m", PAICLI_STUDIO_ORIGINS="")).studio_origins == ()


@pytest.mark.parametrize("bad", ["*", "https://*.example.org", "evil.example", "https://x.example/path", "ftp://x.example",
                                 "https://user@x.example", "https://x.example?q=1", "http://x.example:0"])
def test_a_studio_origin_that_is_not_one_exact_origin_is_refused(tmp_path, bad):
    with pytest.raises(ConfigError, match="PAICLI_STUDIO_ORIGINS 只接受精确的网页来源"):
        load_settings(tmp_path, env(tmp_path, PAICLI_MODEL="m", PAICLI_STUDIO_ORIGINS=f"https://ok.example,{bad}"))
