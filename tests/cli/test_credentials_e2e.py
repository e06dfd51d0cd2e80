"""Issue 10 items 5 and 8 end to end: a cloned project cannot send the user's key elsewhere,
commands never see the key, and nothing of ours lands in /tmp under a fixed name."""

from __future__ import annotations

import json
import stat

import pytest

from tests.cli.test_oneshot import call, problem_lines, tool_results
from tests.support.openai_server import FakeOpenAIServer, Reply

USER_KEY = "sk-user-0123456789"


@pytest.fixture
def other_server():
    """The server a hostile project's .env points at."""
    with FakeOpenAIServer() as fake:
        yield fake


def user_config(paicli_home, **values) -> None:
    (paicli_home / "config.json").write_text(json.dumps(values), encoding="utf-8")


def dotenv(project, **values) -> None:
    (project / ".env").write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")


# --- item 5: the endpoint a project may choose ----------------------------------------------------

def test_dotenv_base_url_with_the_users_key_is_refused_before_any_request(
        server, other_server, run_paicli, project, paicli_home):
    user_config(paicli_home, base_url=server.base_url)
    dotenv(project, PAICLI_BASE_URL=other_server.base_url)
    server.script = other_server.script = [Reply("hi")]
    done = run_paicli("-p", "hello", env={"PAICLI_BASE_URL": None, "PAICLI_API_KEY": USER_KEY})
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = problem_lines(done.stderr)
    assert f"{project / '.env'} 设置了 PAICLI_BASE_URL" in line and USER_KEY not in line
    assert other_server.requests == [] and server.requests == []


def test_dotenv_provider_with_the_users_provider_key_is_refused(
        server, other_server, run_paicli, project, paicli_home):
    user_config(paicli_home, base_url=server.base_url)
    dotenv(project, PAICLI_PROVIDER="deepseek")
    server.script = [Reply("hi")]
    done = run_paicli("-p", "hello", env={"PAICLI_BASE_URL": None, "PAICLI_API_KEY": None,
                                          "DEEPSEEK_API_KEY": USER_KEY})
    assert done.returncode == 2
    (line,) = problem_lines(done.stderr)
    assert f"{project / '.env'} 设置了 PAICLI_PROVIDER" in line and "DEEPSEEK_API_KEY" in line
    assert other_server.requests == [] and server.requests == []


@pytest.mark.parametrize(("setting", "value"), [
    ("PAICLI_WEB_ALLOW_HOSTS", "169.254.169.254"),
    ("PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT", "false"),
    ("PAICLI_MEMORY_DIR", "planted-memories"),
    ("PAICLI_AUDIT_DIR", "audit"),
    ("PAICLI_SEARXNG_URL", "http://127.0.0.1:9/"),
])
def test_dotenv_may_not_set_a_guard_setting(server, run_paicli, project, setting, value):
    dotenv(project, **{setting: value})
    server.script = [Reply("hi")]
    done = run_paicli("-p", "hello")
    assert done.returncode == 2
    (line,) = problem_lines(done.stderr)
    assert f"{project / '.env'} 设置了 {setting}" in line
    assert server.requests == []


def test_the_same_guard_setting_from_the_environment_is_used(server, run_paicli, project):
    server.script = [Reply("hi")]
    done = run_paicli("-p", "hello", env={"PAICLI_WEB_ALLOW_HOSTS": "127.0.0.1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hi"


def test_dotenv_with_its_own_endpoint_and_key_is_used(server, other_server, run_paicli, project, paicli_home):
    user_config(paicli_home, base_url=server.base_url, api_key=USER_KEY)
    dotenv(project, PAICLI_BASE_URL=other_server.base_url, PAICLI_API_KEY="project-key")
    other_server.script = [Reply("from the project's server")]
    done = run_paicli("-p", "hello", env={"PAICLI_BASE_URL": None, "PAICLI_API_KEY": None})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from the project's server\n"
    (request,) = other_server.requests
    assert request.headers["authorization"] == "Bearer project-key"
    assert server.requests == []


def test_dotenv_model_only_is_harmless_and_goes_to_the_users_endpoint(server, run_paicli, project):
    dotenv(project, PAICLI_MODEL="project-model")
    server.script = [Reply("hi")]
    done = run_paicli("-p", "hello", env={"PAICLI_MODEL": None, "PAICLI_API_KEY": USER_KEY})
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    assert request["model"] == "project-model" and request.headers["authorization"] == f"Bearer {USER_KEY}"


# --- item 8: commands do not see the key ----------------------------------------------------------

def test_commands_do_not_see_the_api_keys(server, run_paicli):
    server.script = [
        Reply("", tool_calls=[call("execute_command", {"command": "env; printenv"})]),
        Reply("done"),
    ]
    done = run_paicli("-p", "show the environment", "--yes",
                      env={"PAICLI_API_KEY": USER_KEY, "DEEPSEEK_API_KEY": "sk-deepseek-987654",
                           "KEY_COPY": USER_KEY, "HARMLESS_MARKER": "visible-value"})
    assert done.returncode == 0, done.stderr
    (result,) = tool_results(server.requests[1])
    output = result["content"]
    assert "HARMLESS_MARKER=visible-value" in output  # the environment was really printed
    assert USER_KEY not in output and "sk-deepseek-987654" not in output
    assert "PAICLI_API_KEY" not in output and "KEY_COPY" not in output


# --- nothing under a fixed name in /tmp -----------------------------------------------------------

def test_internal_error_traceback_goes_to_a_private_log_under_paicli_home(server, run_paicli, paicli_home):
    (paicli_home / "history").write_text("not a directory", encoding="utf-8")  # an unexpected state
    done = run_paicli("-p", "hello")
    assert done.returncode == 1
    log = paicli_home / "logs" / "crash.log"
    assert f"traceback 见 {log}" in done.stderr and "Traceback" not in done.stderr
    assert "NotADirectoryError" in log.read_text(encoding="utf-8")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


@pytest.mark.process  # jieba loads its dictionary (and writes the cache) once per process
def test_jieba_dictionary_cache_is_kept_under_paicli_home(server, run_paicli, paicli_home, project):
    memory = paicli_home / "memory" / "long_term_memory.json"
    memory.parent.mkdir()
    memory.write_text(json.dumps([{
        "id": "fact-1a2b3c4d", "content": "项目使用 Java 17 构建", "type": "FACT",
        "timestamp": "2026-09-23T08:00:00Z", "lastVerifiedAt": "2026-09-23T08:00:00Z",
        "metadata": {"source": "fact", "scope": "global"}, "tokenCount": 8}], ensure_ascii=False), encoding="utf-8")
    server.script = [Reply("Java 17")]
    done = run_paicli("-p", "项目用什么 Java 版本构建")
    assert done.returncode == 0, done.stderr
    assert "项目使用 Java 17 构建" in server.requests[0]["messages"][-1]["content"]  # retrieval ran (issue 13: with the turn)
    assert (paicli_home / "cache" / "jieba.cache").is_file()
    assert stat.S_IMODE((paicli_home / "cache").stat().st_mode) == 0o700
