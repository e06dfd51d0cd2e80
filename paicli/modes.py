"""The modes besides ReAct that the CLI runs as graphs of their own (``paicli.mode_run``).

Team adds itself here: ``"team": ModeSpec(build=graphs.team.build_team, actor="orchestrator")``.
"""

from __future__ import annotations

from graphs.plan import build_plan
from paicli.mode_run import ModeSpec

MODE_SPECS: dict[str, ModeSpec] = {
    "plan": ModeSpec(build=build_plan, actor="planner"),
}
# reference (s.1 item 5): what a run prints when it starts
MODE_BANNERS = {"plan": "📋 使用 Plan-and-Execute 模式"}
CANCELLED = {"plan": "⏹️ 已取消当前计划执行。"}  # reference (s.7)
