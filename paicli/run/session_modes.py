"""Session modes and approval levels (reference s.1 item 9, v.1): the texts and the rules that
tie them together. The App holds the current mode and level; the REPL's Shift+Tab, ``/mode`` and
``/hitl`` change them through here.

- Modes ``auto`` (default) → ``plan`` → ``ask``, cycled by Shift+Tab. ``ask`` sets the approval
  level ``ask`` (``/hitl on``); the others set ``auto`` (``/hitl default``). ``plan`` also makes
  every ordinary input a Plan run.
- Levels, as ``RunContext.approval`` spells them: ``auto`` (``/hitl default``), ``ask``
  (``/hitl on``), ``yes`` (``--yes``: every question approved; policy denials still apply).
"""

from __future__ import annotations

SESSION_MODES = ("auto", "plan", "ask")
DEFAULT_SESSION_MODE = "auto"
# reference s.1 item 9: the hint descriptions
MODE_DESCRIPTIONS = {
    "auto": "自动审查，低风险命令直接执行（默认）",
    "plan": "每条输入先规划，审阅后执行",
    "ask": "审批：全部危险操作都确认",
}
UNKNOWN_MODE = "未知模式：{mode}，可选 auto / plan / ask"
SWITCHED_MODE = "已切换到 {mode} 模式：{description}"

# reference v.1: the labels of the levels. `on` names paicli's own dangerous tools.
LEVEL_LABELS = {
    "auto": "auto（Shell 命令由模型审查，低风险直接执行；有风险的操作交回模型处理，同一轮连续被拦 3 次才请求确认）",
    "ask": "审批（写文件、编辑文件、执行命令、回滚快照、写 Skill 参考文件、MCP 工具都要确认）",
    "yes": "全部放行（--yes：所有审批请求自动批准；安全策略的拒绝仍然生效）",
}
HITL_WORDS = {"on": "ask", "default": "auto"}
HITL_HINTS = ("   /hitl on      - 审批：全部危险操作都确认",
              "   /hitl default - auto：低风险命令直接执行，有风险的交回模型处理（启动默认）")
UNKNOWN_HITL = "❌ 未知 /hitl 参数: {arg}，用法: /hitl、/hitl on 或 /hitl default"


def level_of(mode: str) -> str:
    """The approval level a session mode sets (reference s.1 item 9)."""
    return "ask" if mode == "ask" else "auto"


def next_mode(mode: str) -> str:
    """Shift+Tab: auto → plan → ask → auto."""
    if mode not in SESSION_MODES:
        return DEFAULT_SESSION_MODE
    return SESSION_MODES[(SESSION_MODES.index(mode) + 1) % len(SESSION_MODES)]


def mode_lines(current: str) -> list[str]:
    """``/mode`` without an argument."""
    lines = [f"当前模式：{current}（{MODE_DESCRIPTIONS[current]}）",
             "   Shift+Tab 按 auto → plan → ask 循环切换，也可以直接输入："]
    return lines + [f"   /mode {mode:<5} - {MODE_DESCRIPTIONS[mode]}" for mode in SESSION_MODES]


def switched(mode: str) -> str:
    return SWITCHED_MODE.format(mode=mode, description=MODE_DESCRIPTIONS[mode])
