"""Slash commands (reference u.1), shared by the REPL and ``-p "/..."``.

Command words are case-insensitive; the payload is what follows, trimmed. Unknown ``/x``
prints ``❌ 未知命令`` and the list of what exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from paicli.commands.output import Output, ReadLine, Say
from paicli.ui.context_view import render_context
from paicli.modes import COMMANDS as MODE_COMMANDS
from paicli.modes import DEFAULT_MODE, MODES

if TYPE_CHECKING:  # the App imports this module lazily
    from paicli.app import App

# Why /compact failed, by paicli.memory.context.summary.Abort name (names, so the REPL starts without
# importing the compaction modules).
COMPACT_FAILURES = {
    "LLM_ERROR": "生成摘要时调用模型失败",
    "EMPTY_SUMMARY": "模型返回了空摘要",
    "BAD_PARTIAL": "分段摘要为空或过长",
    "NO_HEADINGS": "摘要缺少规定的四个小节（修复一次后仍不合格）",
    "NOT_SMALLER": "摘要没有让上下文变小",
}


HELP = [
    ("/help", "显示可用命令"),
    ("/model [list|info|refresh|add] [服务商/]<模型>", "查看当前模型；list 列出目录与端点的模型；<服务商>/<模型> 连同服务商和 key 一起切换；add 登记模型的窗口与能力"),
    ("/resume [会话 id]", "列出最近的会话并选择一个继续；带 id 时直接继续"),
    ("/clear（或 clear，先确认）", "清空当前对话（长期记忆保留；清空的对话无法用 /resume 找回）"),
    ("/cancel（或 cancel）", "任务运行中按 Ctrl-C 或 ESC 取消；空闲时取消待执行的 /plan、/team（也可按 ESC）"),
    ("/compact", "立即把早期对话压缩为摘要（保留最近一轮）"),
    ("/context", "查看上下文占用与压缩阈值"),
    ("/save [--global] [--force] <事实>", "保存长期记忆（默认当前项目；--global 全局；--force 冲突时两条都保留）"),
    ("/memory [list|search|delete|verify|replace|clear]", "查看和管理长期记忆（clear 只清空当前项目的，先确认）"),
    ("/skill [list|show|on|off|trust|reload] [名称]", "查看和管理 Skill；项目 Skill 须 /skill trust 后才会作为指令加载"),
    ("/audit [N]", "查看今天最近 N 条危险工具调用的审计记录（默认 10）"),
    ("/mcp [restart|disable|enable|trust|logs <name>]", "查看 MCP server 状态与工具数；重启、停用、启用、信任项目 server、查看日志"),
    ("/mcp resources|prompts [name]", "列出 MCP server 提供的资源、资源模板与提示词（@server:uri 在输入中引用资源）"),
    ("/mcp prompts <name> <提示词> [参数=值 …]", "取回 MCP 提示词（prompts/get）放入输入框，编辑后发送"),
    ("/browser [status|connect [端口]|disconnect|tabs]", "查看浏览器模式与页面；连接你正在运行的 Chrome（需输入 y 确认）、断开回到隔离模式、列出标签页"),
    ("/lsp [restart|off|on <语言>]", "查看语言服务器（语言、根目录、状态）；重启、关闭或恢复某种语言的服务器"),
    *((f"{m.command} [任务]", m.command_help) for m in MODES if m.command),  # paicli.modes
    ("/continue", "继续执行当前会话中被中断的计划或多 Agent 运行"),
    ("/index [路径|status|clear]", "建立或更新代码索引（带路径时先把项目根切换过去）；status 查看，clear 删除"),
    ("/search <查询>", "在代码索引中检索（自然语言或标识符，中英文皆可），列出 文件:行号"),
    ("/graph [符号]", "查看符号的定义、使用处、调用和子类；不带符号时显示仓库的代码地图"),
    ("/snapshot [list|status|clean [N]]", "查看每次运行前自动保存的项目快照、仓库占用；clean 只保留最近 N 个"),
    ("/restore [N]", "把工作区恢复到第 N 个快照（默认 1 = 最近一次运行之前），先列出改动并确认；可再次 /restore 1 撤销"),
    ("/mode [auto|plan|ask]", "查看或切换会话模式（Shift+Tab 循环切换）：auto 自动审查，plan 每条输入先规划，ask 全部确认"),
    ("/hitl [on|default]", "查看或切换审批档位：on 全部危险操作都确认；default 由模型审查命令（启动默认）"),
    ("/policy", "查看安全策略、审批档位、全部放行的工具和今日最近的拒绝"),
    ("/config", "查看生效的配置及每项的来源（密钥已遮盖）"),
    ("/config provider [名称]", "列出服务商及其 key 是否已设置；带名称时设为默认服务商并切换"),
    ("/init [--force]", "根据项目文件生成简短的 PAI.md（不调用模型；--force 覆盖已有文件）"),
    ("/export", "把当前对话导出为 Markdown（$PAICLI_HOME/exports/）"),
    ("/history clear", "清空输入历史"),
    ("/exit", "退出 paicli（也可以输入 exit / quit，或连按两次 Ctrl-C）"),
]
EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}
NAMES = ["/help", "/model", "/resume", "/clear", "/compact", "/context", "/save", "/memory", "/skill", "/audit", "/mcp", "/browser",
         "/lsp", *MODE_COMMANDS, "/continue", "/index", "/search", "/graph", "/snapshot", "/restore", "/mode", "/hitl", "/policy",
         "/config", "/init",
         "/export", "/history", "/exit", "/quit"]  # for completion
RESUME_LIST_LIMIT = 20


UNFINISHED = "⏸️ 该会话有未完成的 {mode} 运行，输入 /continue 继续执行。"


@dataclass
class CommandResult:
    exit: bool = False
    failed: bool = False  # the command did not do what was asked (``-p`` exits 1)
    # A run the front end starts after the command: (mode, text); text None finishes the
    # session's unfinished run (/continue).
    run: tuple[str, str | None] | None = None
    prefill: str | None = None  # text the REPL's next prompt starts with (an MCP prompt, issue 39)




def is_command(text: str) -> bool:
    t = text.strip().lower()
    return t.startswith("/") or t in EXIT_WORDS or t in ("cancel", "clear")


def help_lines() -> list[str]:
    return ["可用命令："] + [f"   {display} - {text}" for display, text in HELP]


async def handle(text: str, app: App, say: Say | Output, read_line: ReadLine | None = None) -> CommandResult:
    """``app`` is a ``paicli.app.App``; ``read_line`` is None when nobody can answer (``-p``)."""
    out = say if isinstance(say, Output) else Output(say)
    outcome = await _dispatch(text, app, out, read_line)
    outcome.failed = outcome.failed or out.failed
    return outcome


async def _dispatch(text: str, app: App, say: Output, read_line: ReadLine | None) -> CommandResult:
    stripped = text.strip()
    word, _, payload = stripped.partition(" ")
    word, payload = word.lower(), payload.strip()
    if stripped.lower() in EXIT_WORDS:
        return CommandResult(exit=True)
    if word in ("/cancel", "cancel"):
        from paicli.commands.mode import cancel

        cancel(app, say)
    elif word == "/help":
        for line in help_lines():
            say(line)
    elif word == "/model":
        from paicli.commands.model import model

        await model(payload, app, say)
    elif word in ("/clear", "clear"):
        from paicli.commands.clear import clear

        await clear(word, app, say, read_line)
    elif word == "/resume":
        await _resume(payload, app, say, read_line)
    elif word == "/compact":
        await _compact(app, say)
    elif word in ("/save", "/memory"):
        from paicli.memory.longterm.file import MemoryAccessError
        from paicli.commands import memory as memory_commands  # jieba and numpy load on first use, not at start

        if app.started:  # explicit saves are tagged with the external content read so far (o.1)
            await app.session.load_external()
        try:
            if word == "/save":
                memory_commands.save(payload, app, say)
            else:  # /memory clear asks first (issue 35)
                await memory_commands.memory(payload, app, say, read_line)
        except MemoryAccessError as error:  # one line naming the path; nothing was written
            say.fail(f"❌ {error}")
    elif word == "/audit":
        _audit(payload, app, say)
    elif word in ("/skill", "/skills"):
        from paicli.commands.skill import skill

        skill(payload, app, say)
    elif word == "/mcp":
        from paicli.commands.mcp import mcp

        prompt = await mcp(payload, app, say, interactive=read_line is not None)
        if prompt:  # /mcp prompts <server> <name>: the REPL puts it in the input, -p prints it
            if read_line is None:
                say(prompt)
                return CommandResult()
            say("📝 已把 MCP 提示词放入输入框：编辑后回车发送，Ctrl-C 放弃")
            return CommandResult(prefill=prompt)
    elif word == "/browser":
        from paicli.commands.browser import browser

        await browser(payload, app, say, read_line)
    elif word == "/lsp":
        from paicli.commands.lsp import lsp

        await lsp(app, payload, say)
    elif word in MODE_COMMANDS:
        mode = MODE_COMMANDS[word].name
        if payload:
            return CommandResult(run=(mode, payload))
        app.next_mode = mode
        say(MODE_COMMANDS[word].next_input)
    elif word == "/continue":
        from paicli.commands.continuing import continue_run

        run = await continue_run(app, say, read_line)
        if run is not None:
            return CommandResult(run=run)
    elif word in ("/index", "/search", "/graph"):  # issue 37
        from paicli.commands import code_index

        await {"/index": code_index.index, "/search": code_index.search, "/graph": code_index.graph}[word](payload, app, say)
    elif word in ("/snapshot", "/restore"):
        from paicli.commands import snapshot as snapshot_commands

        if word == "/snapshot":
            await snapshot_commands.snapshot(payload, app, say)
        else:
            await snapshot_commands.restore(payload, app, say, read_line)
    elif word in ("/context", "/ctx"):
        for line in render_context(await app.session.context_usage()):
            say(line)
        from paicli.app import sandbox_lines

        for line in sandbox_lines(app.settings):  # issue 24
            say(line)
    elif word in ("/mode", "/hitl"):
        from paicli.commands import mode as mode_commands

        await (mode_commands.mode if word == "/mode" else mode_commands.hitl)(payload, app, say)
    elif word == "/config" and payload.partition(" ")[0].lower() == "provider":
        from paicli.commands.model import config_provider

        config_provider(payload.partition(" ")[2], app, say)
    elif word in ("/init", "/export", "/history", "/policy", "/config"):
        await _project_command(word, payload, app, say)
    else:
        say.fail(f"❌ 未知命令: {stripped}")
        if read_line is not None:  # a person at the REPL gets the list; a script, one line
            for line in help_lines():
                say(line)
    return CommandResult()


async def _project_command(word: str, payload: str, app: App, say: Output) -> None:
    from paicli.commands import project as pc

    if word == "/init":
        pc.init(payload, app, say)
    elif word == "/export":
        await pc.export(payload, app, say)
    elif word == "/history":
        pc.history(payload, app, say)
    elif word == "/policy":
        await pc.policy(app, say)
    else:
        pc.config(payload, app, say)


def _audit(payload: str, app: App, say: Say) -> None:
    """reference (v.7): today's last N risky tool calls (N defaults to 10, clamped to 1..100)."""
    from paicli.tools.policy.audit import AuditLog, format_recent, recent_count

    count = recent_count(payload or None)
    say(format_recent(AuditLog(app.audit_dir).recent(count), count))


async def _compact(app: App, say: Output) -> None:
    """reference u.2 /compact."""
    from paicli.memory.context.summary import SummaryError

    say("⏳ 压缩中，等一下下哦...")
    try:
        result = await app.session.compact_now()
    except SummaryError as exc:
        say.fail(f"❌ 手动压缩失败: {COMPACT_FAILURES.get(exc.reason.name, str(exc))}")
        return
    if result is None:
        say("📭 当前没有需要压缩的历史上下文")
    else:
        say(f"📦 已手动压缩历史上下文: {result.tokens_before:,} -> {result.tokens_after:,} tokens")


def session_line(index: int, info: dict[str, Any]) -> str:
    when = datetime.fromtimestamp(info["last_activity"] / 1000).strftime("%Y-%m-%d %H:%M")
    title = info.get("title") or "（无标题）"
    mark = f" · ⏸️ {info['unfinished']} 运行未完成" if info.get("unfinished") else ""
    return (f"  {index:>2}. {info['id']}  {when} · {info['messages']} 条消息 · {info.get('mode') or DEFAULT_MODE}{mark}"
            f" · {title}")


async def _resume(payload: str, app: App, say: Output, read_line: ReadLine | None) -> None:
    sessions = app.session.sessions()
    if payload:
        target = next((s for s in sessions if s["id"] == payload), None)
        if target is None:
            say.fail(f"📭 未找到会话: {payload}")
            return
        await _switch(target, app, say)
        return
    if not sessions:
        say("📭 还没有保存的会话。")
        return
    from paicli.run.comeback import unfinished_mode

    shown = [{**info, "unfinished": unfinished_mode(app.session.checkpointer, info["id"])}
             for info in sessions[:RESUME_LIST_LIMIT]]
    say("📚 最近的会话：")
    for i, info in enumerate(shown, 1):
        say(session_line(i, info))
    if read_line is None:
        say("   用 paicli --session <id> 继续其中一个会话。")
        return
    choice = (await read_line("选择要继续的会话编号或 id（回车取消）：") or "").strip()
    target = _pick(choice, shown, sessions)
    if target is None:
        if choice:
            say.fail(f"📭 未找到会话: {choice}")
        else:
            say("已取消。")
        return
    await _switch(target, app, say)


def _pick(choice: str, shown: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> dict[str, Any] | None:
    if choice.isdigit() and 1 <= int(choice) <= len(shown):
        return shown[int(choice) - 1]
    return next((s for s in sessions if s["id"] == choice), None) if choice else None


async def _switch(target: dict[str, Any], app: App, say: Say) -> None:
    from paicli.memory.tokens import text_of  # the module loads LangChain's messages

    app.session.resume(target["id"])
    await app.session.load_external()
    messages = await app.session.messages()
    say(f"✅ 已恢复会话 {target['id']}（{len(messages)} 条消息）")
    unfinished = await app.session.unfinished_mode()
    if unfinished:  # Q11: a run cut short by a crash or kill -9 can be finished
        say(UNFINISHED.format(mode=unfinished))
    for message in messages[-2:]:
        who = {"human": "你", "ai": "助手"}.get(message.type)
        text = text_of(message).strip().replace("\n", " ")
        if who and text:
            say(f"   {who}: {text[:100]}{'…' if len(text) > 100 else ''}")
