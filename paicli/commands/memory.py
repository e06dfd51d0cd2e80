"""``/save`` and ``/memory`` (reference u.2, j.4, j.5, m), shared by the REPL and ``-p``.

They work on ``app.memory`` (the shared ``long_term_memory.json``, or the database's memories) and
never start the agent session, so ``paicli -p "/save ..."`` stays quick. ``verify`` exists only
here: the user confirms a memory, the model cannot (reference m). ``delete`` and ``verify`` act
only on a memory ``/memory list`` shows in this project, and ``clear`` removes only what it shows,
after a question (``paicli.commands.memory_clear``, issue 35).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

from paicli.memory.context.profile import ContextProfile
from paicli.memory.longterm.entry import SCOPE_GLOBAL, Entry, owner_of
from paicli.memory.longterm.file import MemoryAccessError
from paicli.memory.longterm.staleness import staleness
from paicli.commands.output import Output

if TYPE_CHECKING:  # the App imports this module lazily
    from paicli.app import App

# Usage errors, ids not found and facts not written go to ``say.fail``: the command failed.
Say = Output

SAVE_USAGE = "❌ 请提供要保存的内容，例如 /save 这个项目使用Java 17，或 /save --global 默认用中文回答"
DELETE_USAGE = "❌ 请提供要删除的记忆 id，例如 /memory delete fact-abcd1234"
VERIFY_USAGE = "❌ 请提供要核实的记忆 id，例如 /memory verify fact-abcd1234"
REPLACE_USAGE = "❌ 用法: /memory replace <旧记忆 id> <新事实>，例如 /memory replace fact-abcd1234 项目使用 Java 21"
SEARCH_USAGE = "❌ 请提供搜索关键词，例如 /memory search Chrome 登录态"
EMPTY = "📭 没有匹配的长期记忆。"
# Issue 16: a search that matches nothing still shows something, and says what it shows.
NO_MATCH = "📭 没有与“{query}”匹配的长期记忆。以下是最近核实的 {n} 条："
HELP = [
    "   /memory list - 查看长期记忆",
    "   /memory search <关键词> - 搜索当前项目可见长期记忆",
    "   /memory delete <id> - 删除单条长期记忆",
    "   /memory verify <id> - 确认记忆仍然成立，刷新最后核实时间",
    "   /memory replace <id> <新事实> - 用新内容替换冲突/过时的记忆",
    "   /memory clear [--global] - 清空当前项目的长期记忆（--global 连全局记忆一起），先确认",
    "   /save <事实> - 保存项目级长期记忆；/save --global <事实> 保存全局记忆",
    "   /save --force <事实> - 与已有记忆冲突时仍保留两条",
]
SAVE_FLAGS = ("--force", "--global", "--project")  # reference (u.2): any order, before the fact


def parse_save(payload: str) -> tuple[str, bool, str]:
    """``(scope, force, fact)``; unknown ``--x`` words stay in the fact."""
    rest, scope, force = payload.strip(), "project", False
    while rest:
        head, *tail = rest.split(None, 1)
        flag = head.lower()
        if flag not in SAVE_FLAGS:
            break
        force = force or flag == "--force"
        scope = {"--global": SCOPE_GLOBAL, "--project": "project"}.get(flag, scope)
        rest = tail[0].strip() if tail else ""
    return scope, force, rest


async def save(app: App, payload: str, say: Say) -> None:
    """``/save``: tagged with the external content the session read so far (reference o.1)."""
    if app.started:
        await app.session.load_external()
    with _readable(say):
        _save(payload, app, say)


async def memory(app: App, payload: str, say: Say) -> None:
    if app.started:
        await app.session.load_external()
    with _readable(say):
        await _memory(payload, app, say)


@contextmanager
def _readable(say: Say) -> Iterator[None]:
    try:
        yield
    except MemoryAccessError as error:  # one line naming the path; nothing was written
        say.fail(f"❌ {error}")


def _save(payload: str, app: App, say: Say) -> None:
    scope, force, fact = parse_save(payload)
    if not fact:
        say.fail(SAVE_USAGE)
        return
    result = app.memory.save_fact(fact, scope=scope, project_key=app.project_key, allow_conflict=force,
                                  external_sources=app.external_sources())
    (say if result.written else say.fail)(result.describe())


async def _memory(payload: str, app: App, say: Say) -> None:
    verb, _, rest = payload.strip().partition(" ")
    verb, rest = verb.lower(), rest.strip()
    if verb == "clear":
        from paicli.commands.memory_clear import clear

        await clear(rest, app, say, say.read_line)  # asks first (issue 35)
        return
    handler = {"list": _list, "ls": _list, "search": _search, "delete": _delete, "rm": _delete,
               "verify": _verify, "replace": _replace}.get(verb)
    if handler is None and verb:  # a typo (`/memory serach x`) is named, not answered with the status
        say.fail(f"❌ 未知 /memory 子命令: {verb}（可用: list、search、delete、verify、replace、clear）")
    elif handler is None:
        _status(app, say)
    else:
        handler(rest, app, say)


def _list(_: str, app: App, say: Say) -> None:
    entries = app.memory.visible(app.project_key)
    owner = app.memory.owner
    title = (f"📋 长期记忆列表（个人：只有 {owner} 看得到的全局记忆；团队：这个项目所有人共享的项目记忆）："
             if owner else "📋 长期记忆列表：")
    _show(title, entries, app, say)


def _search(query: str, app: App, say: Say) -> None:
    if not query:
        say.fail(SEARCH_USAGE)
        return
    ranked = app.memory.search(query, app.project_key)
    if ranked:
        _show(f"🔎 长期记忆搜索: {query}：", [s.entry for s in ranked], app, say)
        return
    recent = app.memory.recently_verified(app.project_key)
    _show(NO_MATCH.format(query=query, n=len(recent)), recent, app, say)


def _show(title: str, entries: list[Entry], app: App, say: Say) -> None:
    if not entries:
        say(EMPTY)
        return
    say(title)
    days, personal = app.memory.options.stale_days, app.memory.owner is not None
    for entry in entries:
        say(entry_line(entry, staleness(entry, days=days) is not None, personal))
        say(f"  {entry.content}")


def entry_line(entry: Entry, stale: bool, personal: bool = False) -> str:
    """reference (u.2): id, scope, short project path, raw instants and the marks. ``personal``
    (a database, issue 35): whose the memory is after the scope: ``个人`` (the user's own global
    memory), ``团队`` (the project's, shared by everyone on it), ``共享`` (a global one written
    before global memory was personal: everyone's)."""
    meta, parts = entry.metadata, [f"- {entry.id} [{entry.scope}{_whose(entry) if personal else ''}]"]
    if entry.scope != SCOPE_GLOBAL and entry.project:
        parts[0] += f" {short_path(entry.project)}"
    parts.append(f"写入 {shown_time(entry.timestamp)}")
    parts.append("尚未经用户核实" if entry.verification_pending
                 else f"最后核实 {shown_time(entry.last_verified_at or entry.timestamp)}")
    if stale:
        parts.append("⚠️ 可能已过时")
    if entry.verification_pending:
        parts.append("🔎 自动提取，待核实")
    if meta.get("external_context") == "true":
        parts.append(f"🌐 写入时会话含外部内容({meta.get('external_context_sources', '')})")
    return " · ".join(parts)


def shown_time(when: datetime, now: datetime | None = None) -> str:
    """Local time to the second, as ``/snapshot`` shows its snapshots (``09-23 16:00:00``), with
    the year when it is not this one (issue 41: not the file's UTC instant with microseconds)."""
    local, today = when.astimezone(), (now or datetime.now()).astimezone()
    return local.strftime("%m-%d %H:%M:%S" if local.year == today.year else "%Y-%m-%d %H:%M:%S")
def _whose(entry: Entry) -> str:
    if entry.scope != SCOPE_GLOBAL:
        return "·团队"
    return "·个人" if owner_of(entry) else "·共享"


def short_path(path: str) -> str:
    """reference (u.2): ``...`` + the last three path elements."""
    parts = PurePath(path).parts
    return path if len(parts) <= 4 else ".../" + "/".join(parts[-3:])


def _delete(entry_id: str, app: App, say: Say) -> None:
    if not entry_id:
        say.fail(DELETE_USAGE)
        return
    removed = app.memory.delete(entry_id, app.project_key)
    if removed:
        say(f"🗑️ 已删除长期记忆: {entry_id}")
    else:
        say.fail(_not_here(entry_id, app, "未删除"))


def _verify(entry_id: str, app: App, say: Say) -> None:
    if not entry_id:
        say.fail(VERIFY_USAGE)
        return
    entry = app.memory.verify(entry_id, app.project_key)
    if entry:
        say(f"✅ 已刷新核实时间: {entry_id} {entry.content}")
    else:
        say.fail(_not_here(entry_id, app, "未核实"))


def _not_here(entry_id: str, app: App, what: str) -> str:
    """Why an id did nothing: unknown, or another project's memory (issue 35: refused, not touched)."""
    if any(e.id == entry_id for e in app.memory.entries()):
        return f"❌ 长期记忆 {entry_id} 属于其他项目，不在当前项目可见范围内，{what}（/memory list 列出这里可见的记忆）"
    return f"📭 未找到长期记忆: {entry_id}"


def _replace(rest: str, app: App, say: Say) -> None:
    entry_id, _, fact = rest.partition(" ")
    if not entry_id or not fact.strip():
        say.fail(REPLACE_USAGE)
        return
    result = app.memory.replace_fact(entry_id, fact.strip(), app.project_key)
    (say if result.written else say.fail)(result.describe())


def _cache(mode: str) -> str:
    return {"none": "无"}.get(mode, mode)


def _status(app: App, say: Say) -> None:
    """reference (u.2) ``/memory``: the system status, the project scope and the help lines."""
    s, entries = app.settings, app.memory.entries()
    profile = ContextProfile.from_window(s.context_window, prompt_cache=s.prompt_cache)
    count = {kind: sum(1 for e in entries if e.type == kind) for kind in ("FACT", "SUMMARY", "TOOL_RESULT")}
    say("📋 记忆系统状态：")
    # on when the system prompt carries an MCP resource index (reference q.2 item 9)
    indexed = app.started and bool(app.session.deps.mcp_index) and profile.mcp_resource_index_enabled
    say(f"上下文策略: 窗口 {profile.window} | 压缩阈值 {profile.compression_trigger_percent}%"
        f"（{profile.compression_trigger_tokens} tokens）| MCP 资源索引: {'开启' if indexed else '关闭'}"
        f" | 提示词缓存: {_cache(profile.prompt_cache)}")
    say("短期上下文: 由当前会话的消息列表维护（会话账本，/resume 可继续）")
    say(f"自动事实提取: {app.auto_extract_status()}")
    say(f"长期记忆: {len(entries)}条 / {sum(e.token_count for e in entries)} tokens "
        f"(事实: {count['FACT']}, 摘要: {count['SUMMARY']}, 工具结果: {count['TOOL_RESULT']})")
    say(app.token_stats_line())
    say(f"MCP 服务器: {app.mcp.status_label()}（/mcp 查看详情）")
    say(f"   当前项目作用域: {app.project_key}")
    if app.memory.owner:  # issue 35: a database's global memories are the user's own
        say(f"   全局记忆属于: {app.memory.owner}（PAICLI_USER，默认系统用户名；只有你看得到）")
    for line in HELP:
        say(line)
