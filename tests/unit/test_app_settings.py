"""The App is the one way to the settings (issue 25 item 5): ``/model`` changes them there, before
and after the session starts, and the session's own model follows."""

from paicli.app import App
from paicli.commands import dispatch as commands
from paicli.run.result import Usage


class Args:
    mode, session, project, yes = "react", None, None, False


async def test_model_switch_changes_the_apps_settings_before_and_after_the_session_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAICLI_API_KEY", "k")
    monkeypatch.chdir(tmp_path)
    said, app = [], App(Args())
    await commands.handle("/model glm-a", app, said.append)
    assert app.settings.model == "glm-a" and not app.started
    session = app.session
    assert session.settings.model == "glm-a"
    await commands.handle("/model glm-b", app, said.append)
    assert app.settings.model == session.settings.model == "glm-b"
    assert session.deps.model.model_name == "glm-b"
    assert [line for line in said if "glm-b" in line]


class ResumedArgs(Args):
    session, yes = "kept-1", True


async def test_the_app_and_its_session_share_one_state_before_and_after_it_starts(tmp_path, monkeypatch):
    """Issue 36 item 2: the session id, approval level, mode and counts live in one SessionState;
    the App holds no copy, so what /hitl, /mode or /resume change is what the other side reads."""
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAICLI_API_KEY", "k")
    monkeypatch.chdir(tmp_path)
    said, app = [], App(ResumedArgs())
    assert (app.session_id, app.approval, app.session_mode) == ("kept-1", "yes", "auto") and not app.started
    await commands.handle("/hitl on", app, said.append)  # before the session exists
    assert app.approval == "ask" and app.session_mode == "ask" and not app.started
    assert app.token_stats_line().startswith("Token 统计: 调用 0 次") and app.background_notices() == []
    session = app.session
    assert session.state is app.state and (session.session_id, session.approval) == ("kept-1", "ask")
    assert session.context.approval == "ask" and session.deps.background is app.state.background
    await commands.handle("/mode auto", app, said.append)
    assert session.approval == session.context.approval == "auto"
    session.usage += Usage(calls=2)
    assert app.token_stats_line().startswith("Token 统计: 调用 2 次")
    session.resume("other-2")
    assert app.session_id == "other-2" and session.config["configurable"]["thread_id"] == "other-2"
