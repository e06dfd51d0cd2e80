"""Filter and namespace matching for ``MemoryStore``, with ``InMemoryStore``'s semantics.

LangGraph keeps its own versions private (``langgraph.store.memory._compare_values`` and
``_does_match``), so these small equivalents keep the store off private API:
- a filter value matches equal values; a dict of ``$eq $ne $gt $gte $lt $lte`` applies each
  operator; a plain dict matches nested keys;
- a namespace condition matches by prefix or suffix, with ``*`` matching any one label.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

_OPERATORS = {"$eq": operator.eq, "$ne": operator.ne, "$gt": operator.gt, "$gte": operator.ge,
              "$lt": operator.lt, "$lte": operator.le}


def matches_filter(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(_matches(value.get(key), expected) for key, expected in wanted.items())


def _matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if any(str(k).startswith("$") for k in expected):
            return all(_apply(actual, op, operand) for op, operand in expected.items())
        return isinstance(actual, Mapping) and matches_filter(actual, expected)
    return actual == expected


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op not in _OPERATORS:
        raise ValueError(f"Unsupported operator: {op}")
    if op in ("$eq", "$ne"):
        return _OPERATORS[op](actual, operand)
    try:
        return _OPERATORS[op](float(actual), float(operand))
    except (TypeError, ValueError):
        return False


def matches_namespace(match_type: str, path: Sequence[str], namespace: Sequence[str]) -> bool:
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, path)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise ValueError(f"Unsupported match type: {match_type}")
    return all(want == "*" or have == want for have, want in pairs)
