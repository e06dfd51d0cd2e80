"""Words of code for full-text search: identifiers split into words, Chinese in character pairs.

SQLite's ``unicode61`` tokenizer already splits ``parse_http_date`` at the underscores, but it
keeps ``parseHttpDate`` whole and a run of Chinese characters as one token. So the text we index
gets the words of its camel-case identifiers appended (``parseHttpDate`` … ``parse http date``), and
every run of CJK characters becomes its overlapping character pairs (``解析日期`` → ``解析 析日
日期``), which a query cut the same way matches whatever the word boundaries (no dictionary).
Queries go through ``query_terms``: identifier words, the identifier itself, pairs, and the
English words of the code glossary for Chinese terms (``codeindex/data/glossary.txt``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

# An identifier with an inner capital: the tokenizer would keep it whole.
_CAMEL = re.compile(r"\b[A-Za-z_][a-z0-9_]*[A-Z][A-Za-z0-9_]*\b")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_QUERY_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
GLOSSARY = Path(__file__).with_name("data") / "glossary.txt"

# Words of a question that say nothing about the code looked for.
STOPWORDS = frozenset("""
a an and are as at be by can code do does find for from get give how i in is it its me my of on or
please show that the this to use used uses using what when where which who why with function method
class file files implementation implemented implements defined define definition logic handle handles
""".split())
CJK_STOP = frozenset("的 了 在 是 和 与 或 把 被 给 用 中 里 哪 个 些 这 那 怎么 如何 哪里 哪个 代码 函数 方法 实现 逻辑 在哪 处理 相关 查找 找到 一下".split())


@lru_cache(maxsize=65_536)
def _words(name: str) -> tuple[str, ...]:
    return tuple(part.lower() for piece in name.split("_") for part in _PARTS.findall(piece))


def identifier_words(name: str) -> list[str]:
    """``parseHttpDate`` / ``parse_http_date`` / ``HTTPServer`` → lower-case words."""
    return list(_words(name))


def cjk_pairs(run: str) -> list[str]:
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]


def _pairs(match: re.Match[str]) -> str:
    return " " + " ".join(cjk_pairs(match.group(0))) + " "


def index_text(text: str) -> str:
    """``text`` as the full-text index should see it (see the module docstring)."""
    if not text:
        return ""
    camel = set(_CAMEL.findall(text))
    if camel:  # the words once per chunk, after the text: BM25 counts them, positions do not matter
        text += "\n" + " ".join(w for name in camel for w in _words(name))
    return _CJK_RUN.sub(_pairs, text) if not text.isascii() else text


def name_text(name: str, qualified: str) -> str:
    """A symbol's name column: the name, its words, and the qualified name's words."""
    words = identifier_words(name)
    outer = [w for part in qualified.split(".")[:-1] for w in identifier_words(part)]
    return " ".join([name, *words, *outer])


def path_text(path: str) -> str:
    parts = re.split(r"[/.\-]", path)
    return " ".join(w for part in parts for w in [part, *identifier_words(part)] if w)


@lru_cache(maxsize=1)
def glossary() -> dict[str, tuple[str, ...]]:
    """Chinese programming terms → English words (``codeindex/data/glossary.txt``)."""
    table: dict[str, tuple[str, ...]] = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        chinese, _, english = line.partition("=")
        for term in chinese.split("|"):
            if term.strip():
                table[term.strip()] = tuple(english.split())
    return table


def translate(run: str) -> list[str]:
    """English words for the glossary terms inside a run of Chinese, longest terms first."""
    table, found, i = glossary(), [], 0
    longest = max(map(len, table), default=0)
    while i < len(run):
        for size in range(min(longest, len(run) - i), 0, -1):
            if run[i : i + size] in table:
                found.extend(table[run[i : i + size]])
                i += size
                break
        else:
            i += 1
    return found


def query_terms(query: str) -> tuple[list[str], list[str]]:
    """(terms for the full-text query, the query's identifier words for re-ranking)."""
    terms: list[str] = []
    words: list[str] = []
    tokens = _QUERY_TOKEN.findall(query)
    for token in tokens:
        if _CJK_RUN.fullmatch(token):
            english = translate(token)
            terms += english + [p for p in cjk_pairs(token) if p not in CJK_STOP and len(p) > 1]
            words += english
            continue
        parts = identifier_words(token)
        if len(parts) > 1 and "_" not in token:  # camelCase is one token in the index too
            terms.append(token.lower())
        terms += parts
        words += parts
    kept = [t for t in terms if t not in STOPWORDS] or terms
    return list(dict.fromkeys(kept)), list(dict.fromkeys(w for w in words if w not in STOPWORDS) or words)


def fts_query(terms: list[str]) -> str:
    """An FTS5 query matching any of ``terms`` (each quoted, so no operator can be smuggled in)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
