"""Staleness (reference m): the 30-day rule and linked source files (Q13)."""

import os
from datetime import UTC, datetime, timedelta

import pytest

from paicli.memory.longterm.entry import Entry, new_fact
from paicli.memory.longterm.config import parse_stale_days
from paicli.memory.longterm.staleness import Stale, stale_by_age, stale_by_files, staleness

VERIFIED = datetime(2026, 9, 1, tzinfo=UTC)


def test_stale_strictly_after_thirty_days():
    entry = new_fact("x", scope="global", now=VERIFIED)
    assert not stale_by_age(entry, VERIFIED + timedelta(days=30))
    assert stale_by_age(entry, VERIFIED + timedelta(days=30, microseconds=1))


def test_age_counts_from_last_verification_not_the_write():
    entry = new_fact("x", scope="global", now=VERIFIED - timedelta(days=90))
    assert not stale_by_age(entry.with_last_verified_at(VERIFIED), VERIFIED + timedelta(days=1))


def test_configured_days_and_disabling():
    entry = new_fact("x", scope="global", now=VERIFIED)
    assert stale_by_age(entry, VERIFIED + timedelta(days=8), days=7)
    assert not stale_by_age(entry, VERIFIED + timedelta(days=9999), days=0)


@pytest.mark.parametrize("text, days", [("7", 7), ("0", 0), ("-3", -3), ("x", 30), (None, 30), ("", 30)])
def test_parse_stale_days(text, days):
    assert parse_stale_days(text) == days


def _linked(tmp_path, *paths):
    return new_fact("x", project=str(tmp_path), now=VERIFIED, extra={"source_files": ",".join(paths)})


def _touch(path, when):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (when.timestamp(), when.timestamp()))


def test_source_file_changed_after_verification_is_stale(tmp_path):
    _touch(tmp_path / "pom.xml", VERIFIED - timedelta(days=1))
    _touch(tmp_path / "src/App.java", VERIFIED + timedelta(hours=1))
    assert not stale_by_files(_linked(tmp_path, "pom.xml"))
    assert stale_by_files(_linked(tmp_path, "pom.xml", "src/App.java"))
    assert staleness(_linked(tmp_path, "src/App.java"), VERIFIED + timedelta(days=1)) is Stale.FILES


def test_verifying_again_clears_the_file_mark(tmp_path):
    _touch(tmp_path / "pom.xml", VERIFIED + timedelta(hours=1))
    entry = _linked(tmp_path, "pom.xml").with_last_verified_at(VERIFIED + timedelta(hours=2))
    assert not stale_by_files(entry)


def test_a_deleted_linked_file_counts_as_changed(tmp_path):
    assert stale_by_files(_linked(tmp_path, "gone.txt"))


def test_global_entries_without_a_root_skip_the_file_rule(tmp_path):
    entry = Entry("fact-1", "x", metadata={"source_files": "gone.txt"})
    assert not stale_by_files(entry)
    assert stale_by_files(entry, root=tmp_path)


def test_age_wins_when_both_rules_apply(tmp_path):
    assert staleness(_linked(tmp_path, "gone.txt"), VERIFIED + timedelta(days=31)) is Stale.AGE
    assert staleness(new_fact("x", scope="global", now=VERIFIED), VERIFIED) is None
