"""The provider and model catalog (issue 39): every entry's window against reference (b)'s table,
config.json's additions and overrides, and what a switch changes."""

import json

import pytest

from paicli.memory.context.profile import ContextProfile
from paicli.config.catalog import DEFAULT_WINDOW, load_catalog
from paicli.config.feature_settings import ConfigError
from paicli.config.model_switch import switched, window_notice
from paicli.config.prices import Price
from paicli.config.settings import load_settings

# reference (b), the table: window -> (typical models, summary trigger, /context %, clear trigger,
# session-memory start, memory budget). The seed article's own table (128K 默认值、FreeLLMAPI;
# 200K GLM-5.1; 256K Kimi、Step; 1M DeepSeek-V4.1-Flash、GLM-5.3、混元 Hy4) agrees.
TABLE = {
    128_000: (95_000, 74, 57_000, 57_000, 640),
    200_000: (167_000, 83, 100_000, 100_200, 1_000),
    256_000: (223_000, 87, 100_000, 133_800, 1_280),
    1_000_000: (967_000, 96, 100_000, 580_200, 5_000),
}
# The models and providers the table names, and their row.
NAMED_MODELS = {("glm", "glm-5.1"): 200_000, ("kimi", "kimi-k2.6"): 256_000, ("glm", "glm-5.3"): 1_000_000,
                ("deepseek", "deepseek-v4-flash"): 1_000_000, ("deepseek", "deepseek-v4.1-flash"): 1_000_000}
NAMED_PROVIDERS = {"freellmapi": 128_000, "xunfei": 128_000, "step": 256_000, "hunyuan": 1_000_000,
                   "agnes": 1_000_000}
PAICLI_PROVIDERS = {"glm", "deepseek", "kimi", "step", "xunfei", "hunyuan", "freellmapi", "agnes", "openai"}


def test_the_catalog_has_paicli_s_providers_each_with_its_default_model_listed():
    catalog = load_catalog()
    assert PAICLI_PROVIDERS <= set(catalog.providers)
    for provider in catalog.providers.values():
        assert provider.model in provider.models, provider.name
        assert provider.base_url.startswith(("https://", "http://localhost")) and provider.key_env.endswith("_API_KEY")


def test_every_window_the_reference_names_is_the_reference_s():
    catalog = load_catalog()
    for (provider, model), window in NAMED_MODELS.items():
        assert catalog.providers[provider].models[model].window == window, (provider, model)
    for provider, window in NAMED_PROVIDERS.items():
        assert {m.window for m in catalog.providers[provider].models.values()} == {window}, provider
    assert DEFAULT_WINDOW == 128_000


def test_every_catalog_window_is_a_row_of_the_table_and_gets_the_row_s_thresholds():
    for provider in load_catalog().providers.values():
        for model in provider.models.values():
            assert model.window in TABLE, (provider.name, model.id)
            profile = ContextProfile.from_window(model.window)
            trigger, percent, clearing, session, budget = TABLE[model.window]
            assert (profile.compression_trigger_tokens, profile.compression_trigger_percent,
                    profile.tool_result_clearing_trigger, profile.session_memory_precompute_tokens,
                    profile.memory_context_tokens) == (trigger, percent, clearing, session, budget), model.id


def test_prices_are_only_the_published_ones():
    # The reference publishes no price; the catalog carries DeepSeek's list price (CNY per M tokens).
    prices = load_catalog().prices()
    assert prices == {"deepseek-chat": Price(2.0, 3.0, 0.2), "deepseek-reasoner": Price(2.0, 3.0, 0.2)}


def test_prompt_cache_modes_by_provider():
    catalog = load_catalog()
    assert [catalog.providers[p].prompt_cache for p in ("deepseek", "kimi", "glm", "step", "hunyuan", "openai")] == [
        "automatic-prefix-cache", "moonshot-context-cache", "glm-prompt-cache", "step-prefix-cache",
        "hunyuan-prefix-cache", "none"]


def settings(tmp_path, config=None, **env):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if config is not None:
        (home / "config.json").write_text(json.dumps(config), encoding="utf-8")
    base = {"PAICLI_HOME": str(home), "HOME": str(tmp_path)}
    return load_settings(tmp_path, {**base, **env})


def test_config_json_adds_a_provider_and_overrides_a_model_field(tmp_path):
    s = settings(tmp_path, {"provider": "mine", "providers": {
        "mine": {"base_url": "https://llm.example.com/v1", "key_env": "MINE_API_KEY", "model": "m-1",
                 "models": {"m-1": {"window": 64000, "vision": True}}},
        "deepseek": {"models": {"deepseek-chat": {"window": 200000}}}}}, MINE_API_KEY="k")
    assert (s.provider, s.base_url, s.model, s.api_key, s.context_window) == (
        "mine", "https://llm.example.com/v1", "m-1", "k", 64_000)
    assert s.model_info.vision and "MINE_API_KEY" in s.secret_env
    chat = s.catalog.providers["deepseek"].models["deepseek-chat"]
    assert chat.window == 200_000 and chat.price == Price(2.0, 3.0, 0.2)  # the other fields stay


@pytest.mark.parametrize("entry, named", [
    ({"glm": {"models": {"glm-5.1": {"window": "big"}}}}, '"window" 必须是正整数'),
    ({"new": {"base_url": "https://x.example"}}, '"key_env"'),
    ({"glm": {"models": {"glm-5.1": {"price": {"input": 1}}}}}, '"price"'),
])
def test_a_bad_catalog_entry_in_config_json_is_one_line_naming_it(tmp_path, entry, named):
    with pytest.raises(ConfigError, match=named):
        settings(tmp_path, {"providers": entry}, PAICLI_API_KEY="k")


def test_an_unknown_model_gets_the_default_window_and_says_so(tmp_path):
    s = settings(tmp_path, PAICLI_API_KEY="k", PAICLI_MODEL="glm-9")
    assert s.context_window == 128_000 and not s.window_known
    assert "glm-9" in window_notice(s) and "128,000" in window_notice(s)
    assert window_notice(settings(tmp_path, PAICLI_API_KEY="k")) is None
    explicit = settings(tmp_path, PAICLI_API_KEY="k", PAICLI_MODEL="glm-9", PAICLI_CONTEXT_WINDOW="64000")
    assert explicit.context_window == 64_000 and window_notice(explicit) is None


def test_a_switch_to_another_provider_takes_its_endpoint_key_window_and_light_model(tmp_path):
    s = settings(tmp_path, PAICLI_API_KEY="glm-key", PAICLI_LIGHT_MODEL="glm-4.5-air", DEEPSEEK_API_KEY="ds-key",
                 PAICLI_AUTO_CLASSIFIER_MODEL="glm-4.5-air")
    assert (s.context_window, s.light_model, s.review_model) == (200_000, "glm-4.5-air", "glm-4.5-air")
    same = switched(s, "glm-5.3")
    assert (same.context_window, same.light_model, same.review_model, same.api_key) == (
        1_000_000, "glm-4.5-air", "glm-4.5-air", "glm-key")
    other = switched(s, "deepseek/deepseek-v4-flash")
    assert (other.provider, other.base_url, other.api_key, other.model) == (
        "deepseek", "https://api.deepseek.com/v1", "ds-key", "deepseek-v4-flash")
    assert (other.context_window, other.light_model, other.review_model) == (1_000_000, "deepseek-v4-flash", "")
    assert switched(s, "deepseek/").model == "deepseek-chat"  # the provider's default model
    assert switched(s, "Qwen/Qwen3-8B").model == "Qwen/Qwen3-8B"  # not a provider: a model id with a slash


def test_a_switch_to_a_provider_without_a_key_names_the_variable_and_changes_nothing(tmp_path):
    s = settings(tmp_path, PAICLI_API_KEY="k")
    with pytest.raises(ConfigError, match="STEP_API_KEY"):
        switched(s, "step/step-3")
    keyed = settings(tmp_path, {"providers": {"step": {"api_key": "from-config"}}}, PAICLI_API_KEY="k")
    assert switched(keyed, "step/step-3").api_key == "from-config"


def test_thinking_off_and_search_come_from_the_catalog():
    catalog = load_catalog()
    assert catalog.providers["glm"].thinking_off == {"thinking": {"type": "disabled"}}
    assert catalog.providers["deepseek"].thinking_off is None
    assert catalog.providers["glm"].search.kind == "zhipu"
