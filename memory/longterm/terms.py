"""The search terms of a text, for ranking memories by rarity (``paicli.memory.longterm.lexical``).

A memory and a query are both cut into the same kinds of terms:
- Chinese: every pair of adjacent Han characters (so a word jieba splits differently in the
  memory and in the query still matches), plus jieba's words of three or more characters
  (``数据库``, ``移动端``), which count once more as whole words; a lone Han character
  between non-Han text counts as itself;
- everything else, lower-cased: words, with a light English stemmer (``reindexes`` and
  ``reindexing`` meet at ``reindex``); identifiers (``billing-api``, ``max_connections``,
  ``db/migration``) as a whole and as their parts; version numbers (``15.4``, ``3.10``) as
  their own terms; camelCase split into its words as well.
Question words (``什么``, ``which``) are dropped: they say how a thing is asked, not what.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from functools import lru_cache

import jieba

from paicli.memory.longterm.thesaurus_data import shipped

jieba.setLogLevel(logging.WARNING)  # its "Building prefix dict" lines are not for the user

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-/+#]*")
PARTS = re.compile(r"[a-z]+|\d+")
VERSION = re.compile(r"\d+(?:\.\d+)+")
CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
MIN_JIEBA_WORD = 3  # shorter words are already character pairs
# A pair holding one of these is grammar, not subject ("库是", "用哪", "置在"), unless jieba cuts
# it as a word of the text ("用户", "作为"); alone, such a character is no term either.
FUNCTION_CHARS = frozenset("的了吗呢哪么着啊吧呀是用在和与及或为把被从到给对就都也还要会能让请先再又很最该将以于之其并而次")

STOP = frozenset(
    "a an the is are was be to of in on at for and or by with from as it its this that these those "
    "what which who whom whose where when why how do does did we our us i my me you your should "
    "can could would will shall may might there here any some use used using".split()
    + "什么 哪个 哪些 哪里 哪儿 多少 怎么 怎样 如何 是否 是不 不是 吗 呢 一下 我们 咱们 请问 "
      "用的 的是 是什 么是 有没 没有".split())


def terms(text: str) -> Counter[str]:
    """Term counts of ``text`` (memory content, a query, a thesaurus phrase)."""
    counts: Counter[str] = Counter()
    for piece in _pieces(text):
        counts.update(_piece_terms(piece))
    return counts


def key_terms(text: str) -> frozenset[str]:
    """The terms a phrase must share with a text to occur in it: no jieba words, since jieba
    may cut the same characters differently inside a longer sentence."""
    return frozenset(t for t in terms(text) if not _is_jieba_word(t))


def _is_jieba_word(term: str) -> bool:
    return len(term) >= MIN_JIEBA_WORD and bool(HAN.fullmatch(term))


def _pieces(text: str) -> list[str]:
    """Han runs and the text between them, in order."""
    out, at = [], 0
    for match in HAN.finditer(text):
        out += [text[at:match.start()], match.group()]
        at = match.end()
    return [p for p in [*out, text[at:]] if p]


@lru_cache(maxsize=65_536)
def _piece_terms(piece: str) -> tuple[str, ...]:
    """Cached: memories repeat the same phrases, and jieba is the slow part of indexing."""
    if HAN.fullmatch(piece):
        return _han_terms(piece)
    found: list[str] = []
    for word in WORD.findall(piece):
        found += _word_terms(word.rstrip(".-/+#"))
    return tuple(t for t in found if t not in STOP)


@lru_cache(maxsize=1)
def known_pairs() -> frozenset[str]:
    """Two-character words holding a function character that the developer thesaurus names
    (``从库``, ``会话``, ``站会``): jieba splits them in some sentences ("从/库", "会/话"), and a
    thesaurus word must be a term wherever it occurs. The thesaurus's data stays the one list of
    such words."""
    return frozenset(m for group in shipped() for m in group
                     if len(m) == 2 and HAN.fullmatch(m) and FUNCTION_CHARS & set(m))


def _han_terms(run: str) -> tuple[str, ...]:
    if len(run) == 1:
        return () if run in STOP or run in FUNCTION_CHARS else (run,)
    cut = jieba.lcut(run, HMM=False)
    words = [w for w in cut if len(w) >= MIN_JIEBA_WORD]
    # A pair with a function character counts only where jieba cut it as a word here ("用户" in
    # "用户是", not "试用" across "测试/用" nor "存在" across "缓存/在"), or where the thesaurus
    # knows it as a word ("从库" in "读走从库", which jieba cuts "从/库").
    known = known_pairs()
    pairs = [p for p in (run[i:i + 2] for i in range(len(run) - 1))
             if not FUNCTION_CHARS & set(p) or p in cut or p in known]
    return tuple(t for t in pairs + words if t not in STOP)


def _word_terms(word: str) -> list[str]:
    low = word.lower()
    if not low:
        return []
    parts = PARTS.findall(low)
    found = [stem(p) for p in parts]
    if len(parts) > 1:  # an identifier or a version: the whole counts too
        found.append(low)
        found += [v for v in VERSION.findall(low) if v != low]
    camel = [c.lower() for c in CAMEL.findall(word)]
    if len(camel) > len(parts):
        found += [stem(c) for c in camel]
    return found


@lru_cache(maxsize=16_384)
def stem(word: str) -> str:
    """A light English stemmer: plural, -ing, -ed, doubled consonant, final e.
    Enough for ``release``/``releases``/``released`` and ``format``/``formatting`` to meet."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
                word = word[:-1]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word
