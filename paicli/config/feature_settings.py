"""The feature settings (reference j–o, s.3, t, v.7, x), parsed for ``paicli.config.settings``.

``get`` is the settings loader's lookup (environment > ``.env`` > ``config.json``). Each
setting is declared once, in the options class its layer uses (``CompactionOptions``,
``BudgetOptions``, ``MemoryOptions``); this module only builds those objects.

Every on/off setting goes through ``flag``: the reference's words turn it off
(``false|0|no|off``) or on (``true|1|yes|on``); anything else is a one-line ``ConfigError``
naming the setting, because silently keeping the default hides a typo like ``of``. Numbers the
reference says to tolerate keep its defaults instead of failing: a stale-day count that does
not parse gives 30, a conflict threshold outside (0, 1] gives 0.8, a budget that is not a
positive whole number is unlimited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from paicli.codeindex.options import AUTO_INDEX_MAX_FILES, DEFAULT_MAX_FILE_BYTES, CodeIndexOptions, EmbeddingOptions
from paicli.memory.errors import PaicliError
from paicli.memory.longterm.config import MemoryOptions, parse_stale_days, parse_threshold
from paicli.nodes.core.options import BudgetOptions, CompactionOptions
from paicli.tools.base import SearchService
from paicli.tools.snapshots.options import DEFAULT_KEEP, DEFAULT_MAX_FILE, DEFAULT_MAX_SNAPSHOT, MiB, SnapshotOptions

Get = Callable[[str], "str | None"]
OFF_WORDS = frozenset({"false", "0", "no", "off"})  # reference (e, n.1, o.1, x)
ON_WORDS = frozenset({"true", "1", "yes", "on"})


class ConfigError(PaicliError):
    """Settings the user has to fix (missing key, bad number, unknown provider)."""


@dataclass(frozen=True)
class MemorySettings:
    options: MemoryOptions = MemoryOptions()  # threshold (l), staleness (m), jieba's cache
    auto_extract: bool = True  # PAICLI_MEMORY_AUTO_EXTRACT_ENABLED (n.1): unset means on
    external_guard: bool = True  # PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT (o.1): default on
    enrich: bool = True  # PAICLI_MEMORY_SEARCH_TERMS_ENABLED (issue 16): light-model search terms


@dataclass(frozen=True)
class WebSettings:
    searxng_url: str | None = None  # PAICLI_SEARXNG_URL: web_search's endpoint
    allow_hosts: tuple[str, ...] = ()  # PAICLI_WEB_ALLOW_HOSTS: may be private or loopback
    audit_dir: Path | None = None  # PAICLI_AUDIT_DIR (v.7); None: $PAICLI_HOME/audit
    search: SearchService | None = None  # web_search's back end (paicli.config.search_settings); None: no web_search


FLAG_SETTINGS = {  # every on/off setting and its default
    "PAICLI_SESSION_MEMORY_COMPACTION_ENABLED": False,
    "PAICLI_TOOL_OFFLOAD_ENABLED": True,
    "PAICLI_TOOL_RESULT_CLEARING_ENABLED": True,
    "PAICLI_MEMORY_AUTO_EXTRACT_ENABLED": True,
    "PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT": True,
    "PAICLI_MEMORY_SEARCH_TERMS_ENABLED": True,
}


def parse_flag(raw: str | None, default: bool, name: str) -> bool:
    """The one reading of an on/off setting; unset or blank keeps ``default``."""
    word = (raw or "").strip().lower()
    if not word:
        return default
    if word in ON_WORDS:
        return True
    if word in OFF_WORDS:
        return False
    raise ConfigError(f"{name} 只能是 true/false、1/0、yes/no、on/off 之一，当前为 '{raw}'")


def flag(get: Get, name: str) -> bool:
    return parse_flag(get(name), FLAG_SETTINGS[name], name)


def number(get: Get, name: str, default: int) -> int:
    raw = get(name)
    if raw is None:
        return default
    try:
        return int(raw.replace("_", ""))
    except ValueError:
        raise ConfigError(f"{name} 必须是整数，当前为 '{raw}'") from None


def user_name(get: Get) -> str | None:
    """``PAICLI_USER`` (issue 35): whose global memories a database holds; unset or blank: the OS
    user's (``paicli.memory.longterm.store_entries.os_user``). One line names a value that cannot be a name."""
    raw = get("PAICLI_USER")
    name = (raw or "").strip()
    if name and (len(name) > 128 or any(not c.isprintable() for c in name)):
        raise ConfigError("PAICLI_USER 必须是不超过 128 个可打印字符的用户名")
    return name or None


def memory_settings(get: Get, cache_dir: Path) -> MemorySettings:
    options = MemoryOptions(conflict_threshold=parse_threshold(get("PAICLI_MEMORY_CONFLICT_THRESHOLD")),
                            stale_days=parse_stale_days(get("PAICLI_MEMORY_STALE_DAYS")), cache_dir=cache_dir,
                            user=user_name(get))
    return MemorySettings(options=options, auto_extract=flag(get, "PAICLI_MEMORY_AUTO_EXTRACT_ENABLED"),
                       external_guard=flag(get, "PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT"),
                       enrich=flag(get, "PAICLI_MEMORY_SEARCH_TERMS_ENABLED"))


def compaction_options(get: Get) -> CompactionOptions:
    exclude = get("PAICLI_TOOL_RESULT_CLEARING_EXCLUDE_TOOLS") or ""
    return CompactionOptions(
        session_memory=flag(get, "PAICLI_SESSION_MEMORY_COMPACTION_ENABLED"),
        offload=flag(get, "PAICLI_TOOL_OFFLOAD_ENABLED"),
        offload_threshold=number(get, "PAICLI_TOOL_OFFLOAD_THRESHOLD_CHARS", 32_000),
        clearing=flag(get, "PAICLI_TOOL_RESULT_CLEARING_ENABLED"),
        clearing_trigger=number(get, "PAICLI_TOOL_RESULT_CLEARING_TRIGGER_TOKENS", 0),
        clearing_keep=number(get, "PAICLI_TOOL_RESULT_CLEARING_KEEP", 3),
        clearing_exclude=frozenset(t.strip() for t in exclude.split(",") if t.strip()),
    )


def budget_options(get: Get) -> BudgetOptions:
    """reference (s.3): only positive whole numbers count; anything else keeps the default."""

    def positive(name: str) -> int | None:
        raw = get(name)
        return int(raw) if raw and raw.isdigit() and int(raw) > 0 else None

    window = positive("PAICLI_REACT_STAGNATION_WINDOW")
    return BudgetOptions(token_budget=positive("PAICLI_REACT_TOKEN_BUDGET"),
                         stagnation_window=window if window and window >= 2 else 5,
                         hard_max_iterations=positive("PAICLI_REACT_HARD_MAX_ITERATIONS"))


def web_settings(get: Get) -> WebSettings:
    hosts = get("PAICLI_WEB_ALLOW_HOSTS") or ""
    audit = get("PAICLI_AUDIT_DIR")
    return WebSettings(
        searxng_url=get("PAICLI_SEARXNG_URL"),
        allow_hosts=tuple(h.strip().lower() for h in hosts.split(",") if h.strip()),
        audit_dir=Path(audit).expanduser() if audit else None,
    )


def snapshot_options(get: Get, env_get: Get) -> SnapshotOptions:
    """Turn snapshots (paicli.tools.snapshots). ``env_get`` reads the process environment only:
    PAICLI_ALLOW_REVERT is a person's choice for their scripts, never a project's ``.env``."""

    def positive(name: str, default: int) -> int:
        value = number(get, name, default)
        if value <= 0:
            raise ConfigError(f"{name} 必须是正整数，当前为 {value}")
        return value

    return SnapshotOptions(
        keep=positive("PAICLI_SNAPSHOT_KEEP", DEFAULT_KEEP),
        max_file_bytes=positive("PAICLI_SNAPSHOT_MAX_FILE_MB", DEFAULT_MAX_FILE // MiB) * MiB,
        max_snapshot_bytes=positive("PAICLI_SNAPSHOT_MAX_MB", DEFAULT_MAX_SNAPSHOT // MiB) * MiB,
        allow_revert=parse_flag(env_get("PAICLI_ALLOW_REVERT"), False, "PAICLI_ALLOW_REVERT"),
    )


def code_index_options(get: Get, chat_url: str, chat_key: str | None) -> CodeIndexOptions:
    """Issue 37: the code index's limits and its embeddings endpoint. ``PAICLI_EMBEDDING_URL=provider``
    uses the chat endpoint and its key; a URL and no model is a mistake to fix. The URL and the
    key are guard settings (``paicli.config.credentials``): a project's .env cannot set them."""
    url = (get("PAICLI_EMBEDDING_URL") or "").strip()
    model = (get("PAICLI_EMBEDDING_MODEL") or "").strip()
    provider = url.lower() == "provider"
    if url and not model:
        raise ConfigError("设置了 PAICLI_EMBEDDING_URL 却没有 PAICLI_EMBEDDING_MODEL：请同时设置向量模型名，"
                          "例如 nomic-embed-text 或 embedding-3")
    if url and not provider and not url.startswith(("http://", "https://")):
        raise ConfigError(f"PAICLI_EMBEDDING_URL 必须以 http:// 或 https:// 开头，或写 provider，当前为 '{url}'")
    key = get("PAICLI_EMBEDDING_API_KEY") or (chat_key if provider else None) or ""
    embedding = EmbeddingOptions(url=chat_url if provider else url, model=model, api_key=key,
                                 input_type=parse_flag(get("PAICLI_EMBEDDING_INPUT_TYPE"), False,
                                                       "PAICLI_EMBEDDING_INPUT_TYPE")) if url else EmbeddingOptions()
    max_bytes = number(get, "PAICLI_CODE_INDEX_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES)
    auto = number(get, "PAICLI_CODE_INDEX_AUTO_MAX_FILES", AUTO_INDEX_MAX_FILES)
    if max_bytes <= 0 or auto < 0:
        raise ConfigError("PAICLI_CODE_INDEX_MAX_FILE_BYTES 必须是正整数，PAICLI_CODE_INDEX_AUTO_MAX_FILES 不能为负")
    return CodeIndexOptions(embedding=embedding, max_file_bytes=max_bytes, auto_index_max_files=auto)
