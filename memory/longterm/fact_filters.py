"""The deterministic gates around automatic fact extraction (reference n.2 and n.4).

Before the call, ``safe_input`` decides whether the user's raw text is worth sending and drops
every sentence that mentions a credential or personal identifier, so such a sentence never
reaches the extraction model. After the call, ``quote_rejection`` judges each quote the model
returned against that same safe text. None of these rules trusts the model's judgement.

Word lists are the code's, not S1's (Q14, docs/behavior.md#decisions): S1's temporary list contains 先,
which would reject the golden fact "以后解释代码时，请先给一个可运行的小例子".

Fidelity notes (PaiCLI is Java): lengths are counted in UTF-16 units and trimming is
``String.trim`` (code points up to U+0020), so a text measured here measures the same there.
SENSITIVE folds case with Python's Unicode rules, a superset of Java's ASCII-only ``(?i)``:
it can only drop more sentences, never fewer.

One port decision goes beyond n.4: ``isQuotedOrQuestion`` looks only at where a quote starts,
so a quote that carries the markers itself (``> 我长期使用 Java 8`` or ``‘本项目采用 Go’``)
passes it (``quoted_or_question`` keeps that rule as written). ``carries_markers`` rejects such
quotes too; it only ever rejects more.
"""

from __future__ import annotations

import re

MIN_CHARS = 5  # reference (n.2): shorter input is skipped; (n.4): shorter quotes are rejected
MAX_INPUT_CHARS = 4_000  # reference (n.2)
MAX_QUOTE_CHARS = 180  # reference (n.4)

# reference (n.2): the exact patterns.
SENSITIVE = re.compile(
    r"api[_ -]?key|access[_ -]?key|secret|password|passwd|bearer|token|sk-[a-z0-9]"
    r"|密码|密钥|身份证|手机号|电话号码|邮箱|验证码", re.IGNORECASE)
POSSIBLE_FACT = re.compile(r"我|我们|本项目|项目|仓库|团队|公司|偏好|习惯|默认|技术栈|长期|以后|后续|接下来|始终|每次")
# reference (n.4)
TEMPORARY = re.compile(r"现在|这次|今天|明天|刚才|临时|马上|立刻")

# reference (n.2): a sentence ends after each of these; the delimiter stays with its sentence.
_SENTENCE_END = re.compile(r"(?<=[。；;\n])")
_BOUNDARIES = "。；;\n"  # reference (n.4): where the sentence around a quote ends
_FENCE = "```"
_QUOTE_PAIRS = (("‘", "’"), ("“", "”"))
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def java_len(text: str) -> int:
    """Length in UTF-16 code units, as Java's ``String.length()`` counts it."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def java_trim(text: str) -> str:
    return text.strip(_JAVA_TRIM)


def safe_input(text: str | None) -> str | None:
    """reference (n.2): the text to send for extraction, or None when no call should be made."""
    if text is None or not MIN_CHARS <= java_len(text) <= MAX_INPUT_CHARS:
        return None
    safe = java_trim("".join(s for s in _SENTENCE_END.split(text) if not SENSITIVE.search(s)))
    if java_len(safe) < MIN_CHARS or not POSSIBLE_FACT.search(safe):
        return None
    return safe


def quote_rejection(quote: str, safe: str) -> str | None:
    """reference (n.4): why one (already trimmed) quote may not be saved, or None if it may."""
    if not MIN_CHARS <= java_len(quote) <= MAX_QUOTE_CHARS:
        return "too short" if java_len(quote) < MIN_CHARS else "too long"
    if "\n" in quote:
        return "spans lines"
    if quote not in safe:
        return "not verbatim in the input"
    if SENSITIVE.search(quote):
        return "sensitive"
    if TEMPORARY.search(quote):
        return "temporary"
    return quoted_or_question(safe, quote) or carries_markers(safe, quote)


def quoted_or_question(text: str, quote: str) -> str | None:
    """reference (n.4) ``isQuotedOrQuestion``, judged at the quote's first occurrence."""
    pos = text.find(quote)
    if pos < 0:
        return "not verbatim in the input"
    if text[:pos].count(_FENCE) % 2 == 1:
        return "inside a code fence"
    line_start = text.rfind("\n", 0, pos + 1) + 1
    if java_trim(text[line_start:pos]).startswith(">"):
        return "on a blockquote line"
    end = pos + len(quote)
    if any(_inside_pair(text, pos, end, opening, closing) for opening, closing in _QUOTE_PAIRS):
        return "inside quotation marks"
    sentence_end = min((i for i in (text.find(b, end) for b in _BOUNDARIES) if i >= 0), default=len(text))
    if "？" in text[line_start:sentence_end] or "?" in text[line_start:sentence_end]:
        return "in a question"
    return None


def carries_markers(text: str, quote: str) -> str | None:
    """Port decision (module docstring): the quote itself holds a fence, a leading ``>`` or a
    quotation mark, so it is quoted material even where ``quoted_or_question`` looks away."""
    pos = text.find(quote)
    line_start = text.rfind("\n", 0, pos + 1) + 1
    if java_trim(text[line_start:pos] + quote).startswith(">"):
        return "on a blockquote line"
    if _FENCE in quote:
        return "inside a code fence"
    if any(mark in quote for pair in _QUOTE_PAIRS for mark in pair):
        return "inside quotation marks"
    return None


def _inside_pair(text: str, start: int, end: int, opening: str, closing: str) -> bool:
    """An opening mark after the last closing one before the quote, and a closing one after it."""
    before = text[:start]
    return before.rfind(opening) > before.rfind(closing) and text.find(closing, end) >= 0
