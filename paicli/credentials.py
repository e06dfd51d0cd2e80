"""Where the API key may go, and who may see it (issue 10, items 5 and 8).

A project's `.env` arrives with any cloned repository, so it is written by strangers. It may
set harmless things (the model id, compaction settings) and it may bring its own key, but it
may not pick the endpoint for a key that came from somewhere else (the environment or
`$PAICLI_HOME/config.json`): that would send the user's key to a server the project chose.

Pure functions over the already-read sources; ``paicli.settings`` reads them and raises.
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
# level a session starts at and the model that reviews commands at the `default` level.
GUARD_SETTINGS = ("PAICLI_WEB_ALLOW_HOSTS", "PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT", "PAICLI_MEMORY_DIR",
                  "PAICLI_AUDIT_DIR", "PAICLI_SEARXNG_URL", "PAICLI_STUDIO_ORIGINS", "PAICLI_DATABASE_URL",
                  "PAICLI_HITL", "PAICLI_AUTO_CLASSIFIER_MODEL")

ENVIRONMENT, DOTENV, CONFIG = "the environment", ".env", "config.json"


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
            return (f"{dotenv_path} sets {setting}, but the API key ({key_name}) comes from "
                    f"{sources.origin(key_name)}: a project's .env may choose the endpoint only together "
                    f"with its own {KEY_SETTING}; remove {setting} from it, or set it in the environment "
                    f"or in config.json")
    return None


def guard_refusal(sources: Sources, dotenv_path: Path) -> str | None:
    """The one-line reason to refuse, or None: a project `.env` sets a guard setting."""
    for setting in GUARD_SETTINGS:
        if setting in sources.dotenv:
            return (f"{dotenv_path} sets {setting}, which a project may not choose (it weakens a guard or "
                    f"decides where your data goes); remove it from that file, or set it in the environment "
                    f"or in config.json")
    return None


def secret_variables(env: Mapping[str, str], key_settings: Iterable[str], key: str | None) -> frozenset[str]:
    """Environment variables a command must not see: every key variable settings reads, and
    any other variable that holds the active key."""
    same_value = {name for name, value in env.items() if key and value.strip() == key}
    return frozenset({KEY_SETTING, *key_settings, *same_value})
