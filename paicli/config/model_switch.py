"""``/model <provider>/<model>`` and ``/model <model>``: the settings of another model (issue 39).

A switch changes the endpoint, the key and the model together, and everything that follows the
model: the window (so every compaction threshold, reference b), the light model unless the user
named one for this provider, the auto reviewer's model (reference v.2: it follows the session's
model unless PAICLI_AUTO_CLASSIFIER_MODEL names one for the same provider) and the prices. The
session then rebuilds its clients and drops session-memory summaries (``paicli.run.session``).

A target is ``<provider>/<model>`` when the part before the first ``/`` is a catalog provider;
anything else is a model id on the current endpoint (ids such as ``Qwen/Qwen3-8B`` stay whole).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from paicli.config.catalog import Catalog, ProviderInfo
from paicli.config.feature_settings import ConfigError

Settings = Any  # paicli.config.settings.Settings (which does not import this module)


def split_target(catalog: Catalog, target: str, current: str) -> tuple[str, str]:
    """(provider, model) of what ``/model`` was given."""
    head, slash, rest = target.strip().partition("/")
    if slash and catalog.get(head) is not None:
        return head.lower(), rest.strip() or catalog.get(head).model  # type: ignore[union-attr]
    return current, target.strip()


def switched(settings: Settings, target: str) -> Settings:
    """``settings`` for ``target``; a ``ConfigError`` naming the fix when its provider has no key."""
    name, model = split_target(settings.catalog, target, settings.provider)
    if not model:
        raise ConfigError("❌ 用法: /model <模型> 或 /model <服务商>/<模型>（/model list 查看可选模型）")
    same = name == settings.provider
    provider = settings.catalog.get(name)
    info = settings.catalog.model_info(name, model)
    if same:
        key, base_url = settings.api_key, settings.base_url
    else:
        key, base_url = provider_key(settings, provider), provider.base_url  # type: ignore[union-attr]
    light = settings.light_model if same and settings.light_explicit else (
        (provider.light_model if provider and not same else None) or model)
    return replace(settings, provider=name, model=model, base_url=base_url, api_key=key,
                   context_window=info.window, window_known=info.known, light_model=light,
                   light_explicit=same and settings.light_explicit,
                   review_model=settings.review_model if same else "")


def provider_key(settings: Settings, provider: ProviderInfo | None) -> str:
    assert provider is not None  # another provider is always a catalog one
    key = provider.api_key or settings.keys.get(provider.key_env)
    if not key:
        raise ConfigError(f"❌ 没有 {provider.name} 的 API key：设置环境变量 {provider.key_env}，或在 "
                          f"{settings.home / 'config.json'} 的 providers.{provider.name}.api_key 中填写")
    return key


def window_notice(settings: Settings) -> str | None:
    """The one line an unknown model gets (issue 39: "say so once")."""
    if settings.window_known:
        return None
    return (f"ℹ️ 模型目录中没有 {settings.model}，按默认上下文窗口 {settings.context_window:,} tokens 计算压缩阈值；"
            f"用 /model add {settings.model} --window <tokens> 登记它的窗口")
