"""A checkpoint's fields as changes on its parent's: the body of a ``view_checkpoint`` record.

A checkpoint's channel versions, versions_seen, metadata and header (``v``, ``ts``,
``updated_channels``) mostly repeat its parent's. A *full* record stores them whole
(``checkpoint``, ``channelVersions``, ``versionsSeen``, ``checkpointMetadata``); a *delta* record
stores what changed, as small as it can while staying plain JSON a person can follow:

- ``header``: changed header fields on the parent's, where ``updated_channels`` is taken to be the
  channels the record stores a value for (what LangGraph writes for a step), so a step's header is
  usually just ``{"ts": ...}``;
- ``versions``: ``[[version, channel, ...], ...]``, grouped because a step gives every channel it
  touches the same version; ``[null, channel, ...]`` for channels that are gone;
- ``seen``: per node that ran, the channels it saw at the parent's versions (``["branch:to:x"]``,
  which is what LangGraph records for a task's triggers), or its versions in full, or null (gone);
- ``meta``: changed metadata keys (``{"step": 7}``), ``[set, unset]`` when keys are gone.

Maps are ``{...}`` when nothing was removed and ``[{...}, [removed keys]]`` otherwise. Versions
lose InMemorySaver's zero padding (``pack_version``). Records written before these keys
(``channelVersionsDelta``, ``versionsSeenDelta``, ``checkpointMetadataDelta``) are still read.
Pure functions on plain data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple

_PADDED = re.compile(r"(\d{32})\.(.*)", re.S)  # InMemorySaver's f"{n:032}.{random}" (notes §2.6)


def pack_version(version: Any) -> Any:
    """``"000…0042.0.123"`` → ``[42, "0.123"]``: the zero padding is a third of every checkpoint line."""
    match = _PADDED.fullmatch(version) if type(version) is str else None
    return [int(match[1]), match[2]] if match else version


def unpack_version(version: Any) -> Any:
    return f"{version[0]:032}.{version[1]}" if type(version) is list else version


def diff_versions(old: dict, new: dict) -> dict:
    """Versions that changed, grouped by value (a step gives every channel it updates the same
    version): ``{"set": [[version, channel, ...], ...], "unset": [channel, ...]}``."""
    groups: dict[str, list] = {}
    for channel, version in new.items():
        if channel not in old or old[channel] != version:
            packed = pack_version(version)
            groups.setdefault(repr(packed), [packed]).append(channel)
    return _with_unset({"set": list(groups.values())}, old, new)


def apply_versions(old: dict, delta: dict) -> dict:
    new = {k: v for k, v in old.items() if k not in delta.get("unset", ())}
    for version, *channels in delta["set"]:
        new.update(dict.fromkeys(channels, unpack_version(version)))
    return new


def diff_map(old: dict, new: dict) -> dict:
    """What turns mapping ``old`` into ``new``: ``{"set": {...}, "unset": [...]}``."""
    return _with_unset({"set": {k: v for k, v in new.items() if k not in old or old[k] != v}}, old, new)


def apply_map(old: dict, delta: dict) -> dict:
    new = {k: v for k, v in old.items() if k not in delta.get("unset", ())}
    new.update(delta["set"])
    return new


def diff_seen(old: dict, new: dict) -> dict:
    delta = diff_map(old, new)
    delta["set"] = {node: pack_versions(v) for node, v in delta["set"].items()}
    return delta


def apply_seen(old: dict, delta: dict) -> dict:
    return apply_map(old, {**delta, "set": {node: unpack_versions(v) for node, v in delta["set"].items()}})


def _with_unset(delta: dict, old: dict, new: dict) -> dict:
    if unset := [k for k in old if k not in new]:
        delta["unset"] = unset
    return delta


def pack_versions(versions: dict) -> dict:
    return {k: pack_version(v) for k, v in versions.items()}


def unpack_versions(versions: dict) -> dict:
    return {k: unpack_version(v) for k, v in versions.items()}


# -- view_checkpoint records ----------------------------------------------------------------------
class Fields(NamedTuple):
    """A checkpoint but for its id and channel values (header and metadata encoded)."""

    header: Any
    versions: dict
    seen: dict
    metadata: Any


def is_full(record: dict) -> bool:
    return "channelVersions" in record


def full_record(fields: Fields) -> dict:
    return {"checkpoint": fields.header, "channelVersions": pack_versions(fields.versions),
            "versionsSeen": {node: pack_versions(v) for node, v in fields.seen.items()},
            "checkpointMetadata": fields.metadata}


def full_fields(record: dict) -> Fields:
    return Fields(record.get("checkpoint", {}), unpack_versions(record["channelVersions"]),
                  {node: unpack_versions(v) for node, v in record["versionsSeen"].items()},
                  record["checkpointMetadata"])


def diff_record(parent: Fields, fields: Fields, stored: Iterable[str]) -> dict:
    """``fields`` as changes on ``parent``; ``stored``: the channels the record holds values for."""
    return {"header": _compact_map(diff_map(_expected_header(parent.header, stored), fields.header)),
            "versions": _compact_versions(diff_versions(parent.versions, fields.versions)),
            "seen": _diff_seen_at(parent.seen, fields.seen, parent.versions),
            "meta": _compact_map(diff_map(parent.metadata, fields.metadata))}


def apply_record(parent: Fields, record: dict, stored: Iterable[str]) -> Fields:
    """The fields a delta record describes, on ``parent``'s."""
    if "channelVersionsDelta" in record:  # written before the compact keys
        return Fields(record.get("checkpoint", {}), apply_versions(parent.versions, record["channelVersionsDelta"]),
                      apply_seen(parent.seen, record["versionsSeenDelta"]),
                      apply_map(parent.metadata, record["checkpointMetadataDelta"]))
    return Fields(apply_map(_expected_header(parent.header, stored), _expand_map(record["header"])),
                  apply_versions(parent.versions, versions_delta(record)),
                  _apply_seen_at(parent.seen, record["seen"], parent.versions),
                  apply_map(parent.metadata, _expand_map(record["meta"])))


def versions_delta(record: dict) -> dict:
    """A delta record's version changes in the ``{"set", "unset"}`` form ``apply_versions`` takes."""
    if "channelVersionsDelta" in record:
        return record["channelVersionsDelta"]
    groups = record["versions"]
    unset = [channel for version, *channels in groups if version is None for channel in channels]
    delta = {"set": [g for g in groups if g[0] is not None]}
    return {**delta, "unset": unset} if unset else delta


def _expected_header(parent: dict, stored: Iterable[str]) -> dict:
    return {**parent, "updated_channels": sorted(stored)}


def _compact_versions(delta: dict) -> list:
    return delta["set"] + ([[None, *delta["unset"]]] if "unset" in delta else [])  # no version is null


def _compact_map(delta: dict) -> Any:
    return [delta["set"], delta["unset"]] if "unset" in delta else delta["set"]


def _expand_map(compact: Any) -> dict:
    return {"set": compact} if type(compact) is dict else {"set": compact[0], "unset": compact[1]}


def _diff_seen_at(old: dict, new: dict, versions: dict) -> dict:
    """Per node whose versions_seen changed: the channels it now saw at ``versions`` (the
    parent's), else its versions in full; null for a node that is gone."""
    delta: dict[str, Any] = {node: None for node in old if node not in new}
    for node, seen in new.items():
        before = old.get(node, {})
        if seen != old.get(node):
            saw = [ch for ch, v in seen.items() if before.get(ch) != v]
            at_parent = saw and all(ch in versions for ch in saw) and _saw(before, saw, versions) == seen
            delta[node] = saw if at_parent else pack_versions(seen)
    return delta


def _apply_seen_at(old: dict, delta: dict, versions: dict) -> dict:
    new = {node: seen for node, seen in old.items() if delta.get(node, seen) is not None}
    for node, change in delta.items():
        if type(change) is list:
            new[node] = _saw(old.get(node, {}), change, versions)
        elif change is not None:
            new[node] = unpack_versions(change)
    return new


def _saw(before: dict, channels: list, versions: dict) -> dict:
    return {**before, **{ch: versions[ch] for ch in channels}}

