"""``/model`` (reference u.1: ``list``, ``info``, ``refresh`` and ``add`` are management verbs, anything
else is a model to switch to) and ``/config provider`` (issue 39).

- ``/model`` and ``/model info``: the current model, what the catalog says of it, its thresholds.
- ``/model list``: every catalog provider's models, then what the current endpoint's
  ``GET /models`` reports (asked once per process; ``/model refresh`` asks again).
- ``/model add [<服务商>/]<模型> [--window N] [--output N] [--vision] [--reasoning] [--price 入/出[/缓存]]``:
  the entry goes into ``$PAICLI_HOME/config.json`` (``"providers"``) and counts at once.
- ``/model <模型>`` and ``/model <服务商>/<模型>``: switch live (``paicli.config.model_switch``).
- ``/config provider``: the providers and whether each has a key; ``/config provider <名称>``
  makes one the default in config.json and switches to its default model.

Model ids an endpoint reports are a stranger's text: each is flattened to one visible line.
"""

from __future__ import annotations

from typing import Any

from paicli.config.feature_settings import ConfigError
from paicli.ui.terminal import visible

VERBS = ("list", "info", "refresh", "add")
USAGE_ADD = ("❌ 用法: /model add [<服务商>/]<模型> [--window N] [--output N] [--vision] [--reasoning] "
             "[--price 输入/输出[/缓存]]，例如 /model add deepseek/deepseek-v4-flash --window 1000000")
ENDPOINT_TIMEOUT = 10.0  # seconds for GET /models
MAX_LISTED = 60  # endpoint models shown
_endpoint_models: dict[str, list[str]] = {}  # base URL -> ids it reported (this process)


async def model(app: Any, payload: str, say: Any) -> None:
    verb, _, rest = payload.partition(" ")
    verb = verb.lower()
    if not payload or verb == "info":
        info(app, say)
    elif verb == "list":
        await listing(app, say, refresh=False)
    elif verb == "refresh":
        await listing(app, say, refresh=True)
    elif verb == "add":
        add(rest.strip(), app, say)
    else:
        switch(payload, app, say)


def info(app: Any, say: Any) -> None:
    from paicli.memory.context.profile import ContextProfile

    s = app.settings
    m = s.model_info
    say(f"🤖 当前模型: {s.model} ({s.provider})")
    output = f"{m.max_output:,}" if m.max_output else "未公布"
    say(f"   端点: {s.base_url}   上下文窗口: {s.context_window:,} tokens{'' if s.window_known else '（默认值）'}"
        f"   单次输出上限: {output}")
    say(f"   推理过程: {'有' if m.reasoning else '无'}   图片输入: {'支持' if m.vision else '不支持'}   价格: {price_text(s.price())}")
    profile = ContextProfile.from_window(s.context_window, prompt_cache=s.prompt_cache)
    say(f"   上下文策略: {profile.summary()}")
    say(f"   轻量模型: {s.light_model}   审查模型: {s.review_model or s.model + '（会话模型）'}")
    say("   /model list 查看可选模型；/model <模型> 或 /model <服务商>/<模型> 切换")


def price_text(price: Any) -> str:
    if price is None:
        return "未知"
    cached = f" / 缓存命中 {price.cached:g}" if price.cached is not None else ""
    return f"输入 {price.input:g} / 输出 {price.output:g}{cached} 元每百万 tokens"


def _model_line(model: Any, current: bool) -> str:
    marks = [f"{model.window // 1000:,}K" if model.window < 1_000_000 else f"{model.window / 1_000_000:g}M"]
    marks += ["推理"] if model.reasoning else []
    marks += ["图片"] if model.vision else []
    marks += [f"¥{model.price.input:g}/{model.price.output:g}"] if model.price else []
    return f"   {'▶' if current else ' '} {model.id:<24} {' · '.join(marks)}"


async def listing(app: Any, say: Any, refresh: bool) -> None:
    s = app.settings
    say("📚 模型目录（/model <服务商>/<模型> 切换；窗口决定压缩阈值）：")
    for name, provider in sorted(s.catalog.providers.items(), key=lambda item: item[0] != s.provider):
        has_key = bool(provider.api_key or s.keys.get(provider.key_env) or name == s.provider and s.api_key)
        say(f"  {name} · {provider.label} · {provider.key_env}{'' if has_key else '（未设置 key）'}")
        for entry in provider.models.values():
            say(_model_line(entry, name == s.provider and entry.id == s.model))
    if s.catalog.custom:
        say("  custom · PAICLI_BASE_URL 的端点（/model add 登记）")
    for entry in s.catalog.custom.values():
        say(_model_line(entry, s.provider == "custom" and entry.id == s.model))
    try:
        ids = await endpoint_models(s, refresh)
    except ConfigError as exc:
        say(f"⚠️ {exc}")
        return
    say(f"🔌 端点 {s.base_url} 报告的模型（{len(ids)} 个）：" if ids else f"📭 端点 {s.base_url} 没有报告模型")
    for model_id in ids[:MAX_LISTED]:
        listed = s.catalog.get(s.provider) is not None and model_id in s.catalog.get(s.provider).models
        listed = listed or s.catalog.find(model_id) is not None
        say(f"   {model_id}" + ("" if listed else "（目录中没有：按默认窗口 128K）"))
    if len(ids) > MAX_LISTED:
        say(f"   …另有 {len(ids) - MAX_LISTED} 个")


async def endpoint_models(settings: Any, refresh: bool) -> list[str]:
    """The ids ``GET <base>/models`` reports (cached for the process unless ``refresh``)."""
    if not refresh and settings.base_url in _endpoint_models:
        return _endpoint_models[settings.base_url]
    import httpx

    url = settings.base_url.rstrip("/") + "/models"
    try:
        async with httpx.AsyncClient(timeout=ENDPOINT_TIMEOUT) as client:
            response = await client.get(url, headers={"Authorization": f"Bearer {settings.api_key or ''}"})
    except httpx.HTTPError as exc:
        raise ConfigError(f"无法从 {url} 读取模型列表：{type(exc).__name__}") from None
    if not response.is_success:
        raise ConfigError(f"无法从 {url} 读取模型列表：HTTP {response.status_code}")
    try:
        data = response.json().get("data")
    except (ValueError, AttributeError):
        data = None
    if not isinstance(data, list):
        raise ConfigError(f"{url} 返回的不是 OpenAI 格式的模型列表")
    ids = [flat(item.get("id")) for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)]
    _endpoint_models[settings.base_url] = [i for i in ids if i]
    return _endpoint_models[settings.base_url]


def flat(text: str, limit: int = 120) -> str:
    line = " ".join(visible(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def switch(target: str, app: Any, say: Any) -> None:
    from paicli.config.model_switch import window_notice

    try:
        s = app.switch_model(target)
    except ConfigError as exc:
        say.fail(str(exc))
        return
    say(f"✅ 已切换模型: {s.model} ({s.provider})   上下文窗口: {s.context_window:,} tokens")
    if (note := window_notice(s)) is not None:
        say(note)


def add(payload: str, app: Any, say: Any) -> None:
    from paicli.config.model_switch import split_target

    try:
        target, fields = parse_add(payload)
    except ValueError:
        say.fail(USAGE_ADD)
        return
    s = app.settings
    provider, model_id = split_target(s.catalog, target, s.provider)
    from paicli.config.config_file import update_config

    def change(data: dict[str, Any]) -> None:
        providers = data.setdefault("providers", {})
        entry = providers.setdefault(provider, {}).setdefault("models", {})
        entry[model_id] = {**(entry.get(model_id) or {}), **fields}

    try:
        path = update_config(s.home, change)
        fresh = reloaded(app)
    except ConfigError as exc:
        say.fail(str(exc))
        return
    entry = (fresh.catalog.get(provider).models if fresh.catalog.get(provider) else fresh.catalog.custom)[model_id]
    say(f"✅ 已登记模型 {provider}/{model_id}（窗口 {entry.window:,} tokens）到 {path}")


def parse_add(payload: str) -> tuple[str, dict[str, Any]]:
    words = payload.split()
    if not words or words[0].startswith("--"):
        raise ValueError
    fields: dict[str, Any] = {}
    rest = iter(words[1:])
    for word in rest:
        if word in ("--vision", "--reasoning"):
            fields[word[2:]] = True
        elif word in ("--window", "--output"):
            value = int(next(rest).replace("_", "").replace(",", ""))
            if value <= 0:
                raise ValueError
            fields["window" if word == "--window" else "max_output"] = value
        elif word == "--price":
            numbers = [float(n) for n in next(rest).split("/")]
            if len(numbers) not in (2, 3) or min(numbers) < 0:
                raise ValueError
            fields["price"] = dict(zip(("input", "output", "cached"), numbers))
        else:
            raise ValueError
    return words[0], fields


def reloaded(app: Any) -> Any:
    """The settings read again (config.json changed), on the model in use now."""
    from dataclasses import replace

    from paicli.config.settings import load_settings

    s = app.settings
    fresh = load_settings(s.project_root)
    info = fresh.catalog.model_info(s.provider, s.model)
    current = replace(s, catalog=fresh.catalog, prices=fresh.prices)
    if info.known:
        current = replace(current, context_window=info.window, window_known=True)
    app.replace_settings(current)
    return current


def config_provider(payload: str, app: Any, say: Any) -> None:
    """``/config provider [名称]``."""
    name = payload.strip().lower()
    s = app.settings
    if not name:
        say("🏷️ 服务商（/config provider <名称> 设为默认并切换；/model <服务商>/<模型> 只切换本次会话）：")
        for key, provider in s.catalog.providers.items():
            has_key = bool(provider.api_key or s.keys.get(provider.key_env) or key == s.provider and s.api_key)
            mark = "▶" if key == s.provider else " "
            say(f"  {mark} {key:<11} {provider.label}  {provider.base_url}  {provider.key_env}: "
                f"{'已设置' if has_key else '未设置'}  默认模型 {provider.model}")
        return
    provider = s.catalog.get(name)
    if provider is None:
        say.fail(f"❌ 未知的服务商: {flat(name, 40)}（可选: {'、'.join(s.catalog.providers)}）")
        return
    try:
        switched = app.switch_model(f"{name}/{provider.model}")
    except ConfigError as exc:
        say.fail(str(exc))
        return
    from paicli.config.config_file import update_config

    def change(data: dict[str, Any]) -> None:
        data["provider"] = name
        data.pop("model", None)  # the old provider's model id means nothing at the new one
        data.pop("base_url", None)

    try:
        path = update_config(s.home, change)
    except ConfigError as exc:
        say.fail(str(exc))
        return
    say(f"✅ 默认服务商已设为 {name}（写入 {path}），当前模型: {switched.model}   上下文窗口: {switched.context_window:,} tokens")
