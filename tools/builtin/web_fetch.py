"""web_fetch: GET one page and hand the model its main text as Markdown (reference t).

Every hop, the first URL and each redirect target, passes the network policy
(tools/policy/netguard.py) before it is requested, so a public page cannot redirect us into
the local network. The body is streamed and cut at ``WebOptions.max_bytes``.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, NamedTuple

import httpx

from paicli.tools.base import ToolContext, failed, WebOptions
from paicli.tools.common import int_arg, str_arg
from paicli.tools.policy.netguard import NetworkDenied, check_url
from paicli.tools.builtin.web_search import one_line

DEFAULT_MAX_CHARS = 8_000  # reference (t): web_fetch max_chars default; ≤ 0 = no cut
MAX_REDIRECTS = 5
EMPTY_HINT = ("页面正文为空：可能是需要 JavaScript 渲染的单页应用（SPA），或被反爬虫/登录验证拦截；"
              "请换一个来源，或改用 web_search 查找其他页面")
NO_TITLE = "(无标题)"
HEADERS = {
    "User-Agent": "Mozilla/5.0 (compatible; paicli-web-fetch/0.1)",
    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
}
_TEXT_TYPES = re.compile(r"^(text/|application/(xhtml\+xml|xml|json|[\w.+-]*\+(xml|json))$)")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Elements that carry no readable text, or only site chrome around it.
_NOISE = ["script", "style", "noscript", "template", "iframe", "svg", "canvas", "nav", "footer", "aside", "form"]
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")


class Page(NamedTuple):
    url: str  # after redirects
    content_type: str  # lower-case media type without parameters; "" when absent
    charset: str | None
    body: bytes
    capped: bool  # the body was longer than max_bytes and was cut


class FetchError(Exception):
    """Shown to the model as ``抓取失败: <msg>``."""


async def web_fetch(args: dict[str, Any], ctx: ToolContext) -> str:
    url = (str_arg(args, "url") or "").strip()
    if not url:
        return failed("URL 不能为空")
    max_chars = int_arg(args, "max_chars", DEFAULT_MAX_CHARS)
    refusal = ctx.web.fetch_limit.refusal()
    if refusal:
        return failed(f"❌ {refusal}")
    try:
        async with asyncio.timeout(ctx.web.timeout):  # the whole fetch, redirects included
            page = await fetch(url, ctx.web)
    except NetworkDenied as exc:
        return failed(f"❌ 网络访问被拒绝: {exc.reason}")
    except FetchError as exc:
        return failed(f"抓取失败: {exc}")
    except TimeoutError:
        return failed(f"抓取失败: 请求超时（{ctx.web.timeout:g} 秒）")
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        return failed(f"抓取失败: {str(exc) or type(exc).__name__}")
    title, markdown = await asyncio.to_thread(to_markdown, page)  # parsing 5 MiB takes a while
    return render(page, title, markdown, max_chars)


async def fetch(url: str, web: WebOptions) -> Page:
    """GET ``url``, following at most ``MAX_REDIRECTS`` redirects, each target checked first."""
    async with httpx.AsyncClient(timeout=web.timeout, headers=HEADERS, follow_redirects=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            target = _parse(url)
            # Check the URL as httpx will request it, so both read the same host.
            await check_url(str(target), web.allow_hosts)
            async with client.stream("GET", target) as response:
                if not response.has_redirect_location:
                    return await _read(response, web.max_bytes)
                url = str(response.url.join(response.headers["location"]))
    raise FetchError(f"重定向次数过多（超过 {MAX_REDIRECTS} 次）")


def _parse(url: str) -> httpx.URL:
    try:
        return httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise NetworkDenied(f"URL 格式非法: {exc}") from None


async def _read(response: httpx.Response, max_bytes: int) -> Page:
    if not response.is_success:
        raise FetchError(f"HTTP {response.status_code} {response.reason_phrase}".rstrip())
    media = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media and not _TEXT_TYPES.match(media):
        raise FetchError(f"不支持的内容类型: {media}（只能抓取网页或文本）")
    chunks: list[bytes] = []
    size, capped = 0, False
    async for chunk in response.aiter_bytes():  # decoded, so a gzip bomb is capped too
        room = max_bytes - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            capped = True
            break
        chunks.append(chunk)
        size += len(chunk)
    return Page(str(response.url), media, response.charset_encoding, b"".join(chunks), capped)


def to_markdown(page: Page) -> tuple[str, str]:
    """(title, Markdown of the main text); non-HTML text comes back as it is."""
    if page.content_type not in _HTML_TYPES and (page.content_type or not _looks_like_html(page.body)):
        return NO_TITLE, page.body.decode(page.charset or "utf-8", errors="replace").strip()
    # Imported here: BeautifulSoup and markdownify cost ~50 ms that every start would pay.
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(page.body, "html.parser", from_encoding=page.charset)
    title = _title(soup)
    for element in soup.find_all(_NOISE):
        element.decompose()
    main = soup.find("main") or soup.find("article") or soup.body or soup
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(main)
    return title, _BLANK_LINES.sub("\n\n", markdown).strip()


def _title(soup: Any) -> str:
    for tag in (soup.title, soup.find("h1")):
        text = one_line(tag.get_text()) if tag else ""
        if text:
            return text
    return NO_TITLE


def _looks_like_html(body: bytes) -> bool:
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def render(page: Page, title: str, markdown: str, max_chars: int | None) -> str:
    """reference (t). N counts the whole extracted text, so a cut tells the model how much it missed."""
    cut = bool(max_chars and max_chars > 0 and len(markdown) > max_chars)
    mark = "（已截断）" if cut or page.capped else ""
    head = f"🌐 抓取: {page.url}\n📄 标题: {title}\n📏 正文 {len(markdown)} 字符{mark}\n\n---\n\n"
    if not markdown:
        return head + f"\n⚠️ {EMPTY_HINT}\n"
    return head + (markdown[:max_chars] if cut else markdown)
