"""The front door of the ``paicli studio`` server: it serves this machine's own clients, never a
web page the user happens to have open.

The server runs tools on the user's machine with the user's key, and has no login. A browser lets
any page send it "simple" requests (no preflight) and, through DNS rebinding, even read the
answers. So, before any handler runs:

- a ``Host`` that is not a loopback name or address with the server's port gets 403 (a
  rebinding page's requests carry its own host name). A server started with ``--allow-remote``
  also accepts the IP address the request arrived on, written as an address: never a name;
- a request with an ``Origin`` gets 403 unless the origin is the server's own (loopback, its
  port), LangGraph Studio's web UI, or one the user listed in ``PAICLI_STUDIO_ORIGINS``; so does
  a browser's cross-site request that carries none (``Sec-Fetch-Site: cross-site``);
- a POST, PUT or PATCH whose body is not ``application/json`` gets 415, so no page can send one
  without a preflight (a bodiless POST, as the SDK's ``runs.cancel`` sends, passes);
- ``access-control-allow-private-network`` (which ``langgraph dev`` adds to every OPTIONS answer)
  goes only to a preflight from an allowed origin that asked for it, never elsewhere.

Clients that send no ``Origin`` (langgraph-sdk, curl, paicli's own session registrar) need no
token. The CORS answers themselves come from the server's CORS middleware, configured with the
exact origins (:func:`cors_config`), so they name the origin and never ``*``.

``langgraph dev`` has no setting for middleware, but it runs the middleware of a custom app
(langgraph.json's ``http.app``) outside its own (CORS, logging, every route): :data:`app` is that
app, with no routes of its own. It is imported from paicli's installed package.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

STUDIO_ORIGIN = "https://smith.langchain.com"  # LangGraph Studio's web UI (the URL paicli studio prints)
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
PRIVATE_NETWORK = b"access-control-allow-private-network"
REQUEST_PRIVATE_NETWORK = "access-control-request-private-network"
IN_PROCESS_ROOT = "/noauth"  # the SDK's in-process client (get_client() inside the server: /mcp, /a2a)
# What `langgraph dev` exposes to cross-origin readers by default; kept.
EXPOSED_HEADERS = ["x-pagination-total", "x-pagination-next", "content-location"]


def own_origins(port: int) -> tuple[str, ...]:
    """The origins of pages the server itself serves (its API docs), on loopback."""
    return (f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}")


def allowed_origins(port: int, extra: Iterable[str] = ()) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*own_origins(port), STUDIO_ORIGIN, *extra)))


def cors_config(port: int, extra: Iterable[str] = ()) -> dict[str, Any]:
    """langgraph.json's ``http.cors``: answers name the allowed origin (``langgraph dev``'s
    default is ``*``). No credentials: the server uses no cookies, and Studio sends none."""
    return {"allow_origins": list(allowed_origins(port, extra)), "allow_methods": ["*"], "allow_headers": ["*"],
            "allow_credentials": False, "expose_headers": EXPOSED_HEADERS}


class StudioGate:
    """Pure ASGI middleware: refuses what a web page could send, passes the rest untouched
    (streams included)."""

    def __init__(self, app: ASGIApp, extra_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.extra_origins = tuple(extra_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or _in_process(scope):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            await _refuse(scope, send, *refusal)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        asks = "origin" in headers and scope["method"] == "OPTIONS" and REQUEST_PRIVATE_NETWORK in headers
        if asks:
            # A Private Network Access preflight from an allowed origin. The server's CORS
            # middleware would fail it (the option cannot be set through langgraph.json): it
            # judges the rest of the preflight, the permission comes from here.
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"]
                                          if k.lower() != REQUEST_PRIVATE_NETWORK.encode()]}
        await self.app(scope, receive, _private_network(send, allow=asks))

    def refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        """(status, reason) for a request a web page could have sent, or None."""
        local, port = scope.get("server") or (None, None)
        origin = headers.get("origin")
        if not host_allowed(headers.get("host"), local, port):
            return 403, (f"paicli studio 只为本机服务：Host 头必须是 127.0.0.1:{port}、"
                         f"localhost:{port} 或 [::1]:{port}")
        if origin is not None and origin not in allowed_origins(port, self.extra_origins):
            return 403, ("paicli studio 不为这个网页来源服务：要允许它，请把它加入 PAICLI_STUDIO_ORIGINS"
                         "（环境变量或 config.json）")
        if origin is None and headers.get("sec-fetch-site") == "cross-site":
            # A browser's request from another site that carries no Origin (an <img>, a <script>,
            # a link followed): no page of another site gets an answer, or a side effect.
            return 403, "paicli studio 不接受来自其他网站的请求"
        if scope["type"] == "http" and scope["method"] in BODY_METHODS and _has_body(headers) \
                and not _is_json(headers.get("content-type")):
            return 415, "paicli studio 只接受 application/json 格式的请求体"
        return None


def host_allowed(host: str | None, local: str | None, port: int | None) -> bool:
    """Whether ``host`` (the Host header) names this server: a loopback name or address, or the
    address the request arrived on written as an IP (a server listening beyond loopback, which
    ``--allow-remote`` allows), with the server's port."""
    if not host or port is None:
        return False
    try:
        parts = urlsplit(f"//{host}")
        name, given = parts.hostname, parts.port
    except ValueError:
        return False
    if not name or parts.username is not None or parts.path or (given or 80) != port:
        return False
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:  # a name other than localhost: what DNS rebinding sends
        return False
    return address.is_loopback or (local is not None and name == _address(local))


def _address(local: str) -> str:
    try:
        return str(ipaddress.ip_address(local))
    except ValueError:
        return ""


def _in_process(scope: Scope) -> bool:
    """A request from inside the server (the SDK's in-process transport): no socket, no port."""
    server = scope.get("server") or (None, None)
    return scope.get("root_path") == IN_PROCESS_ROOT and server[1] is None


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-cased name, first value kept; a Host, Origin or Content-Type
    sent twice becomes a value nothing matches (whichever copy a handler would read: refused)."""
    seen: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name in seen and name in ("host", "origin", "content-type"):
            seen[name] = "\0duplicate"
        else:
            seen.setdefault(name, value)
    return seen


def _has_body(headers: dict[str, str]) -> bool:
    return "transfer-encoding" in headers or headers.get("content-length", "0").strip() != "0"


def _is_json(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "application/json"


async def _refuse(scope: Scope, send: Send, status: int, detail: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})  # before accept: the client sees 403
        return
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _private_network(send: Send, *, allow: bool) -> Send:
    """``send`` with the answer's private-network permission removed, or made present."""

    async def filtered(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() != PRIVATE_NETWORK]
            if allow and 200 <= message["status"] < 300:
                headers.append((PRIVATE_NETWORK, b"true"))
            message = {**message, "headers": headers}
        await send(message)

    return filtered


def _build() -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    from paicli.config.settings import load_settings

    return Starlette(middleware=[Middleware(StudioGate, extra_origins=load_settings().studio_origins)])


# langgraph.json: "http": {"app": "paicli.studio.gate:app"}. Built only where the server imports it.
def __getattr__(name: str) -> Any:
    if name == "app":
        value = _build()
        globals()["app"] = value
        return value
    raise AttributeError(name)
