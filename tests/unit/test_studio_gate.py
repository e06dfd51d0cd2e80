"""The front door of `paicli studio` (paicli/studio/gate.py) as plain ASGI: which requests reach
the server's handlers, and what the answers say about private networks; and how the command
starts the server (where it may listen, where it runs). The real server is in
tests/cli/test_studio_gate.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import paicli
from paicli.studio.command import RemoteRefused, check_host, server_command, state_dir_of, write_config
from paicli.studio.gate import StudioGate, allowed_origins, cors_config, host_allowed
from paicli.tools.leash import leash_command

PORT = 2024


class Downstream:
    """Stands for the server: records what reached it, answers 200 with the header
    `langgraph dev` puts on every OPTIONS answer."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    async def __call__(self, scope, receive, send) -> None:
        self.seen.append(scope)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"access-control-allow-private-network", b"true")]})
        await send({"type": "http.response.body", "body": b"{}"})


def call(method: str = "GET", headers: dict[str, str] | None = None, *, extra=(), server=("127.0.0.1", PORT),
         kind: str = "http", root_path: str = "") -> tuple[int, dict[bytes, bytes], Downstream]:
    downstream = Downstream()
    gate = StudioGate(downstream, extra_origins=extra)
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in
           ({"host": f"127.0.0.1:{PORT}"} | (headers or {})).items()]
    scope = {"type": kind, "method": method, "path": "/threads", "headers": raw, "server": server,
             "root_path": root_path}
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(gate(scope, receive, send))
    if kind == "websocket":
        return (403 if sent and sent[0]["type"] == "websocket.close" else 0), {}, downstream
    start = sent[0]
    return start["status"], dict(start["headers"]), downstream


JSON = {"content-type": "application/json", "content-length": "2"}


@pytest.mark.parametrize("host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LOCALHOST:{PORT}", f"[::1]:{PORT}",
                                  f"127.0.0.2:{PORT}"])
def test_loopback_hosts_with_the_port_are_served(host):
    status, _, downstream = call("GET", {"host": host})
    assert status == 200 and len(downstream.seen) == 1


@pytest.mark.parametrize("host", [f"evil.example:{PORT}", "evil.example", f"127.0.0.1:{PORT + 1}", "127.0.0.1",
                                  f"localhost.:{PORT}", f"user@localhost:{PORT}", f"localhost:{PORT}/x",
                                  f"192.168.1.5:{PORT}", f"127.0.0.1.nip.io:{PORT}", "", "[::1:2024"])
def test_other_hosts_are_refused_before_the_server(host):
    status, _, downstream = call("GET", {"host": host})
    assert status == 403 and downstream.seen == []


def test_a_request_without_host_is_refused():
    downstream = Downstream()
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(StudioGate(downstream)({"type": "http", "method": "GET", "headers": [], "server": ("127.0.0.1", PORT)},
                                       None, send))
    assert sent[0]["status"] == 403 and downstream.seen == []


def test_two_host_headers_are_refused():
    downstream = Downstream()
    sent = []

    async def send(message):
        sent.append(message)

    headers = [(b"host", f"127.0.0.1:{PORT}".encode()), (b"host", b"evil.example")]
    asyncio.run(StudioGate(downstream)({"type": "http", "method": "GET", "headers": headers,
                                        "server": ("127.0.0.1", PORT)}, None, send))
    assert sent[0]["status"] == 403 and downstream.seen == []


def test_a_server_reached_by_its_ip_address_accepts_that_address_only():
    """--allow-remote: the address the request arrived on, written as an address, never a name."""
    assert host_allowed(f"192.168.1.5:{PORT}", "192.168.1.5", PORT)
    assert not host_allowed(f"192.168.1.6:{PORT}", "192.168.1.5", PORT)
    assert not host_allowed(f"myhost.lan:{PORT}", "192.168.1.5", PORT)
    assert host_allowed("localhost", "127.0.0.1", 80)  # the default port may be left out
    assert not host_allowed("localhost", "127.0.0.1", PORT)


@pytest.mark.parametrize("origin", ["http://evil.example", "null", f"http://127.0.0.1:{PORT + 1}",
                                    "https://smith.langchain.com.evil.example", "http://smith.langchain.com",
                                    f"https://localhost:{PORT}", "*"])
@pytest.mark.parametrize("method", ["GET", "POST", "OPTIONS"])
def test_foreign_origins_are_refused_before_the_server(origin, method):
    status, headers, downstream = call(method, {"origin": origin, **JSON})
    assert status == 403 and downstream.seen == []
    assert not any(name.startswith(b"access-control-") for name in headers)


@pytest.mark.parametrize("origin", [f"http://127.0.0.1:{PORT}", f"http://localhost:{PORT}", f"http://[::1]:{PORT}",
                                    "https://smith.langchain.com"])
def test_the_servers_own_origin_and_studios_are_served(origin):
    status, _, downstream = call("POST", {"origin": origin, **JSON})
    assert status == 200 and len(downstream.seen) == 1


def test_a_cross_site_request_without_origin_is_refused():
    """A browser's no-cors GET (an <img> or <script> on another site) sends no Origin."""
    status, _, downstream = call("GET", {"sec-fetch-site": "cross-site"})
    assert status == 403 and downstream.seen == []
    for site in ("none", "same-origin"):  # the address typed in, the server's own /docs page
        assert call("GET", {"sec-fetch-site": site})[0] == 200
    assert call("GET", {"sec-fetch-site": "cross-site", "origin": "https://smith.langchain.com"})[0] == 200


def test_origins_the_user_lists_are_served():
    status, _, downstream = call("POST", {"origin": "https://tools.example.org", **JSON},
                                 extra=("https://tools.example.org",))
    assert status == 200 and len(downstream.seen) == 1
    assert call("POST", {"origin": "https://other.example.org", **JSON}, extra=("https://tools.example.org",))[0] == 403


@pytest.mark.parametrize("content_type", ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", None, "application/jsonx"])
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_a_body_that_is_not_json_gets_415(content_type, method):
    headers = {"content-length": "2"} | ({"content-type": content_type} if content_type else {})
    status, _, downstream = call(method, headers)
    assert status == 415 and downstream.seen == []
    chunked = {"transfer-encoding": "chunked"} | ({"content-type": content_type} if content_type else {})
    assert call(method, chunked)[0] == 415


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"])
def test_json_bodies_and_bodiless_posts_pass(content_type):
    assert call("POST", {"content-type": content_type, "content-length": "2"})[0] == 200
    assert call("POST", {"content-length": "0"})[0] == 200  # the SDK's runs.cancel sends no body
    assert call("POST", {})[0] == 200


def test_private_network_permission_only_for_an_allowed_origin_that_asks():
    preflight = {"origin": "https://smith.langchain.com", "access-control-request-method": "POST",
                 "access-control-request-private-network": "true"}
    status, headers, downstream = call("OPTIONS", preflight)
    assert status == 200 and headers[b"access-control-allow-private-network"] == b"true"
    # the server's CORS middleware would fail a preflight it cannot be told to allow: not passed on
    assert b"access-control-request-private-network" not in dict(downstream.seen[0]["headers"])
    _, headers, _ = call("OPTIONS", {})  # no Origin: no browser asked, nothing granted
    assert b"access-control-allow-private-network" not in headers
    _, headers, _ = call("OPTIONS", {"origin": "https://smith.langchain.com"})  # allowed, but did not ask
    assert b"access-control-allow-private-network" not in headers


def test_websockets_get_the_same_checks():
    assert call("GET", {"origin": "http://evil.example"}, kind="websocket")[0] == 403
    assert call("GET", {"host": "evil.example"}, kind="websocket")[0] == 403


def test_the_servers_in_process_client_passes():
    """/mcp and /a2a call the API through the SDK's in-process transport: no socket, no port."""
    status, _, downstream = call("GET", {"host": "api"}, server=("api", None), root_path="/noauth")
    assert status == 200 and len(downstream.seen) == 1
    assert call("GET", {"host": "api"}, server=("api", PORT), root_path="/noauth")[0] == 403


def test_cors_names_exact_origins_never_a_wildcard():
    config = cors_config(PORT, ("https://tools.example.org",))
    assert config["allow_origins"] == [*allowed_origins(PORT)[:4], "https://tools.example.org"]
    assert "*" not in json.dumps(config["allow_origins"]) and config["allow_credentials"] is False


# --- the command's side: where the server may listen, where it runs, how it is started ---------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.5"])
def test_loopback_hosts_need_no_flag(host):
    assert check_host(host, PORT, allow_remote=False) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "myhost.lan", ""])
def test_other_hosts_need_allow_remote_which_warns(host):
    with pytest.raises(RemoteRefused, match="--allow-remote"):
        check_host(host, PORT, allow_remote=False)
    assert "能访问该端口的任何人都能用你的 key 在这台机器上运行命令" in check_host(host, PORT, allow_remote=True)


def test_the_server_runs_isolated_from_paicli_home_with_the_gate(tmp_path):
    home, project = tmp_path / "home", tmp_path / "a" / "proj"
    state = state_dir_of(home, project)
    assert state.parent == home / "studio" / "projects" and state.name.startswith("proj-")
    assert state != state_dir_of(home, tmp_path / "b" / "proj")  # same name, another project
    config = json.loads(write_config(state, PORT, ("https://tools.example.org",)).read_text())
    assert config["http"]["app"] == "paicli.studio.gate:app"
    assert config["dependencies"] == [str(Path(paicli.__file__).resolve().parents[1])]  # where `paicli` is installed
    assert config["http"]["cors"]["allow_origins"][-1] == "https://tools.example.org"
    server = server_command(state / "langgraph.json", "127.0.0.1", PORT)
    leashed = leash_command(server, 1)
    assert server[1] == "-I" and leashed[1] == "-I"  # no cwd, PYTHONPATH or user site on sys.path
    assert Path(server[0]) == Path(leashed[0])


def test_the_checkouts_langgraph_json_has_the_same_front_door():
    """`langgraph dev` in a checkout: the gate by file path, CORS by pattern. `allow_origins` must
    be there, empty: without it langgraph_api fills in `*`."""
    import re

    http = json.loads((Path(__file__).resolve().parents[2] / "langgraph.json").read_text())["http"]
    assert http["app"] == "./paicli/studio/gate.py:app" and http["cors"]["allow_origins"] == []
    pattern = re.compile(http["cors"]["allow_origin_regex"])
    assert all(pattern.fullmatch(o) for o in ("http://127.0.0.1:2024", "http://localhost:8123", "http://[::1]:1",
                                              "https://smith.langchain.com"))
    assert not any(pattern.fullmatch(o) for o in ("http://evil.example", "https://smith.langchain.com.evil.example",
                                                  "http://localhost.evil.example:80", "*"))


def test_the_servers_environment_cannot_replace_the_cors_origins(tmp_path, monkeypatch):
    from paicli.config.settings import load_settings, studio_environ

    monkeypatch.setenv("CORS_ALLOW_ORIGINS", "*")
    monkeypatch.setenv("CORS_CONFIG", '{"allow_origins": ["*"]}')
    env = studio_environ(load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path / "home"), "PAICLI_MODEL": "m"}))
    assert "CORS_ALLOW_ORIGINS" not in env and "CORS_CONFIG" not in env
