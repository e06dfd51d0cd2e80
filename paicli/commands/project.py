"""``/init``, ``/export``, ``/history clear``, ``/policy`` and ``/config`` (reference u.1, i, v.7).

Their lines quote file names, settings and the conversation: the REPL's and ``-p``'s printers make
them visible-only (``paicli.ui.terminal``), as for every command.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paicli.app import App
    from paicli.commands.output import Output

RECENT_DENIALS = 5
EXPORT_RESULT_CHARS = 4_000  # a tool result in the export, cut to this
ORIGIN_LABELS = {"the environment": "环境变量", ".env": "项目 .env", "config.json": "config.json", "default": "默认"}


def init(app: App, payload: str, say: Output) -> None:
    """reference (i): ``/init [--force]``."""
    from paicli.commands.project_init import USAGE, init_pai_md

    if payload.lower() not in ("", "--force"):
        say.fail(f"❌ 未知 /init 参数: {payload}")
        say(USAGE)
        return
    written, line = init_pai_md(app.settings.project_root, force=bool(payload))
    (say if written else say.fail)(line)


def history(app: App, payload: str, say: Output) -> None:
    """reference (u.1): ``/history clear`` empties the REPL's input history (the file and what
    the open prompt remembers)."""
    if payload.lower() != "clear":
        say.fail(f"❌ 未知 /history 参数: {payload or '（空）'}，用法: /history clear")
        return
    path = app.settings.home / "history" / "input.history"
    try:
        if path.exists():
            path.write_text("", encoding="utf-8")
    except OSError as exc:
        say.fail(f"❌ 无法清空 {path}: {exc.strerror or exc}")
        return
    if app.on_history_clear is not None:
        app.on_history_clear()
    say("🧹 输入历史已清空")


# --- /export ------------------------------------------------------------------------------

def _fenced(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run inside, so the text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def export_markdown(messages: list[Any], session_id: str, model: str, project: Path, now: datetime) -> str:
    """The conversation as Markdown: user and assistant text, each tool call folded with its result."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from paicli.memory.context.rounds import internal_kind
    from paicli.memory.tokens import text_of
    from paicli.tools.boundary import unwrap

    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    out = [f"# paicli 会话 {session_id}", "",
           f"- 导出时间：{now.isoformat(timespec='seconds')}", f"- 模型：{model}", f"- 项目：{project}", ""]
    for message in messages:
        if isinstance(message, HumanMessage) and internal_kind(message) is None:
            out += ["## 你", "", text_of(message).strip(), ""]
        elif isinstance(message, AIMessage):
            text = text_of(message).strip()
            if text or message.tool_calls:
                out += ["## 助手", ""] + ([text, ""] if text else [])
            for call in message.tool_calls:
                result = results.get(call.get("id"))
                body = unwrap(str(result.content)) if result is not None else "（没有结果）"
                if len(body) > EXPORT_RESULT_CHARS:
                    body = body[:EXPORT_RESULT_CHARS] + f"\n…（结果共 {len(body)} 字符，已截断）"
                status = "" if result is None or result.status != "error" else " ⚠️"
                out += ["<details>", f"<summary>🔧 {call.get('name')}{status}</summary>", "",
                        _fenced(json.dumps(call.get("args"), ensure_ascii=False, indent=2), "json"), "",
                        _fenced(body), "", "</details>", ""]
    return "\n".join(out)


async def export(app: App, payload: str, say: Output) -> None:
    """reference (u.1, x): ``/export`` writes the conversation under ``$PAICLI_HOME/exports/``."""
    if payload:
        say.fail("❌ /export 不带参数，用法: /export")
        return
    messages = await app.session.messages()
    if not messages:
        say("📭 当前会话还没有可导出的内容")
        return
    now = datetime.now().astimezone()
    folder = app.settings.home / "exports"
    path = folder / f"{app.session_id}-{now.strftime('%Y%m%d-%H%M%S')}.md"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(export_markdown(messages, app.session_id, app.settings.model, app.settings.project_root, now),
                        encoding="utf-8")
    except OSError as exc:
        say.fail(f"❌ 导出失败: {exc.strerror or exc}")
        return
    say(f"📤 已导出当前会话（{len(messages)} 条消息）到: {path}")


# --- /policy ------------------------------------------------------------------------------

def refused(entry: dict[str, Any]) -> bool:
    """A denial (the turn policy, the reviewer, the person) or a guard's refusal at execution."""
    return entry.get("outcome") == "deny" or str(entry.get("reason") or "").startswith("🛡️")


async def policy(app: App, payload: str, say: Output) -> None:
    """reference (v.7) ``/policy``, with the approval level, the "approve all" choices and the
    day's recent denials."""
    from paicli.app import sandbox_lines
    from paicli.run.session_modes import LEVEL_LABELS
    from paicli.tools.policy.approval import asking_tools
    from paicli.tools.policy.audit import AuditLog
    from paicli.tools.specs import EVERY_SPEC

    # the session's table (MCP and browser tools as they joined it); before it exists, paicli's own
    tools = app.session.deps.tools if app.started else {spec.name: spec for spec in EVERY_SPEC}
    approved = sorted((await app.session.values()).get("approved_all") or []) if app.started else []
    denials = [e for e in AuditLog(app.audit_dir).recent(200) if refused(e)][-RECENT_DENIALS:]
    say("🛡️ 安全策略状态：")
    say(f"   项目根: {app.settings.project_root}")
    say(f"   危险工具: {', '.join(asking_tools(tools))}，以及所有 mcp__ 前缀工具")
    fenced = " / ".join(name for name, spec in tools.items() if spec.facts.guard == "path")
    say(f"   路径围栏: 强制限定在项目根之内（{fenced}）")
    say("   命令黑名单: sudo / rm -rf 全盘 / mkfs / dd of=/dev / fork bomb / curl|sh / find / / chmod 777 / / shutdown")
    say("   写入文件上限: 5MB")
    say("   命令执行上限: 60 秒，输出 8KB（截断）")
    say(f"   审计目录: {app.audit_dir}")
    for line in sandbox_lines(app.settings):  # issue 24: the sandbox, its writable roots, network
        say(f"   {line.strip()}")
    from paicli.commands.browser import policy_line

    say(f"   {policy_line(app)}")  # issue 40
    say(f"   审批档位: {LEVEL_LABELS.get(app.approval, app.approval)}")
    say(f"   全部放行: {', '.join(approved) if approved else '无'}")
    if not denials:
        say("   最近拒绝: 今日没有")
        return
    say(f"   最近拒绝（今日最后 {len(denials)} 条）:")
    for entry in denials:
        reason = str(entry.get("reason") or "").replace("\n", " ")[:100]
        say(f"     {entry.get('timestamp', '')} {entry.get('tool', '')} (approver={entry.get('approver', 'none')})"
            + (f" 原因: {reason}" if reason else ""))


# --- /config ------------------------------------------------------------------------------

def mask(key: str | None) -> str:
    """Never the key itself: its last four characters only when it is long enough to spare them."""
    if not key:
        return "未设置"
    return f"已设置（••••{key[-4:]}，{len(key)} 个字符）" if len(key) >= 16 else "已设置（••••）"


def config(app: App, payload: str, say: Output) -> None:
    """``/config``: the effective settings and where each came from; the key masked.
    ``/config provider [名称]`` lists the providers or makes one the default (issue 39)."""
    sub, _, rest = payload.partition(" ")
    if sub.lower() == "provider":
        from paicli.commands.model import config_provider

        config_provider(rest, app, say)
        return
    if payload:
        say.fail(f"❌ /config 只用于查看；修改请设置环境变量或编辑 {app.settings.home / 'config.json'}")
        return
    s = app.settings
    origin = lambda name: ORIGIN_LABELS.get(s.origins.get(name, "default"), "默认")  # noqa: E731
    key_name = next((n for n in s.origins if n.endswith("_API_KEY")), "PAICLI_API_KEY")
    price = s.price()
    rows = [
        ("provider", s.provider, "PAICLI_PROVIDER"),
        ("model", s.model, "PAICLI_MODEL"),
        ("base_url", s.base_url, "PAICLI_BASE_URL"),
        (key_name, mask(s.api_key), key_name),
        ("context_window", f"{s.context_window:,}", "PAICLI_CONTEXT_WINDOW"),
        ("light_model", s.light_model, "PAICLI_LIGHT_MODEL"),
        ("hitl", {"ask": "on", "auto": "default"}.get(s.approval, s.approval), "PAICLI_HITL"),
        ("auto_classifier_model", s.review_model or f"{s.model}（会话模型）", "PAICLI_AUTO_CLASSIFIER_MODEL"),
        ("status_bar", "on" if s.status_bar else "off", "PAICLI_STATUS_BAR"),
        ("show_thinking", s.show_thinking, "PAICLI_SHOW_THINKING"),  # issue 39
        ("web_search", s.web.search.kind if s.web.search else "未配置（不提供 web_search）", "PAICLI_SEARCH_PROVIDER"),
        ("memory_dir", str(s.memory_dir), "PAICLI_MEMORY_DIR"),
        ("memory_auto_extract", "on" if s.memory.auto_extract else "off", "PAICLI_MEMORY_AUTO_EXTRACT_ENABLED"),
        ("session_wait", f"{s.session_wait}s", "PAICLI_SESSION_WAIT"),
        ("plan_max_replans", str(s.plan_max_replans), "PAICLI_PLAN_MAX_REPLANS"),
    ]
    say("⚙️ 当前配置（优先级：环境变量 > 项目 .env > config.json > 默认）：")
    for name, value, variable in rows:
        say(f"   {name:<22} {value}  [{origin(variable)}]")
    say(f"   {'price':<22} " + (f"输入 {price.input:g} / 输出 {price.output:g}"
                                 + (f" / 缓存命中 {price.cached:g}" if price.cached is not None else "")
                                 + " 元每百万 tokens" if price else "未知（状态栏不显示费用）"))
    say(f"   PAICLI_HOME: {s.home}   项目: {s.project_root}")
    say(f"   config.json: {s.home / 'config.json'}{'' if (s.home / 'config.json').exists() else '（不存在）'}")
    level = {"ask": "on", "auto": "default", "yes": "--yes"}.get(app.approval, app.approval)
    say(f"   当前会话: 模式 {app.session_mode}，审批档位 {level}")


def audit(app: App, payload: str, say: Output) -> None:
    """reference (v.7): today's last N risky tool calls (N defaults to 10, clamped to 1..100)."""
    from paicli.tools.policy.audit import AuditLog, format_recent, recent_count

    count = recent_count(payload or None)
    say(format_recent(AuditLog(app.audit_dir).recent(count), count))
