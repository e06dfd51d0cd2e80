"""The modes besides ReAct that the CLI runs as graphs of their own (``paicli.mode_run``)."""

from __future__ import annotations

from graphs.plan import build_plan
from graphs.team import build_team
from paicli.mode_run import ModeSpec

MODE_SPECS: dict[str, ModeSpec] = {
    "plan": ModeSpec(build=build_plan, actor="planner"),
    "team": ModeSpec(build=build_team, actor="orchestrator"),
}
# reference (s.1 item 5): what a run prints when it starts
MODE_BANNERS = {"plan": "📋 使用 Plan-and-Execute 模式", "team": "👥 使用多 Agent 协作模式"}
CANCELLED = {"plan": "⏹️ 已取消当前计划执行。", "team": "⏹️ 已取消当前多 Agent 任务。"}  # reference (s.7)
# Issue 26: the closing lines of a run that did not complete, each naming the session.
STOPPED = "⏸️ 运行未完成（会话 {sid}）。继续：paicli --session {sid} --continue"
STOPPED_REPL = "⏸️ 运行未完成（会话 {sid}），输入 /continue 继续执行。"
NOT_COMPLETED = "会话 {sid}，回到它：paicli --session {sid}"
