"""`paicli studio` end to end: the real command as a subprocess in a temporary project (fresh
PAICLI_HOME), the model a FakeOpenAIServer, driven with langgraph_sdk the way Studio drives it.

One server serves the module (starting one takes seconds); each test gives its thread(s) the
replies it needs by extending the fake model's script, and reads only the requests it caused.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.conftest import clean_environ, closed_port, run_timeout
from tests.support.openai_server import ErrorReply, FakeOpenAIServer, Reply
from tests.support.waiting import patience

# The Studio server, made once for the module: one xdist worker runs all its tests.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("studio-command")]

STARTUP_SECONDS = 90
STOP_SECONDS = 20
CLI_SESSION = str(uuid.uuid4())
MARKER = "marker text only the temporary project has"
BIG = "0123456789abcdef\n" * 200  # 3,400 characters: over the 2,000-character offload threshold


@dataclass
class Studio:
    url: str
    project: Path
    home: Path
    fake: FakeOpenAIServer
    env: dict[str, str]
    proc: subprocess.Popen
    log: Path

    def paicli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "paicli", *args], cwd=self.project, env=self.env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=run_timeout())

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def start_studio(project: Path, env: dict[str, str], log: Path, *extra: str, cwd: Path | None = None,
                 launcher: tuple[str, ...] = (sys.executable, "-m", "paicli")) -> tuple[subprocess.Popen, str]:
    port = closed_port()
    with log.open("wb") as out:
        proc = subprocess.Popen([*launcher, "studio", "--port", str(port), *extra],
                                cwd=cwd or project,
                                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + STARTUP_SECONDS
    while "按 Ctrl-C 停止。" not in log.read_text(encoding="utf-8", errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"paicli studio did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.1)  # bounded by the deadline: polling for the ready line
    return proc, f"http://127.0.0.1:{port}"


def interrupt_and_wait(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("paicli studio did not stop on SIGINT")


def environment(home: Path, base_url: str) -> dict[str, str]:
    env = clean_environ()
    env.update(PAICLI_HOME=str(home), PAICLI_API_KEY="test-key", PAICLI_BASE_URL=base_url, PAICLI_MODEL="m",
               PAICLI_MEMORY_AUTO_EXTRACT_ENABLED="false", PAICLI_TOOL_OFFLOAD_THRESHOLD_CHARS="2000")
    return env


@pytest.fixture(scope="module")
def studio(tmp_path_factory) -> Studio:
    root = tmp_path_factory.mktemp("studio")
    project, home = root / "project", root / "home"
    project.mkdir()
    home.mkdir()
    (project / "marker.txt").write_text(MARKER, encoding="utf-8")
    (project / "big.txt").write_text(BIG, encoding="utf-8")
    fake = FakeOpenAIServer([Reply("CLI answer.")]).start()
    env = environment(home, fake.base_url)
    made = subprocess.run([sys.executable, "-m", "paicli", "-p", "hello from the cli", "--session", CLI_SESSION],
                          cwd=project, env=env, capture_output=True, text=True, timeout=run_timeout())
    assert made.returncode == 0, made.stderr
    fake.script.append(Reply("named answer."))
    named = subprocess.run([sys.executable, "-m", "paicli", "-p", "hello again", "--session", "my-notes"],
                           cwd=project, env=env, capture_output=True, text=True, timeout=run_timeout())
    assert named.returncode == 0, named.stderr
    proc, url = start_studio(project, env, root / "studio.log")
    yield Studio(url, project, home, fake, env, proc, root / "studio.log")
    if proc.poll() is None:
        interrupt_and_wait(proc)
    fake.stop()


@pytest.fixture
def client(studio: Studio):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=studio.url, api_key=None)


def user(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def new_requests(studio: Studio, start: int) -> list[dict]:
    return studio.fake.requests[start:]


def test_a_cli_session_is_a_thread_studio_lists_and_continues(studio, client):
    state = client.threads.get_state(CLI_SESSION)
    assert [(m["type"], m["content"]) for m in state["values"]["messages"]] == [
        ("human", "hello from the cli"), ("ai", "CLI answer.")]
    listed = client.threads.search(metadata={"graph_id": "react"}, limit=100)
    assert CLI_SESSION in [t["thread_id"] for t in listed]

    start = len(studio.fake.requests)
    studio.fake.script.append(Reply("Studio answer."))
    client.runs.wait(CLI_SESSION, "react", input=user("and from studio"))
    [request] = new_requests(studio, start)
    assert [m["content"] for m in request["messages"][1:]] == ["hello from the cli", "CLI answer.", "and from studio"]
    ledger = studio.home / "history" / "raw" / f"{CLI_SESSION}.jsonl"
    assert "Studio answer." in ledger.read_text(encoding="utf-8")  # the same ledger the CLI wrote


def test_a_session_named_by_hand_is_named_as_cli_only(studio):
    # It was called "id 为 session-… 的旧会话" whatever its id (`--session my-notes` is no old session).
    assert ("ℹ️ 1 个会话的 id 不是 UUID（my-notes），只能在 CLI 中使用（服务器只接受 UUID 形式的 thread id）："
            "用 paicli --session ID 继续它们") in studio.output().splitlines()


def test_a_new_cli_session_gets_a_uuid_and_shows_up_while_the_server_runs(studio, client):
    before = {p.stem for p in (studio.home / "history" / "raw").glob("*.jsonl")}
    studio.fake.script.append(Reply("fresh answer"))
    done = studio.paicli("-p", "a fresh session")
    assert done.returncode == 0, done.stderr
    [new_id] = {p.stem for p in (studio.home / "history" / "raw").glob("*.jsonl")} - before
    assert str(uuid.UUID(new_id)) == new_id
    deadline = time.monotonic() + patience(20)
    while new_id not in [t["thread_id"] for t in client.threads.search(limit=100)]:
        assert time.monotonic() < deadline, "the new CLI session was not registered"
        time.sleep(0.2)  # the server registers new sessions every few seconds
    assert client.threads.get_state(new_id)["values"]["messages"][-1]["content"] == "fresh answer"


def test_tools_work_in_the_project_and_offload_into_the_threads_folder(studio, client):
    thread = client.threads.create()["thread_id"]
    start = len(studio.fake.requests)
    studio.fake.script.extend([
        Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": "marker.txt"}},
                              {"name": "read_file", "arguments": {"path": "big.txt"}}]),
        Reply("Read both."),
    ])
    client.runs.wait(thread, "react", input=user("read the files"))  # no context: the defaults apply
    results = [m["content"] for m in new_requests(studio, start)[1]["messages"] if m["role"] == "tool"]
    assert MARKER in results[0]
    offloaded = list((studio.project / ".paicli" / "tool-outputs" / thread).glob("*read_file*"))
    assert len(offloaded) == 1 and BIG in offloaded[0].read_text(encoding="utf-8")
    assert not (studio.project / ".paicli" / "tool-outputs" / "default").exists()


def test_a_failed_model_call_fails_the_run_and_keeps_the_history(studio, client):
    thread = client.threads.create()["thread_id"]
    body = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                      "code": "invalid_api_key"}}
    studio.fake.script.append(ErrorReply(401, body))
    result = client.runs.wait(thread, "react", input=user("this will fail"), raise_error=False)
    [run] = client.runs.list(thread)
    assert run["status"] == "error"
    assert "❌ 调用 LLM 失败" in str(result["__error__"]["message"])
    messages = client.threads.get_state(thread)["values"]["messages"]
    assert [(m["type"], m["content"]) for m in messages] == [("human", "this will fail")]


@pytest.mark.parametrize("empty", [{"messages": []}, {}])
def test_input_without_a_user_message_is_refused_before_the_model(studio, client, empty):
    thread = client.threads.create()["thread_id"]
    start = len(studio.fake.requests)
    result = client.runs.wait(thread, "react", input=empty, raise_error=False)
    assert "no user message" in str(result["__error__"]["message"])
    assert client.runs.list(thread)[0]["status"] == "error"
    assert new_requests(studio, start) == []
    assert not (client.threads.get_state(thread)["values"] or {}).get("messages")


def test_a_blank_user_message_is_refused_before_the_model(studio, client):
    thread = client.threads.create()["thread_id"]
    start = len(studio.fake.requests)
    result = client.runs.wait(thread, "react", input=user("  "), raise_error=False)
    assert "no user message" in str(result["__error__"]["message"])
    assert new_requests(studio, start) == []


def test_the_input_schema_is_the_messages_only(client):
    [assistant] = client.assistants.search(graph_id="react")
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    assert list(schemas["input_schema"]["properties"]) == ["messages"]


def test_paicli_studio_serves_the_plan_graph_with_the_same_input(client):
    [assistant] = client.assistants.search(graph_id="plan")
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    assert list(schemas["input_schema"]["properties"]) == ["messages"]


def test_every_resume_value_the_interrupt_lists_works(studio, client):
    thread = client.threads.create()["thread_id"]
    calls = [{"name": "execute_command", "arguments": {"command": f"echo {n} > {n}.txt"}}
             for n in ("one", "two", "three", "four", "five", "six")]
    start = len(studio.fake.requests)
    studio.fake.script.extend([Reply("", tool_calls=calls), Reply("All handled.")])
    client.runs.wait(thread, "react", input=user("run them"))

    def answer(pick) -> dict:
        (pending,) = client.threads.get_state(thread)["interrupts"]
        value = pick(pending["value"])
        client.runs.wait(thread, "react", command={"resume": {pending["id"]: value}})
        return pending["value"]

    first = answer(lambda v: v["resume"]["approve"])
    assert "approve_all" in first["help"] and "批准" in first["help"] and first["args"] == {"command": "echo one > one.txt"}
    answer(lambda v: {**v["resume"]["reject"], "reason": "not this one"})
    answer(lambda v: v["resume"]["skip"])
    answer(lambda v: {**v["resume"]["edit"], "args": {"command": "echo edited > edited.txt"}})
    answer(lambda v: "maybe")  # not understood: asked again, nothing decided
    again = answer(lambda v: v["resume"]["approve_all"])
    assert again["args"] == {"command": "echo five > five.txt"} and "maybe" in again["problem"]

    assert client.threads.get(thread)["status"] == "idle"  # "six" ran without a question
    files = sorted(p.name for p in studio.project.glob("*.txt"))
    assert files == ["big.txt", "edited.txt", "five.txt", "marker.txt", "one.txt", "six.txt"]
    results = [m["content"] for m in new_requests(studio, start)[1]["messages"] if m["role"] == "tool"]
    assert "[HITL] 操作已被拒绝：not this one\n" in results[1] and "[HITL] 操作已被跳过\n" in results[2]
    assert client.threads.get_state(thread)["values"]["messages"][-1]["content"] == "All handled."


def test_sigint_stops_the_server_cleanly(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    proc, url = start_studio(project, environment(home, "http://127.0.0.1:9/v1"), tmp_path / "log")
    assert interrupt_and_wait(proc) == 0
    output = (tmp_path / "log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in output and "paicli studio: 已停止" in output
    assert f"🚀 API: {url}" in output and f"baseUrl={url}" in output
    with pytest.raises(OSError):  # nothing listens any more: the server's process group is gone
        import urllib.request

        urllib.request.urlopen(f"{url}/ok", timeout=2)


def test_host_and_project_flags_serve_the_named_project_from_elsewhere(tmp_path):
    """--host, --project and --debug, started from another directory: runs work in the project."""
    from langgraph_sdk import get_sync_client

    project, home, elsewhere = tmp_path / "named", tmp_path / "home", tmp_path / "elsewhere"
    for folder in (project, home, elsewhere):
        folder.mkdir()
    (project / "marker.txt").write_text(MARKER, encoding="utf-8")
    with FakeOpenAIServer([Reply(tool_calls=[{"name": "read_file", "arguments": {"path": "marker.txt"}}]),
                           Reply("read it")]) as fake:
        env = environment(home, fake.base_url)
        proc, url = start_studio(project, env, tmp_path / "studio.log", "--host", "127.0.0.1",
                                 "--project", str(project), "--debug", cwd=elsewhere)
        try:
            client = get_sync_client(url=url, api_key=None)
            thread = client.threads.create()["thread_id"]
            client.runs.wait(thread, "react", input=user("read marker.txt"))
            assert MARKER in str(fake.requests[-1]["messages"])
            # issue 23: the server's config and working directory are in PAICLI_HOME, not in the project
            assert len(list((home / "studio" / "projects").glob(f"{project.name}-*/langgraph.json"))) == 1
            assert not (project / ".paicli" / "studio").exists() and not (elsewhere / ".paicli").exists()
        finally:
            assert interrupt_and_wait(proc) == 0
