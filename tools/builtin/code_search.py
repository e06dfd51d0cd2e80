"""search_code and code_map: the code index (``codeindex``) as tools (reference t; issue 37).

Both are bound to the session's ``paicli.codeindex.project.CodeIndexes`` (``code_index_specs``, from
``paicli/wiring.make_deps``). The index is found by the project's real path; a project not
indexed yet is indexed on the first call (progress shown as notices) unless it has more files
than ``CodeIndexOptions.auto_index_max_files``, then the reference's message asks for ``/index``.
Before each search the index takes in the turn's edits (``ProjectIndex.refresh``).

``code_map(symbol=…)`` is ``/graph <Symbol>`` for the model: exact where a language server
answers (``ToolContext.lsp``), the index's by-name graph otherwise, its first line saying which.

A result lists each hit's path, line range, kind and qualified name, signature, doc line and
the first lines of its source, the whole within ``TOKEN_BUDGET`` tokens (at least one hit).
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from paicli.memory.longterm.entry import normalize_project_key
from paicli.tools.base import ToolContext, ToolSpec, failed
from paicli.tools.common import clamp, int_arg, required_str, str_arg
from paicli.tools.specs import CODE_MAP, SEARCH_CODE

if TYPE_CHECKING:  # numpy, tree-sitter and SQLite load on the first call, not at start-up (issue 30)
    from paicli.codeindex.indexer import Progress
    from paicli.codeindex.options import CodeIndexOptions
    from paicli.codeindex.project import CodeIndexes, ProjectIndex
    from paicli.codeindex.search import Hit, Result

# reference (t): search_code's texts, verbatim
NOT_INDEXED = "代码库尚未索引，请先使用 /index 命令索引当前项目。"
NOTHING_FOUND = "未找到与查询相关的代码。"
FAILED = "代码检索失败: {}"
NO_SYMBOL = "代码索引里没有名为 {} 的符号。"
TOKEN_BUDGET = 3_000
SNIPPET_LINES, SNIPPET_CHARS = 14, 1_400
MODES = {"lexical": "BM25 关键词检索", "hybrid": "混合检索: BM25 + 向量"}
MAP_BUDGET, MAP_MIN, MAP_MAX = 1_500, 200, 6_000


class LazyIndexes:
    """The session's ``CodeIndexes``, made on the first call."""

    def __init__(self, home: Path, options: CodeIndexOptions):
        self.home, self.options = home, options
        self._made: CodeIndexes | None = None
        self._lock = threading.Lock()

    def get(self) -> CodeIndexes:
        with self._lock:
            if self._made is None:
                from paicli.codeindex.project import CodeIndexes

                self._made = CodeIndexes(self.home, self.options)
            return self._made


def code_index_specs(home: Path, options: CodeIndexOptions) -> dict[str, ToolSpec]:
    indexes = LazyIndexes(home, options)
    return {SEARCH_CODE.name: SEARCH_CODE.bound(lambda args, ctx: search_code(args, ctx, indexes.get())),
            CODE_MAP.name: CODE_MAP.bound(lambda args, ctx: code_map(args, ctx, indexes.get()))}


def project_of(indexes: CodeIndexes, ctx: ToolContext) -> ProjectIndex:
    return indexes.project(ctx.root, normalize_project_key(str(ctx.root)))


def search_code(args: dict[str, Any], ctx: ToolContext, indexes: CodeIndexes) -> str:
    from paicli.codeindex.store import Busy, Damaged

    query = required_str(args, "query")
    top_k = clamp(int_arg(args, "top_k", 5), 1, 30)  # reference (t)
    project = project_of(indexes, ctx)
    try:
        refused = ready(project, ctx, notifier())
        if refused:
            return failed(refused)
        result = project.search(query, top_k)
    except (Busy, Damaged, OSError, ValueError) as error:
        return failed(FAILED.format(error))
    if not result.hits:
        return NOTHING_FOUND
    return render_hits(result, ctx, project.lexical_note(result))


def ready(project: ProjectIndex, ctx: ToolContext, notify: Callable[[str], None]) -> str | None:
    """Index a project on first use (small ones), or bring it up to date; the refusal text if not."""
    if project.indexed():
        project.refresh(ctx.files_of_turn())
        return None
    if project.too_big():
        return (f"{NOT_INDEXED}\n（项目文件超过 {project.options.auto_index_max_files} 个，"
                "不在检索时自动建立索引）")
    notify("⏳ 代码库尚未索引，正在建立代码索引…")
    report = project.update(progress=lambda p: notify(progress_line(p)), embed=False, wait=30)
    for problem in report.problems:
        notify(problem)
    return None


def progress_line(p: Progress) -> str:
    left = f"，约剩 {p.left:.0f} 秒" if p.left is not None and p.done < p.total else ""
    return f"⏳ 代码索引: {p.done}/{p.total} 个文件，{p.rate:.0f} 个/秒{left}"


def notifier() -> Callable[[str], None]:
    """Notices to the person while a tool works (the run's stream), or nowhere outside a run."""
    try:
        from langgraph.config import get_stream_writer

        writer = get_stream_writer()
    except (ImportError, RuntimeError):
        return lambda _text: None
    return lambda text: writer({"notice": text})


def render_hits(result: Result, ctx: ToolContext, note: str) -> str:
    from paicli.memory.tokens import estimate_text

    lines = [f"代码检索结果 {len(result.hits)} 条（{MODES[result.mode]}）:"]
    used = estimate_text(lines[0])
    for number, hit in enumerate(result.hits, 1):
        block = _block(number, hit, ctx)
        cost = estimate_text(block)
        if used + cost > TOKEN_BUDGET and number > 1:
            lines.append(f"（其余 {len(result.hits) - number + 1} 条因长度上限略去，可缩小查询或调小 top_k）")
            break
        lines.append(block)
        used += cost
    if note:
        lines.append(note)
    return "\n".join(lines)


def _block(number: int, hit: Hit, ctx: ToolContext) -> str:
    what = f" · {hit.kind} {hit.qualified}" if hit.kind else " · 文本片段"
    rows = [f"{number}. {hit.path}:{hit.start_line}-{hit.end_line}{what}"]
    if hit.signature:
        rows.append(f"   签名: {hit.signature}")
    if hit.doc:
        rows.append(f"   说明: {_first_sentence(hit.doc)}")
    from paicli.codeindex.search import snippet

    shown, cut = snippet(ctx.root, hit, SNIPPET_LINES, SNIPPET_CHARS)
    rows += [f"   {n:5d} | {text}" for n, text in shown]
    if cut:
        call = {"path": hit.path, "offset": hit.start_line, "limit": hit.end_line - hit.start_line + 1}
        rows.append(f"   …（共 {hit.end_line - hit.start_line + 1} 行）read_file "
                    + json.dumps(call, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(rows)


def _first_sentence(doc: str) -> str:
    text = doc.strip().split("\n", 1)[0]
    return text if len(text) <= 200 else text[:199] + "…"


async def code_map(args: dict[str, Any], ctx: ToolContext, indexes: CodeIndexes) -> str:
    """The map; with ``symbol``, that symbol's graph instead, exact where the session's language
    servers answer (``tools/builtin/code_navigation.py``, issue 38), its first line saying which."""
    from paicli.codeindex.graph import APPROXIMATE
    from paicli.codeindex.store import Busy, Damaged

    focus = (str_arg(args, "focus") or "").strip()
    symbol = (str_arg(args, "symbol") or "").strip()
    budget = clamp(int_arg(args, "max_tokens", MAP_BUDGET), MAP_MIN, MAP_MAX)
    project = project_of(indexes, ctx)
    try:
        refused = await asyncio.to_thread(ready, project, ctx, notifier())
        if refused:
            return failed(refused)
        if symbol:
            return await symbol_text(project, ctx, symbol)
        lines = await asyncio.to_thread(map_lines, project, focus, list(ctx.files_of_turn()), budget)
    except (Busy, Damaged, OSError, ValueError) as error:
        return failed(FAILED.format(error))
    if not lines:
        return NOTHING_FOUND
    center = f"，以 {focus} 为中心" if focus else ""
    return "\n".join([f"代码地图（引用关系 PageRank 排名最高的定义{center}；行号│签名）:", *lines, APPROXIMATE])


async def symbol_text(project: ProjectIndex, ctx: ToolContext, symbol: str) -> str:
    from paicli.tools.builtin.code_navigation import render, symbol_graph

    graph = await symbol_graph(project.store, ctx.lsp, str(ctx.root), symbol)
    if graph.empty:
        return NO_SYMBOL.format(symbol)
    return "\n".join(render(graph, f"符号 {symbol}"))


def map_lines(project: ProjectIndex, focus: str, files: list[str], budget: int) -> list[str]:
    """The map's lines: focus words that are indexed paths join the conversation's files."""
    from paicli.codeindex.rank import ranked, render
    from paicli.memory.tokens import estimate_text

    project.store.checked()
    known = {p for (p,) in project.store.connection().execute("SELECT path FROM files")}
    tokens = focus.replace(",", " ").split()
    paths = [t.strip("./") if t.startswith("./") else t for t in tokens if t in known or t.lstrip("./") in known]
    words = " ".join(t for t in tokens if t not in paths and t.lstrip("./") not in known)
    ranks = ranked(project.store, [*paths, *(f for f in files if f in known)], words)
    return render(ranks, budget, estimate_text)
