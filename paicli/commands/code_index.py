"""``/index [path|status|clear]``, ``/search <q>``, ``/graph [Symbol]`` (reference u.1; issue 37).

``/index`` builds or updates the project's code index (``codeindex``) with progress lines (files,
rate, time left; then vectors when an endpoint is configured); Ctrl-C stops it between files and
keeps what was done. ``/index <path>`` first moves the project root there, as PaiCLI's
``setProjectPath`` does (reference v.5): memory's project key, offloaded output, snapshots and
the sandbox follow (``App.move_project``). ``/search`` is search_code for a person, each hit a
``path:line`` a terminal can open; ``/graph <Symbol>`` lists its definition, users, calls and
subclasses (exact from a language server where one is up: issue 38), and ``/graph`` alone the
repository map, centred on the conversation's files.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paicli.commands.output import Output

if TYPE_CHECKING:
    from paicli.codeindex.indexer import Progress, Report
    from paicli.codeindex.project import ProjectIndex
    from paicli.app import App

PROGRESS_EVERY = 2.0  # seconds between progress lines
SEARCH_TOP = 10
MAP_BUDGET = 2_500
SKIPPED = {"ignored": "忽略规则", "vendored": "依赖/构建目录", "binary": "二进制", "generated": "生成文件",
           "huge": "过大", "symlink": "符号链接", "unreadable": "无法读取"}
INDEX_USAGE = "❌ 用法: /index [路径|status|clear]"
NO_INDEX = "📭 当前项目还没有代码索引，输入 /index 建立"


def project(app: App) -> ProjectIndex:
    from paicli.codeindex.project import CodeIndexes
    from paicli.memory.longterm.entry import normalize_project_key

    root = app.settings.project_root
    return CodeIndexes(app.settings.home, app.settings.code_index).project(root, normalize_project_key(str(root)))


async def index(app: App, payload: str, say: Output) -> None:
    word = payload.lower()
    if word == "status":
        status(app, say)
    elif word == "clear":
        say("🧹 代码索引已删除" if project(app).clear() else NO_INDEX)
    else:
        if payload and not move(payload, app, say):
            return
        await build(app, say)


def move(payload: str, app: App, say: Output) -> bool:
    target = Path(os.path.expanduser(payload))
    target = (target if target.is_absolute() else app.settings.project_root / target).resolve()
    if not target.is_dir():
        say.fail(f"❌ 目录不存在: {target}")
        return False
    if target != app.settings.project_root:
        app.move_project(target)
        say(f"📁 项目根已切换到: {target}（记忆作用域、工具输出、快照和命令沙箱随之切换）")
    return True


async def build(app: App, say: Output) -> None:
    index_of, cancel = project(app), threading.Event()
    shown = {"at": 0.0}

    def files(p: Progress) -> None:
        if time.monotonic() - shown["at"] >= PROGRESS_EVERY and p.done < p.total:
            shown["at"] = time.monotonic()
            left = f" · 约剩 {_duration(p.left)}" if p.left is not None else ""
            say(f"⏳ 索引中: {p.done:,}/{p.total:,} 个文件 · {p.rate:.0f} 个/秒{left}")

    def vectors(done: int, total: int) -> None:
        if time.monotonic() - shown["at"] >= PROGRESS_EVERY and done < total:
            shown["at"] = time.monotonic()
            say(f"⏳ 向量: {done:,}/{total:,}")

    say(f"🔎 正在索引 {app.settings.project_root} …（Ctrl-C 可随时停止，已完成的部分会保留）")
    report = await _cancellable(lambda: index_of.update(progress=files, embed_progress=vectors, cancel=cancel), cancel)
    _summary(report, index_of, say)


async def _cancellable(work: Any, cancel: threading.Event) -> Any:
    """Run ``work`` in a thread; Ctrl-C sets ``cancel`` (the update stops between files)."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, cancel.set)
        handled = True
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        handled = False
    running = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:  # the command itself was cancelled: stop the update, then leave
        cancel.set()
        await asyncio.wait([running])
        raise
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)


def _summary(report: Report, index_of: ProjectIndex, say: Output) -> None:
    for problem in report.problems:
        say(problem)
    counts = (f"新增 {report.added:,}，修改 {report.changed:,}，删除 {report.removed:,}，未变 {report.unchanged:,}")
    if report.cancelled:
        say.fail(f"⏹️ 已停止索引（{counts}）：已完成的文件已保存，再次输入 /index 会从剩下的继续")
        return
    state = index_of.status()
    symbols = f" · {state.symbols:,} 个符号" if state else ""
    say(f"✅ 代码索引已更新: {report.files:,} 个文件（{counts}）{symbols} · 用时 {report.seconds:.1f} 秒")
    skipped = " · ".join(f"{SKIPPED.get(k, k)} {v:,}" for k, v in sorted(report.skipped.items()))
    if skipped:
        say(f"   跳过: {skipped}")
    say("   " + _mode_line(index_of, state))


def _mode_line(index_of: ProjectIndex, state: Any) -> str:
    embedding = index_of.options.embedding
    if not embedding.enabled:
        return "检索方式: BM25 关键词（未配置向量：设置 PAICLI_EMBEDDING_URL 和 PAICLI_EMBEDDING_MODEL 启用混合检索）"
    return f"检索方式: 混合（BM25 + 向量，模型 {embedding.model}，已有 {state.vectors if state else 0:,} 个向量）"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} 秒" if seconds < 90 else f"{seconds / 60:.0f} 分钟"


def status(app: App, say: Output) -> None:
    from paicli.codeindex.store import Damaged

    index_of = project(app)
    try:
        state = index_of.status()
    except Damaged as damaged:
        say(str(damaged))
        state = None
    if state is None:
        say(NO_INDEX)
        return
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state.updated)) if state.updated else "从未完成"
    languages = " · ".join(f"{name} {count:,}" for name, count in state.languages.most_common())
    say(f"📚 代码索引: {app.settings.project_root}")
    say(f"   {state.files:,} 个文件 · {state.symbols:,} 个符号 · {state.chunks:,} 个检索片段 · "
        f"{state.vectors:,} 个向量 · {state.bytes / 1e6:.1f} MB")
    say(f"   语言: {languages or '无'}")
    say(f"   更新于 {when}{'' if state.complete else '（上次索引未完成，输入 /index 继续）'}")
    say(f"   位置: {index_of.store.path}")
    say("   " + _mode_line(index_of, state))


async def search(app: App, payload: str, say: Output) -> None:
    if not payload:
        say.fail("❌ 请提供要检索的内容，例如 /search 解析 HTTP 日期")
        return
    from paicli.codeindex.store import Busy, Damaged

    index_of = project(app)
    if not index_of.indexed():
        say.fail("代码库尚未索引，请先使用 /index 命令索引当前项目。")
        return
    try:
        await asyncio.to_thread(index_of.refresh)
        result = await asyncio.to_thread(index_of.search, payload, SEARCH_TOP)
    except (Busy, Damaged) as error:
        say.fail(f"代码检索失败: {error}")
        return
    if not result.hits:
        say("未找到与查询相关的代码。")
        return
    label = "BM25 关键词" if result.mode == "lexical" else "混合: BM25 + 向量"
    say(f"🔍 {payload}（{label}，{len(result.hits)} 条）")
    for number, hit in enumerate(result.hits, 1):
        what = f"{hit.kind} {hit.qualified}" if hit.kind else "文本片段"
        say(f"  {number:>2}. {hit.path}:{hit.start_line}  {what}")
        if hit.signature:
            say(f"      {hit.signature}")
    note = index_of.lexical_note(result)
    if note:
        say(note)


async def graph(app: App, payload: str, say: Output) -> None:
    index_of = project(app)
    if not index_of.indexed():
        say.fail("代码库尚未索引，请先使用 /index 命令索引当前项目。")
        return
    await asyncio.to_thread(index_of.refresh)
    if payload:
        await _symbol(payload, app, index_of, say)
    else:
        await _map(app, index_of, say)


async def _symbol(name: str, app: App, index_of: ProjectIndex, say: Output) -> None:
    """Issue 38 item 4: exact where the session's language servers answer, the index's otherwise;
    the head line says which (``tools/builtin/code_navigation.py``)."""
    from paicli.tools.builtin.code_navigation import render, symbol_graph

    lsp = app.session.deps.lsp if app.settings.lsp.on else None  # off: no session needed
    found = await symbol_graph(index_of.store, lsp, str(app.settings.project_root), name)
    if found.empty:
        say.fail(f"📭 索引里没有名为 {name} 的符号")
        return
    for line in render(found, f"🕸️ {name}"):
        say(line)


async def _map(app: App, index_of: ProjectIndex, say: Output) -> None:
    from paicli.tools.builtin.code_search import map_lines

    files = await conversation_files(app)
    lines = await asyncio.to_thread(map_lines, index_of, "", files, MAP_BUDGET)
    centre = f"，以对话中的 {len(files)} 个文件为中心" if files else ""
    say(f"🗺️ 代码地图（引用关系 PageRank 排名最高的定义{centre}）")
    for line in lines:
        say(line)


async def conversation_files(app: App) -> list[str]:
    """The project files the conversation's tool calls read or wrote, newest last."""
    if not app.started:
        return []
    from paicli.nodes.core.turn_files import path_of, project_relative

    found: dict[str, None] = {}
    tools = app.session.deps.tools
    for message in await app.session.messages():
        for call in getattr(message, "tool_calls", None) or ():
            if path := project_relative(path_of(call, tools)):
                found.setdefault(path)
    return list(found)

