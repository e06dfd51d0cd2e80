"""The built-in tools, their schemas, and how one call or one batch is executed (s.8).

``run_tool`` is the one place tool errors become text the model can react to; only
cancellation passes through, so Ctrl-C still stops the run. Every result is a ``ToolText``
whose ``ok`` was set where the result was made: a plain returned string is a success, a
``failed(text)``, a raised ``PolicyError`` or any error is a failure. Nothing reads failure from
the text's prefixes (which stay the reference's model-facing wording).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

from tools.base import PolicyError, ToolContext, ToolSpec, ToolText, failed
from tools.builtin.memory_tool import save_memory
from tools.builtin.files import edit_file, list_dir, read_file, write_file
from tools.builtin.search import glob_files, grep_code
from tools.builtin.shell import execute_command
from tools.builtin.web_fetch import web_fetch
from tools.builtin.web_search import web_search

MAX_PARALLEL_TOOLS = 4  # reference (s.8)


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _integer(description: str) -> dict[str, str]:
    return {"type": "integer", "description": description}


def _boolean(description: str) -> dict[str, str]:
    return {"type": "boolean", "description": description}


def _params(required: list[str], **properties: dict[str, str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_PATH = _string("相对项目根目录的路径")

BUILTIN_TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in [
        ToolSpec(
            "read_file",
            "读取项目内文件的内容。不带 offset/limit 时返回全文；大文件请用 offset 和 limit 分段读取，结果带行号。",
            _params(["path"], path=_PATH,
                    offset=_integer("起始行号，1 表示第一行；省略时读取全文"),
                    limit=_integer("最多读取多少行；省略时读取全文，最大 2000 行")),
            read_file, parallel_safe=True,
        ),
        ToolSpec(
            "write_file",
            "把完整内容写入项目内的文件（覆盖已有内容），会自动创建缺少的父目录。修改已有文件的局部请用 edit_file。",
            _params(["path", "content"], path=_PATH, content=_string("要写入的完整文件内容")),
            write_file,
        ),
        ToolSpec(
            "edit_file",
            "在已有文件中把 old_text 精确替换为 new_text。old_text 默认必须在文件中唯一出现，"
            "匹配多处时请提供更多上下文，或设置 replace_all=true 替换全部。",
            _params(["path", "old_text", "new_text"], path=_PATH,
                    old_text=_string("要替换的原文，须与文件内容完全一致（包括空白和缩进）"),
                    new_text=_string("替换后的文本；为空字符串表示删除 old_text"),
                    replace_all=_boolean("是否替换所有匹配，默认 false")),
            edit_file,
        ),
        ToolSpec(
            "list_dir",
            "列出目录下的直接子项（不递归），[D] 表示目录，[F] 表示文件。",
            _params(["path"], path=_string("相对项目根目录的目录路径，项目根用 .")),
            list_dir, parallel_safe=True,
        ),
        ToolSpec(
            "glob_files",
            "按 glob 模式查找文件路径，例如 **/*.py 或 src/**/test_*.py；不含 / 的模式会在任意层级按文件名匹配。"
            "会跳过 .git、node_modules、build 等目录。",
            _params(["pattern"], pattern=_string("glob 模式"),
                    path=_string("搜索起始目录，默认 ."),
                    max_results=_integer("最多返回多少个文件，默认 50，最大 200")),
            glob_files, parallel_safe=True,
        ),
        ToolSpec(
            "grep_code",
            "在项目文件内容中搜索文本或正则，返回 文件:行号 与上下文，并给出建议的 read_file 调用。"
            "定位代码时优先使用它，而不是 execute_command 里的 grep。",
            _params(["pattern"], pattern=_string("要搜索的文本；regex=true 时为正则表达式"),
                    path=_string("搜索起始目录或文件，默认 ."),
                    glob=_string("只搜索匹配该 glob 的文件，例如 *.py"),
                    regex=_boolean("pattern 是否为正则表达式，默认 false（按字面匹配）"),
                    case_sensitive=_boolean("是否区分大小写，默认 true"),
                    context_lines=_integer("每处匹配前后显示的上下文行数，默认 0，最大 5"),
                    max_results=_integer("最多返回多少处匹配，默认 50，最大 200"),
                    head_limit=_integer("每个文件最多返回多少处匹配，默认 20，最大 50"),
                    max_chars=_integer("结果最多多少字符，默认 24000，范围 1000 到 60000")),
            grep_code, parallel_safe=True,
        ),
        ToolSpec(
            "execute_command",
            "在项目根目录用 bash 执行一条命令，返回退出码和合并后的 stdout/stderr。超时 60 秒，输出过长会被截断；"
            "不要运行交互式或不会自行结束的命令。命令在沙箱中运行：只能写项目、临时目录和工具链缓存"
            "（PAI.md、.git/hooks 等受保护路径除外），默认没有网络。",
            _params(["command"], command=_string("要执行的 shell 命令"),
                    network=_boolean("需要联网时设为 true（例如安装依赖），须同时给出 reason；会请用户批准"),
                    sandbox=_boolean("仅当沙箱拒绝了必需的操作时设为 false，须同时给出 reason；"
                                     "需要用户亲自输入 y 确认"),
                    reason=_string("为什么需要联网或离开沙箱，会原样展示给用户")),
            execute_command, is_async=True,
        ),
        ToolSpec(
            "web_search",
            "联网搜索，返回标题、摘要和链接。需要最新信息或定位网页时使用；"
            "之后用 web_fetch 抓取的 URL 必须来自用户输入或搜索结果，不能猜测。",
            _params(["query"], query=_string("搜索关键词"),
                    top_k=_integer("返回结果数量，默认 5，最大 20")),
            web_search, is_async=True, parallel_safe=True,
        ),
        ToolSpec(
            "web_fetch",
            "抓取一个网页并把正文转换为 Markdown 返回。URL 必须来自用户输入或 web_search 的结果；"
            "只允许 http/https 公网地址。",
            _params(["url"], url=_string("要抓取的网页 URL（http 或 https）"),
                    max_chars=_integer("正文最多返回多少字符，默认 8000；小于等于 0 表示不截断")),
            web_fetch, is_async=True, parallel_safe=True,
        ),
        ToolSpec(
            "save_memory",
            "把用户明确要求记住的稳定事实或偏好写入长期记忆，跨会话可用。只保存用户自己说出的内容；"
            "与已有记忆冲突时不会写入，而是返回新旧两条，请让用户选择后再用 replace_id 或 keep_both。",
            _params(["fact"], fact=_string("要保存的精炼事实，一句话"),
                    scope=_string("project（默认，当前项目）或 global（跨项目通用偏好）"),
                    replace_id=_string("用户选择替换的已有记忆 id"),
                    keep_both=_boolean("用户选择两条都保留时为 true")),
            save_memory,
        ),
    ]
}


def schemas(tools: Mapping[str, ToolSpec] | Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI tool schemas sorted by name (reference t), so the prompt prefix stays stable."""
    specs = tools.values() if isinstance(tools, Mapping) else tools
    return [spec.schema() for spec in sorted(specs, key=lambda spec: spec.name)]


async def run_tool(name: str, args: dict[str, Any] | None, ctx: ToolContext,
                   tools: Mapping[str, ToolSpec] = BUILTIN_TOOLS) -> ToolText:
    spec = tools.get(name)
    if spec is None:
        return failed(f"未知工具: {name}")
    args = args if isinstance(args, dict) else {}
    try:
        result = await spec.fn(args, ctx) if spec.is_async else await asyncio.to_thread(spec.fn, args, ctx)
    except PolicyError as exc:
        return ToolText(f"🛡️ 策略拒绝: {exc.reason}", refused=True)
    except Exception as exc:  # any tool bug becomes text the model can react to
        return failed(f"工具执行失败: {str(exc) or type(exc).__name__}")
    return result if isinstance(result, ToolText) else ToolText(str(result))


async def run_batch(calls: list[tuple[str, dict[str, Any]]], ctx: ToolContext,
                    tools: Mapping[str, ToolSpec] = BUILTIN_TOOLS, timings: list[float] | None = None) -> list[ToolText]:
    """Results in call order; runs of consecutive parallel-safe calls go concurrently.
    ``timings``, when given, receives each call's duration in seconds (for the audit log)."""
    results: list[ToolText] = [ToolText("")] * len(calls)
    limiter = asyncio.Semaphore(MAX_PARALLEL_TOOLS)

    async def run(index: int) -> None:
        async with limiter:
            name, args = calls[index]
            started = time.monotonic()
            results[index] = await run_tool(name, args, ctx, tools)
            if timings is not None:
                timings[index] = time.monotonic() - started

    for group in _groups(calls, tools):
        await asyncio.gather(*(run(index) for index in group))
    return results


def _groups(calls: list[tuple[str, dict[str, Any]]], tools: Mapping[str, ToolSpec]) -> list[list[int]]:
    """Consecutive parallel-safe calls share a group; every other call is a group of one."""
    groups: list[list[int]] = []
    previous_safe = False
    for index, (name, _) in enumerate(calls):
        safe = name in tools and tools[name].parallel_safe
        if safe and previous_safe:
            groups[-1].append(index)
        else:
            groups.append([index])
        previous_safe = safe
    return groups

