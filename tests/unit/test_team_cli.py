"""``/team``: with a goal it starts a Team run, alone it makes the next input one (reference s.1
items 4 and 8); Team is one of the modes the shared runner knows."""

from __future__ import annotations

from paicli.app import App
from paicli.commands import dispatch as commands
from paicli.modes import MODE_SPECS


class Args:
    mode, session, project, yes = "react", None, None, False


async def test_team_with_a_goal_starts_a_run_and_without_one_makes_the_next_input_a_team_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path))
    monkeypatch.setenv("PAICLI_API_KEY", "k")
    said, app = [], App(Args())
    assert (await commands.handle("/team 汇总两个文件", app, said.append)).run == ("team", "汇总两个文件")
    assert (await commands.handle("/TEAM", app, said.append)).run is None
    assert said == ["👥 下一条任务将使用多 Agent 协作模式（规划者 + 执行者 + 检查者），输入任务前按 ESC 可取消，执行完成后自动回到默认 ReAct。"]
    assert app.mode_for_input() == "team" and app.mode_for_input() == "react"  # the next input only
    assert "/team" in commands.NAMES and any(line.startswith("   /team [任务] - ") for line in commands.help_lines())


def test_team_is_registered_with_the_shared_runner():
    assert MODE_SPECS["team"].actor == "orchestrator"
    assert MODE_SPECS["team"].banner == "👥 使用多 Agent 协作模式"
    assert MODE_SPECS["team"].cancelled == "⏹️ 已取消当前多 Agent 任务。"
