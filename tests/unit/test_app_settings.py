"""The App is the one way to the settings (issue 25 item 5): ``/model`` changes them there, before
and after the session starts, and the session's own model follows."""

from paicli.app import App
from paicli.commands import dispatch as commands


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
