"""URL extraction and normalisation shared by the web tools and the turn policy (reference o.3).

Grounding compares URLs by their normalised form, so the URLs a user typed, the typed
results of web_search and the arguments of a later web_fetch must all pass through the
same two functions here.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import quote, urlsplit, urlunsplit

URL_PATTERN = re.compile(r"""https?://[^\s<>"'`]+""", re.IGNORECASE)  # reference (o.3)
TRAILING_PUNCTUATION = ").,;!?，。；！？）]}"  # reference (o.3): stripped from the end of a match
WEB_SCHEMES = ("http", "https")
# Characters URL_PATTERN stops at; encoded in structured URLs so a match spans the whole URL.
_STOP_CHARS = re.compile(r"""[\s<>"'`]""")


def normalize_url(url: str) -> str:
    """Lower-case scheme and host, drop the fragment, drop a trailing ``/`` when there is no query.

    Idempotent (every trailing ``/`` goes), because callers normalise URLs that are
    already normalised. Text that does not parse as a URL comes back stripped, unchanged.
    """
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    netloc = _lower_host(parts.netloc)
    path = parts.path
    if not parts.query:
        path = path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), netloc, path, parts.query, ""))


def extract_urls(text: str) -> list[str]:
    """Distinct normalised http(s) URLs in ``text``, in order of first appearance."""
    found: dict[str, None] = {}
    for match in URL_PATTERN.finditer(text or ""):
        raw = match.group(0).rstrip(TRAILING_PUNCTUATION)
        if raw:
            found.setdefault(normalize_url(raw), None)
    return list(found)


class WebUrl(NamedTuple):
    text: str  # the URL to show and fetch (characters URL_PATTERN stops at are %-encoded)
    key: str  # its normalised form, as ``extract_urls`` gives it for the text


def web_url(url: object) -> WebUrl | None:
    """A URL a remote result names (e.g. a search hit), or None unless it is http(s) with a host.

    ``key`` is what a later web_fetch of ``text`` is matched against, so one grounds the other.
    """
    if not isinstance(url, str):
        return None
    text = _STOP_CHARS.sub(lambda m: quote(m.group(0)), url.strip())
    if not URL_PATTERN.fullmatch(text):
        return None
    keys = extract_urls(text)
    if not keys or not _has_host(keys[0]):
        return None
    return WebUrl(text, keys[0])


def _lower_host(netloc: str) -> str:
    # Only the host is case-insensitive; user info (rare, but possible) keeps its case.
    userinfo, at, host = netloc.rpartition("@")
    return f"{userinfo}{at}{host.lower()}"


def _has_host(url: str) -> bool:
    try:
        return bool(urlsplit(url).hostname)
    except ValueError:
        return False
