"""Every on/off setting is read by one parser (paicli.config.feature_settings.parse_flag), from every source."""

import json

import pytest

from paicli.config.feature_settings import FLAG_SETTINGS
from paicli.config.settings import ConfigError, load_settings

# Where each flag lands in Settings.
FIELDS = {
    "PAICLI_SESSION_MEMORY_COMPACTION_ENABLED": lambda s: s.compaction.session_memory,
    "PAICLI_TOOL_OFFLOAD_ENABLED": lambda s: s.compaction.offload,
    "PAICLI_TOOL_RESULT_CLEARING_ENABLED": lambda s: s.compaction.clearing,
    "PAICLI_MEMORY_AUTO_EXTRACT_ENABLED": lambda s: s.memory.auto_extract,
    "PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT": lambda s: s.memory.external_guard,
    "PAICLI_MEMORY_SEARCH_TERMS_ENABLED": lambda s: s.memory.enrich,
}
ON = ["true", "TRUE", "1", "yes", "Yes", "on", " on "]
OFF = ["false", "False", "0", "no", "NO", "off", " off "]
BAD = ["nope", "2", "enabled", "of", "y", "n", "truee"]


def load(tmp_path, **values):
    return load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path / "home"), **values})


def test_the_table_covers_every_flag_setting():
    assert set(FIELDS) == set(FLAG_SETTINGS)


@pytest.mark.parametrize("name", sorted(FIELDS))
@pytest.mark.parametrize("raw", ON)
def test_on_words_turn_every_flag_on(tmp_path, name, raw):
    assert FIELDS[name](load(tmp_path, **{name: raw})) is True


@pytest.mark.parametrize("name", sorted(FIELDS))
@pytest.mark.parametrize("raw", OFF)
def test_off_words_turn_every_flag_off(tmp_path, name, raw):
    assert FIELDS[name](load(tmp_path, **{name: raw})) is False


@pytest.mark.parametrize("name", sorted(FIELDS))
@pytest.mark.parametrize("raw", [None, "", "   "])
def test_unset_or_blank_keeps_the_default(tmp_path, name, raw):
    values = {} if raw is None else {name: raw}
    assert FIELDS[name](load(tmp_path, **values)) is FLAG_SETTINGS[name]


@pytest.mark.parametrize("name", sorted(FIELDS))
@pytest.mark.parametrize("raw", BAD)
def test_any_other_word_is_one_line_naming_the_setting(tmp_path, name, raw):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, **{name: raw})
    message = str(caught.value)
    assert name in message and f"'{raw}'" in message and "\n" not in message


def test_a_flag_from_the_project_dotenv_goes_through_the_same_parser(tmp_path):
    (tmp_path / ".env").write_text("PAICLI_TOOL_OFFLOAD_ENABLED=off\nPAICLI_MEMORY_AUTO_EXTRACT_ENABLED=no\n")
    s = load(tmp_path)
    assert (s.compaction.offload, s.memory.auto_extract) == (False, False)
    (tmp_path / ".env").write_text("PAICLI_MEMORY_AUTO_EXTRACT_ENABLED=nope\n")
    with pytest.raises(ConfigError, match="PAICLI_MEMORY_AUTO_EXTRACT_ENABLED"):
        load(tmp_path)


def test_memory_options_are_built_once_by_settings(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory_dir": str(tmp_path / "mem")}))
    s = load(tmp_path, PAICLI_MEMORY_CONFLICT_THRESHOLD="0.5", PAICLI_MEMORY_STALE_DAYS="7")
    options = s.memory.options
    assert (options.conflict_threshold, options.stale_days, options.cache_dir) == (0.5, 7, home / "cache")
    assert s.memory_dir == tmp_path / "mem"
