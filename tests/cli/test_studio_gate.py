"""issue 23 items 1-2 end to end: the real `paicli studio` (the console script, as a user starts
it) in a project that ships look-alike modules, the model a FakeOpenAIServer. What a web page
could send (a foreign Origin, a text/plain body, a rebinding Host) is refused before anything
happens; this machine's own clients (the SDK, an allowed origin) work without a token; nothing
the project ships is imported.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.cli.conftest import closed_port, run_timeout
from tests.cli.test_studio_command import environment, interrupt_and_wait, start_studio, user
from tests.support.openai_server import FakeOpenAIServer, Reply

# The Studio server, made once for the module: one xdist worker runs all its tests.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("studio-gate")]

PAICLI = (str(Path(sys.executable).with_name("paicli")),)
USER_ORIGIN = "https://tools.example.org"  # the user's own PAICLI_STUDIO_ORIGINS
EVIL = "http://evil.example"
# Where a cloned repository could put Python for the server to pick up, and what it would name.
PLACES = (".", ".paicli", ".paicli/studio")
LOOK_ALIKES = ("langgraph_cli/__init__.py", "langgraph_api/__init__.py", "uvicorn/__init__.py", "sitecustomize.py",
               "usercustomize.py")


@dataclass
class Served:
    url: str
    port: int
    project: Path
    home: Path
    canaries: Path
    fake: FakeOpenAIServer
    log: Path


def plant_look_alikes(project: Path, canaries: Path) -> None:
    """Each module writes a file named after itself in `canaries` if it is ever imported."""
    for place in PLACES:
        for module in LOOK_ALIKES:
            path = project / place / module
            path.parent.mkdir(parents=True, exist_ok=True)
            label = f"{place}/{module}".replace("/", "_")
            path.write_text(f"import pathlib\npathlib.Path({str(canaries)!r}, {label!r}).write_text('ran')\n",
                            encoding="utf-8")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Served:
    root = tmp_path_factory.mktemp("gate")
    project, home, canaries = root / "project", root / "home", root / "canaries"
    for folder in (project, home, canaries):
        folder.mkdir()
    plant_look_alikes(project, canaries)
    fake = FakeOpenAIServer([]).start()
    env = environment(home, fake.base_url) | {"PAICLI_STUDIO_ORIGINS": USER_ORIGIN}
    proc, url = start_studio(project, env, root / "studio.log", launcher=PAICLI)
    yield Served(url, urlsplit(url).port, project, home, canaries, fake, root / "studio.log")
    if proc.poll() is None:
        interrupt_and_wait(proc)
    fake.stop()


@pytest.fixture
def client(served: Served):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=served.url, api_key=None)


def send(served: Served, method: str, path: str, headers: dict[str, str] | None = None,
         body: str | None = None) -> tuple[int, dict[str, str], str]:
    """One raw request, with exactly these headers (Host included when given)."""
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=run_timeout())
    try:
        conn.request(method, path, body=body.encode() if body is not None else None, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        conn.close()


def exists(client, thread_id: str) -> bool:
    from langgraph_sdk.errors import NotFoundError

    try:
        client.threads.get(thread_id)
    except NotFoundError:
        return False
    return True


def test_nothing_the_project_ships_is_imported_and_the_server_works_from_paicli_home(served, client):
    thread = client.threads.create()["thread_id"]  # the SDK sends no Origin and no token
    served.fake.script.append(Reply("served"))
    client.runs.wait(thread, "react", input=user("hello"))  # the graph, the model, the ledger: all ran
    assert client.threads.get_state(thread)["values"]["messages"][-1]["content"] == "served"
    served.fake.script.append(Reply("streamed"))  # and a stream, as Studio reads runs, passes the gate
    events = list(client.runs.stream(thread, "react", input=user("again"), stream_mode="values"))
    assert events[-1].data["messages"][-1]["content"] == "streamed"
    assert sorted(p.name for p in served.canaries.iterdir()) == []
    [state] = (served.home / "studio" / "projects").iterdir()
    assert {"langgraph.json", ".langgraph_api"} <= {p.name for p in state.iterdir()}
    assert sorted(p.name for p in (served.project / ".paicli" / "studio").iterdir()) == [
        "langgraph_api", "langgraph_cli", "sitecustomize.py", "usercustomize.py", "uvicorn"]  # ours only


@pytest.mark.parametrize("origin", [EVIL, "null",  # a fixed id: every xdist worker must collect the same names
                                    pytest.param(f"http://127.0.0.1:{closed_port()}", id="http://127.0.0.1:other-port"),
                                    "https://smith.langchain.com.evil.example"])
def test_a_foreign_origin_is_refused_and_makes_nothing(served, client, origin):
    thread_id = str(uuid.uuid4())
    start = len(served.fake.requests)
    status, headers, _ = send(served, "POST", "/threads", {"Origin": origin, "Content-Type": "application/json"},
                              json.dumps({"thread_id": thread_id}))
    assert status == 403 and not exists(client, thread_id)
    assert not any(name.startswith("access-control-") for name in headers)

    existing = client.threads.create()["thread_id"]
    status, _, _ = send(served, "POST", f"/threads/{existing}/runs/wait",
                        {"Origin": origin, "Content-Type": "application/json"},
                        json.dumps({"assistant_id": "react", "input": user("write a file")}))
    assert status == 403 and client.runs.list(existing) == []
    assert served.fake.requests[start:] == []

    status, headers, _ = send(served, "OPTIONS", "/threads", {
        "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type",
        "Access-Control-Request-Private-Network": "true"})
    assert status == 403 and not any(name.startswith("access-control-") for name in headers)


def test_a_body_that_is_not_json_is_refused_with_415(served, client):
    """What a page could send without a preflight: text/plain, even with JSON in it, and no Origin."""
    thread_id = str(uuid.uuid4())
    start = len(served.fake.requests)
    for content_type in ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded"):
        status, _, _ = send(served, "POST", "/threads", {"Content-Type": content_type},
                            json.dumps({"thread_id": thread_id}))
        assert status == 415
    assert not exists(client, thread_id)
    existing = client.threads.create()["thread_id"]
    status, _, _ = send(served, "POST", f"/threads/{existing}/runs/wait", {"Content-Type": "text/plain"},
                        json.dumps({"assistant_id": "react", "input": user("write a file")}))
    assert status == 415 and client.runs.list(existing) == []
    assert served.fake.requests[start:] == []


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1:1", "localhost.localdomain:{port}"])
def test_a_rebinding_host_is_refused(served, client, host):
    thread_id = str(uuid.uuid4())
    start = len(served.fake.requests)
    host = host.format(port=served.port)
    assert send(served, "GET", "/ok", {"Host": host})[0] == 403
    status, _, _ = send(served, "POST", "/threads", {"Host": host, "Content-Type": "application/json"},
                        json.dumps({"thread_id": thread_id}))
    assert status == 403 and not exists(client, thread_id)
    existing = client.threads.create()["thread_id"]
    status, _, _ = send(served, "POST", f"/threads/{existing}/runs/wait",
                        {"Host": host, "Content-Type": "application/json"},
                        json.dumps({"assistant_id": "react", "input": user("write a file")}))
    assert status == 403 and served.fake.requests[start:] == []
    assert send(served, "GET", "/ok", {"Host": f"localhost:{served.port}"})[0] == 200


def test_a_cross_site_request_without_origin_is_refused(served, client):
    """What an <img> or <script> on another site sends: no Origin, Sec-Fetch-Site: cross-site."""
    thread = client.threads.create()["thread_id"]
    assert send(served, "GET", f"/threads/{thread}", {"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert send(served, "GET", f"/threads/{thread}", {"Sec-Fetch-Site": "none"})[0] == 200


def test_allowed_origins_are_served_and_named_never_a_wildcard(served, client):
    own = f"http://localhost:{served.port}"
    status, headers, body = send(served, "POST", "/threads", {"Origin": own, "Content-Type": "application/json"}, "{}")
    assert status == 200 and headers["access-control-allow-origin"] == own and "Origin" in headers["vary"]
    thread = json.loads(body)["thread_id"]

    # The user's own origin (PAICLI_STUDIO_ORIGINS) runs the graph up to the model.
    start = len(served.fake.requests)
    served.fake.script.append(Reply("from the user's page"))
    status, headers, body = send(served, "POST", f"/threads/{thread}/runs/wait",
                                 {"Origin": USER_ORIGIN, "Content-Type": "application/json"},
                                 json.dumps({"assistant_id": "react", "input": user("hi from my page")}))
    assert status == 200 and headers["access-control-allow-origin"] == USER_ORIGIN
    assert len(served.fake.requests[start:]) == 1 and "from the user's page" in body

    # Studio's web UI: its preflight (with Private Network Access) is granted, for it alone.
    status, headers, _ = send(served, "OPTIONS", f"/threads/{thread}/runs/stream", {
        "Origin": "https://smith.langchain.com", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type", "Access-Control-Request-Private-Network": "true"})
    assert status == 200 and headers["access-control-allow-origin"] == "https://smith.langchain.com"
    assert headers["access-control-allow-private-network"] == "true"
    status, headers, _ = send(served, "OPTIONS", "/threads")  # no Origin: no browser, no grant
    assert "access-control-allow-private-network" not in headers and "access-control-allow-origin" not in headers


def test_a_non_loopback_host_needs_allow_remote(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    done = subprocess.run([*PAICLI, "studio", "--host", "0.0.0.0", "--port", str(closed_port())], cwd=project,
                          env=environment(home, "http://127.0.0.1:9/v1"), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=run_timeout())
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--allow-remote" in done.stderr and "运行命令" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (home / "studio").exists()  # nothing started, nothing written


def test_allow_remote_warns_and_still_refuses_foreign_origins(tmp_path):
    from langgraph_sdk import get_sync_client

    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    log = tmp_path / "studio.log"
    proc, url = start_studio(project, environment(home, "http://127.0.0.1:9/v1"), log, "--host", "0.0.0.0",
                             "--allow-remote", launcher=PAICLI)
    try:
        output = log.read_text(encoding="utf-8", errors="replace")
        assert "能访问该端口的任何人都能用你的 key 在这台机器上运行命令" in output
        client = get_sync_client(url=url, api_key=None)
        assert client.threads.create()["thread_id"]
        served = Served(url, urlsplit(url).port, project, home, tmp_path, None, log)  # type: ignore[arg-type]
        assert send(served, "POST", "/threads", {"Origin": EVIL, "Content-Type": "application/json"}, "{}")[0] == 403
        assert send(served, "GET", "/ok", {"Host": f"evil.example:{served.port}"})[0] == 403
    finally:
        assert interrupt_and_wait(proc) == 0


def test_a_project_env_cannot_allow_an_origin(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / ".env").write_text(f"PAICLI_STUDIO_ORIGINS={EVIL}\n", encoding="utf-8")
    done = subprocess.run([*PAICLI, "studio", "--port", str(closed_port())], cwd=project,
                          env=environment(home, "http://127.0.0.1:9/v1"), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=run_timeout())
    assert done.returncode == 2, done.stdout + done.stderr
    assert "设置了 PAICLI_STUDIO_ORIGINS，而项目不能选择它" in done.stderr
    assert not (home / "studio").exists()
