"""Where the API key may go, and who may see it (issue 10, items 5 and 8).

A project's `.env` arrives with any cloned repository, so it is written by strangers. It may
set harmless things (the model id, compaction settings) and it may bring its own key, but it
may not pick the endpoint for a key that came from somewhere else (the environment or
`$PAICLI_HOME/config.json`): that would send the user's key to a server the project chose.

Pure functions over the already-read sources; ``paicli.config.settings`` reads them and raises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Settings that decide which server receives the key: the base URL, and the provider, which
# picks a preset's URL and which key variable is read. (PAICLI_LIGHT_MODEL is only a model id
# on the same endpoint; PAICLI_SEARXNG_URL receives search queries but never a key.)
ENDPOINT_SETTINGS = ("PAICLI_BASE_URL", "PAICLI_PROVIDER")
KEY_SETTING = "PAICLI_API_KEY"

# Settings that move a guard or decide where the user's data goes, so a project may not set
# them at all: which private hosts web_fetch may reach, the external-content guard on memory
# writes, where long-term memory and the audit log live (a file the project controls would
# become "memories" injected into every turn), which server receives search queries, which
# web pages may drive `paicli studio`, which database holds sessions and memory, the approval
# level a session starts at and the model that reviews commands at the `default` level, and
# which embeddings server the code index sends the project's code to.
GUARD_SETTINGS = ("PAICLI_WEB_ALLOW_HOSTS", "PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT", "PAICLI_MEMORY_DIR",
                  "PAICLI_AUDIT_DIR", "PAICLI_SEARXNG_URL", "PAICLI_STUDIO_ORIGINS", "PAICLI_DATABASE_URL",
                  "PAICLI_HITL", "PAICLI_AUTO_CLASSIFIER_MODEL",
                  # issue 39: which search service receives the queries (and, for 智谱, the key)
                  "PAICLI_SEARCH_PROVIDER", "PAICLI_SERPAPI_URL", "PAICLI_ZHIPU_SEARCH_URL",
                  "PAICLI_EMBEDDING_URL", "PAICLI_EMBEDDING_API_KEY",  # where the code index sends code (issue 37)
                  "PAICLI_USER")  # whose personal global memories (issue 35)

ENVIRONMENT, DOTENV, CONFIG = "the environment", ".env", "config.json"
# The refusal names the key's source in Chinese (a space before a Latin name, as in running text).
_WHERE = {ENVIRONMENT: "环境变量", DOTENV: "项目的 .env", CONFIG: " config.json"}


@dataclass(frozen=True)
class Sources:
    """The three places a setting can come from, as read (no precedence applied yet)."""

    env: Mapping[str, str]
    dotenv: Mapping[str, str]
    config: Mapping[str, str]

    def origin(self, name: str) -> str | None:
        """Which source the merged value of ``name`` comes from (highest precedence holding it).

        Mirrors the merge in ``load_settings``: a variable present but empty still wins.
        """
        for label, values in ((ENVIRONMENT, self.env), (DOTENV, self.dotenv), (CONFIG, self.config)):
            if name in values:
                return label
        return None


def key_variable(get: Callable[[str], str | None], preset_key_env: str | None) -> str | None:
    """The variable the API key is read from: PAICLI_API_KEY, else the preset's own."""
    for name in (KEY_SETTING, preset_key_env):
        if name and get(name):
            return name
    return None


def endpoint_refusal(sources: Sources, key_name: str | None, dotenv_path: Path) -> str | None:
    """The one-line reason to refuse, or None: a project `.env` chose the endpoint while the key
    that would be sent there comes from elsewhere."""
    if key_name is None or sources.origin(key_name) == DOTENV:
        return None  # no key to leak, or the project's own key
    for setting in ENDPOINT_SETTINGS:
        if sources.origin(setting) == DOTENV:
            where = _WHERE.get(sources.origin(key_name) or "", "其他地方")
            return (f"{dotenv_path} 设置了 {setting}，但 API key（{key_name}）来自{where}：项目的 .env 只能连同"
                    f"自己的 {KEY_SETTING} 一起选择端点；请从该文件删除 {setting}，或改在环境变量或 config.json 中设置")
    return None


def guard_refusal(sources: Sources, dotenv_path: Path) -> str | None:
    """The one-line reason to refuse, or None: a project `.env` sets a guard setting."""
    for setting in GUARD_SETTINGS:
        if setting in sources.dotenv:
            return (f"{dotenv_path} 设置了 {setting}，而项目不能选择它（它会削弱防护或决定你的数据去向）；"
                    f"请从该文件删除它，或改在环境变量或 config.json 中设置")
    return None


def secret_variables(env: Mapping[str, str], key_settings: Iterable[str], key: str | None) -> frozenset[str]:
    """Environment variables a command must not see: every key variable settings reads, and
    any other variable that holds the active key."""
    same_value = {name for name, value in env.items() if key and value.strip() == key}
    return frozenset({KEY_SETTING, *key_settings, *same_value})
