"""The price table behind the status bar's cost (reference u.4): CNY per million tokens,
config.json entries over the built-in ones, no cost for a model without a price."""

from __future__ import annotations

import json

import pytest

from paicli.config.feature_settings import ConfigError
from paicli.config.prices import Price
from paicli.config.settings import load_settings
from paicli.ui.status_bar import cost_text


def test_cached_input_is_charged_at_its_own_rate():
    price = Price(input=2.0, output=3.0, cached=0.2)
    assert price.cost(1_000_000, 0, 0) == pytest.approx(2.0)
    assert price.cost(1_000_000, 1_000_000, 500_000) == pytest.approx(1.0 + 0.1 + 3.0)
    assert Price(2.0, 8.0).cost(1_000_000, 0, 1_000_000) == pytest.approx(2.0)  # no cached rate: as input
    assert cost_text(0.64) == "¥0.6400" and cost_text(12.345) == "¥12.35" and cost_text(None) is None


def settings(tmp_path, config: dict | None = None, model: str = "m"):
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    return load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path), "PAICLI_API_KEY": "k",
                                    "PAICLI_BASE_URL": "http://127.0.0.1:1/v1", "PAICLI_MODEL": model})


def test_config_json_adds_and_overrides_prices_and_unknown_models_have_none(tmp_path):
    assert settings(tmp_path).price() is None
    assert settings(tmp_path, model="deepseek-chat").price() == Price(2.0, 3.0, 0.2)
    s = settings(tmp_path, {"prices": {"m": {"input": 1, "output": 4}, "deepseek-chat": {"input": 9, "output": 9}}})
    assert s.price() == Price(1.0, 4.0) and s.price("deepseek-chat") == Price(9.0, 9.0)


@pytest.mark.parametrize("table", [[1, 2], {"m": {"input": 1}}, {"m": {"input": -1, "output": 1}},
                                   {"m": {"input": True, "output": 1}}])
def test_a_bad_price_entry_is_a_config_error(tmp_path, table):
    with pytest.raises(ConfigError, match="prices"):
        settings(tmp_path, {"prices": table})
