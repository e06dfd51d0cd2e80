"""The provider and model catalog (issue 39): which providers paicli knows, where each one is, which
variable holds its key, and what each model can do (window, output limit, reasoning, vision, price).

The catalog is data, ``paicli/data/models.json``, shipped with the package. ``$PAICLI_HOME/config.json``
adds or overrides entries under ``"providers"`` with the same shape, field by field::

    {"providers": {"deepseek": {"models": {"deepseek-v4-flash": {"window": 1000000}}},
                   "mine": {"base_url": "https://llm.example.com/v1", "key_env": "MINE_API_KEY",
                            "model": "m-1", "models": {"m-1": {"window": 64000, "vision": true}}}}}

A model's window sets every compaction threshold (reference b); one the catalog does not list gets
the default window (128K) and the user is told so once. Pure data and parsing: ``paicli.config.settings``
reads the files and raises.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from paicli.config.prices import Price, price_problem

DEFAULT_WINDOW = 128_000  # reference (b): when nothing is known of the model
SEARCH_KINDS = ("zhipu", "serpapi", "searxng")  # web_search's back ends (tools/builtin/search_providers.py)


class CatalogError(ValueError):
    """An entry of config.json's "providers" the catalog cannot use; the message names it."""


@dataclass(frozen=True)
class ModelInfo:
    id: str
    window: int = DEFAULT_WINDOW
    max_output: int | None = None  # tokens one response may hold; None: not published
    reasoning: bool = False  # streams reasoning_content (shown folded, replayed on tool calls)
    vision: bool = False  # takes image_url parts
    price: Price | None = None  # CNY per million tokens
    known: bool = True  # False: not in the catalog (default window, said once)


@dataclass(frozen=True)
class SearchEndpoint:
    """A web search service the provider runs for its own key (``kind`` in SEARCH_KINDS)."""

    kind: str
    url: str


@dataclass(frozen=True)
class ProviderInfo:
    name: str
    base_url: str
    key_env: str
    model: str  # the default model
    label: str = ""
    prompt_cache: str = "none"  # reference (b): display only
    thinking_off: dict[str, Any] | None = None  # extra_body that turns thinking off (the reviewer, v.2)
    search: SearchEndpoint | None = None
    light_model: str | None = None  # the provider's light model; None: the session's model
    api_key: str | None = None  # config.json only: the key for this provider
    models: dict[str, ModelInfo] = field(default_factory=dict)

    def model_info(self, model: str) -> ModelInfo:
        return self.models.get(model) or ModelInfo(model, known=False)


CUSTOM = "custom"  # an endpoint given only by PAICLI_BASE_URL: its models live under "providers"."custom"


@dataclass(frozen=True)
class Catalog:
    providers: dict[str, ProviderInfo]
    custom: dict[str, ModelInfo] = field(default_factory=dict)  # models of a custom endpoint (/model add)

    def get(self, name: str | None) -> ProviderInfo | None:
        return self.providers.get((name or "").strip().lower())

    def prices(self) -> dict[str, Price]:
        """Every priced model by id (the status bar's table, reference u.4)."""
        models = [*(m for p in self.providers.values() for m in p.models.values()), *self.custom.values()]
        return {m.id: m.price for m in models if m.price}

    def key_variables(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.key_env for p in self.providers.values()))

    def model_info(self, provider: str, model: str) -> ModelInfo:
        """The entry for ``model``: the provider's, else (a custom endpoint) any provider's; an
        unknown one has the default window and ``known=False``."""
        if (info := self.get(provider)) is not None:
            return info.model_info(model)
        return self.find(model) or ModelInfo(model, known=False)

    def find(self, model: str) -> ModelInfo | None:
        """A custom endpoint's model: one added for it, else a model of any provider it serves."""
        if model in self.custom:
            return self.custom[model]
        return next((p.models[model] for p in self.providers.values() if model in p.models), None)


def builtin_document() -> dict[str, Any]:
    text = resources.files("paicli").joinpath("data/models.json").read_text(encoding="utf-8")
    return json.loads(text)


def load_catalog(overrides: Any = None) -> Catalog:
    """The shipped catalog with config.json's ``"providers"`` merged over it (``CatalogError`` on a
    bad entry)."""
    merged = builtin_document()["providers"]
    if overrides is not None:
        if not isinstance(overrides, dict):
            raise CatalogError('"providers" 必须是以服务商名为键的对象')
        merged = merge_providers(merged, overrides)
    custom = merged.pop(CUSTOM, None) or {}
    models = {m: parse_model(m, f, f'"providers"."{CUSTOM}"."models"."{m}"') for m, f in (custom.get("models") or {}).items()}
    return Catalog({name.lower(): parse_provider(name.lower(), body) for name, body in merged.items()}, models)


def merge_providers(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Field by field: a provider's fields over the shipped ones, its models' fields over theirs."""
    merged = {name: dict(body) for name, body in base.items()}
    for name, body in extra.items():
        if not isinstance(body, dict):
            raise CatalogError(f'"providers"."{name}" 必须是对象')
        into = merged.setdefault(name.lower(), {})
        models = dict(into.get("models") or {})
        for model, fields in (body.get("models") or {}).items():
            if not isinstance(fields, dict):
                raise CatalogError(f'"providers"."{name}"."models"."{model}" 必须是对象')
            models[model] = {**(models.get(model) or {}), **fields}
        into.update({k: v for k, v in body.items() if k != "models"}, models=models)
    return merged


def parse_provider(name: str, body: dict[str, Any]) -> ProviderInfo:
    where = f'"providers"."{name}"'
    for key in ("base_url", "key_env", "model"):
        if not isinstance(body.get(key), str) or not body[key].strip():
            raise CatalogError(f'{where} 缺少 "{key}"（字符串）')
    models = {mid: parse_model(mid, fields, f'{where}."models"."{mid}"') for mid, fields in (body.get("models") or {}).items()}
    search = body.get("search")
    if search is not None and (not isinstance(search, dict) or search.get("kind") not in SEARCH_KINDS
                               or not isinstance(search.get("url"), str)):
        raise CatalogError(f'{where}."search" 需要 "kind"（{"、".join(SEARCH_KINDS)} 之一）和 "url"')
    return ProviderInfo(
        name=name, base_url=body["base_url"].strip(), key_env=body["key_env"].strip(), model=body["model"].strip(),
        label=str(body.get("label") or name), prompt_cache=str(body.get("prompt_cache") or "none"),
        thinking_off=body.get("thinking_off") if isinstance(body.get("thinking_off"), dict) else None,
        search=SearchEndpoint(search["kind"], search["url"]) if search else None,
        light_model=body.get("light_model") if isinstance(body.get("light_model"), str) else None,
        api_key=body.get("api_key") if isinstance(body.get("api_key"), str) and body["api_key"].strip() else None,
        models=models,
    )


def parse_model(model: str, fields: dict[str, Any], where: str) -> ModelInfo:
    window = fields.get("window", DEFAULT_WINDOW)
    output = fields.get("max_output")
    for key, value in (("window", window), ("max_output", output)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise CatalogError(f'{where}."{key}" 必须是正整数（token 数）')
    price = fields.get("price")
    if price is not None and (problem := price_problem(price)) is not None:
        raise CatalogError(f'{where}."price" {problem}')
    return ModelInfo(model, window, output, bool(fields.get("reasoning")), bool(fields.get("vision")),
                     None if price is None else Price(float(price["input"]), float(price["output"]),
                                                      None if price.get("cached") is None else float(price["cached"])))
