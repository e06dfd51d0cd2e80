"""Every built-in tool as one ``ToolSpec``: its schema, where its code is, and its facts.

This module is plain data: each ``fn`` is a ``"module:function"`` string that
``paicli.tools.registry`` resolves, so ``paicli.tools.policy`` can import it without importing a
tool (the import-linter contract). ``save_skill_reference`` and ``revert_turn`` get their implementation where
the session builds them (they need the skill library or the snapshot store): ``spec.bound(fn)``.

To add a tool: CONTRIBUTING.md, "Add a tool".
"""

from __future__ import annotations

from typing import Any

from paicli.tools.base import ToolSpec
from paicli.tools.facts import ToolFacts

__all__ = ["BUILTIN_SPECS", "CODE_MAP", "EVERY_SPEC", "REVERT_TURN", "SAVE_SKILL_REFERENCE", "SEARCH_CODE", "ToolFacts"]


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _integer(description: str) -> dict[str, str]:
    return {"type": "integer", "description": description}


def _boolean(description: str) -> dict[str, str]:
    return {"type": "boolean", "description": description}


def _params(required: list[str], **properties: dict[str, str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_PATH = _string("相对项目根目录的路径")

BUILTIN_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read_file",
        "读取项目内文件的内容。不带 offset/limit 时返回全文；大文件请用 offset 和 limit 分段读取，结果带行号。",
        _params(["path"], path=_PATH,
                offset=_integer("起始行号，1 表示第一行；省略时读取全文"),
                limit=_integer("最多读取多少行；省略时读取全文，最大 2000 行")),
        "paicli.tools.builtin.files:read_file", parallel_safe=True,
        facts=ToolFacts(label="📖 读取 {n} 个文件", guard="path", path_arg="path", turn_file=True, ranged_read=True),
    ),
    ToolSpec(
        "write_file",
        "把完整内容写入项目内的文件（覆盖已有内容），会自动创建缺少的父目录。修改已有文件的局部请用 edit_file。",
        _params(["path", "content"], path=_PATH, content=_string("要写入的完整文件内容")),
        "paicli.tools.builtin.files:write_file",
        facts=ToolFacts(label="✏️ 写入 {n} 个文件", approval="ask", danger="🟡 中危",
                        risk="将写入或覆盖文件内容，原有内容将丢失", preview="write",
                        writes="project", guard="path", path_arg="path", turn_file=True, audited=True),
    ),
    ToolSpec(
        "edit_file",
        "在已有文件中把 old_text 精确替换为 new_text。old_text 默认必须在文件中唯一出现，"
        "匹配多处时请提供更多上下文，或设置 replace_all=true 替换全部。",
        _params(["path", "old_text", "new_text"], path=_PATH,
                old_text=_string("要替换的原文，须与文件内容完全一致（包括空白和缩进）"),
                new_text=_string("替换后的文本；为空字符串表示删除 old_text"),
                replace_all=_boolean("是否替换所有匹配，默认 false")),
        "paicli.tools.builtin.files:edit_file",
        facts=ToolFacts(label="✏️ 编辑 {n} 个文件", approval="ask", danger="🟡 中危",
                        risk="将替换文件中唯一匹配的原文片段", preview="edit",
                        writes="project", guard="path", path_arg="path", turn_file=True, audited=True),
    ),
    ToolSpec(
        "create_project",
        "在项目内新建一个 java、python 或 node 项目骨架（新目录 <name>/）：java 含 src/main/java、src/main/resources 和 pom.xml；"
        "python 含同名包目录、main.py 和 requirements.txt；node 含 package.json。目录已存在且不为空时不会创建。",
        _params(["name", "type"], name=_string("项目名，也是新目录名（字母开头，只含字母、数字、_ 和 -）"),
                type=_string("项目类型：java、python 或 node")),
        "paicli.tools.builtin.project:create_project",
        facts=ToolFacts(label="🏗️ 创建 {n} 个项目", approval="ask", danger="🟡 中危",
                        risk="将在项目内创建新目录和项目骨架文件",
                        writes="project", guard="path", path_arg="name", audited=True),
    ),
    ToolSpec(
        "list_dir",
        "列出目录下的直接子项（不递归），[D] 表示目录，[F] 表示文件。",
        _params(["path"], path=_string("相对项目根目录的目录路径，项目根用 .")),
        "paicli.tools.builtin.files:list_dir", parallel_safe=True,
        facts=ToolFacts(label="📂 列出 {n} 个目录", guard="path", path_arg="path"),
    ),
    ToolSpec(
        "glob_files",
        "按 glob 模式查找文件路径，例如 **/*.py 或 src/**/test_*.py；不含 / 的模式会在任意层级按文件名匹配。"
        "会跳过 .git、node_modules、build 等目录。",
        _params(["pattern"], pattern=_string("glob 模式"),
                path=_string("搜索起始目录，默认 ."),
                max_results=_integer("最多返回多少个文件，默认 50，最大 200")),
        "paicli.tools.builtin.search:glob_files", parallel_safe=True,
        facts=ToolFacts(label="🔍 搜索代码 {n} 次", guard="path", path_arg="path", path_default="."),
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
        "paicli.tools.builtin.search:grep_code", parallel_safe=True,
        facts=ToolFacts(label="🔍 搜索代码 {n} 次", guard="path", path_arg="path", path_default="."),
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
        "paicli.tools.builtin.shell:execute_command", is_async=True,
        facts=ToolFacts(label="⚡ 执行 {n} 条命令", approval="auto", danger="🔴 高危",
                        risk="将在系统上执行 Shell 命令，可能修改文件、安装软件或影响系统状态",
                        auto_review=True, guard="command", audited=True, preview="command"),
    ),
    ToolSpec(
        "web_search",
        "联网搜索，返回标题、摘要和链接。需要最新信息或定位网页时使用；"
        "之后用 web_fetch 抓取的 URL 必须来自用户输入或搜索结果，不能猜测。",
        _params(["query"], query=_string("搜索关键词"),
                top_k=_integer("返回结果数量，默认 5，最大 20")),
        "paicli.tools.builtin.web_search:web_search", is_async=True, parallel_safe=True,
        facts=ToolFacts(label="🌐 联网搜索 {n} 次", external=True, web="search"),
    ),
    ToolSpec(
        "web_fetch",
        "抓取一个网页并把正文转换为 Markdown 返回。URL 必须来自用户输入或 web_search 的结果；"
        "只允许 http/https 公网地址。",
        _params(["url"], url=_string("要抓取的网页 URL（http 或 https）"),
                max_chars=_integer("正文最多返回多少字符，默认 8000；小于等于 0 表示不截断")),
        "paicli.tools.builtin.web_fetch:web_fetch", is_async=True, parallel_safe=True,
        facts=ToolFacts(label="📰 抓取 {n} 个网页", audited=True, external=True, web="fetch"),
    ),
    ToolSpec(
        "save_memory",
        "把用户明确要求记住的稳定事实或偏好写入长期记忆，跨会话可用。只保存用户自己说出的内容；"
        "与已有记忆冲突时不会写入，而是返回新旧两条，请让用户选择后再用 replace_id 或 keep_both。",
        _params(["fact"], fact=_string("要保存的精炼事实，一句话"),
                scope=_string("project（默认，当前项目）或 global（跨项目通用偏好）"),
                replace_id=_string("用户选择替换的已有记忆 id"),
                keep_both=_boolean("用户选择两条都保留时为 true")),
        "paicli.tools.builtin.memory_tool:save_memory",
        facts=ToolFacts(label="💾 保存长期记忆 {n} 条", audited=True, memory=True),
    ),
)



# Bound where the session builds them: paicli.tools.snapshots.revert, paicli.tools.skills.reference.
REVERT_TURN = ToolSpec(
    "revert_turn",
    "把项目工作区恢复到第 offset 个最近轮次开始前的 Side-Git 快照（1 表示本轮之前，默认 1）。"
    "恢复前会先为当前工作区另存一个快照，用户可以用 /restore 1 撤销。会批量覆盖或删除文件，每次都需要用户确认。",
    {"type": "object",
     "properties": {"offset": {"type": "integer", "description": "第几个最近的快照，1 表示最近一次，默认 1"}},
     "required": []},
    None,
    # reference v.1: never run without a person's yes; an automatic reviewer must not allow it either.
    facts=ToolFacts(label="↩️ 回滚快照 {n} 次", approval="always", danger="🔴 高危",
                    risk="将按 Side-Git 快照批量恢复工作区文件，可能覆盖当前未保存修改",
                    notice="回滚快照会批量覆盖或删除工作区文件，每次都需要用户确认（“全部放行”和 --yes 都不代替确认；"
                           "没有终端时须设置 PAICLI_ALLOW_REVERT=yes 才会执行）",
                    audited=True),
)
SAVE_SKILL_REFERENCE = ToolSpec(
    "save_skill_reference",
    "把经验或资料写入用户 Skill 的参考文件（references/ 下的 .md），以后可用 load_skill 的 file 参数读取。"
    "只能写用户 Skill；默认追加，overwrite=true 时替换。每次最多 8000 字符，单个文件最多 64KB。",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "用户 Skill 的名称（$PAICLI_HOME/skills/<name>/）"},
            "file": {"type": "string", "description": "Skill 目录内的相对路径，必须位于 references/ 下并以 .md 结尾，例如 references/notes.md"},
            "content": {"type": "string", "description": "要写入的 Markdown 内容，每次最多 8000 字符"},
            "overwrite": {"type": "boolean", "description": "true 时替换整个文件；默认 false，追加到文件末尾"},
        },
        "required": ["name", "file", "content"],
    },
    None,
    facts=ToolFacts(label="📝 写入 Skill 参考文件 {n} 个", approval="ask", danger="🔴 高危",
                    risk="将写入用户 Skill 的参考文件，以后加载该 Skill 的会话会读到这些内容",
                    writes="skill", audited=True),
)

# The code index (issue 37): bound to the session's index in paicli.tools.builtin.code_search.code_index_specs.
SEARCH_CODE = ToolSpec(
    "search_code",
    "在本地代码索引中检索代码（tree-sitter 符号 + BM25，配置了向量服务时为混合检索），"
    "可以用自然语言（中文或英文）或标识符提问，返回排序后的 文件:行号、符号、签名和代码片段。"
    "不确定名字、关键词难以确定或 grep_code 无果时使用；首次调用会自动建立索引。",
    _params(["query"], query=_string("要找的代码：一句描述、一个标识符或几个关键词"),
            top_k=_integer("返回结果数量，默认 5，最大 30")),
    None, parallel_safe=True,
    facts=ToolFacts(label="🔍 搜索代码 {n} 次"),
)
CODE_MAP = ToolSpec(
    "code_map",
    "给出仓库的代码地图：按引用关系（PageRank）排序最重要的类和函数的签名，按文件分组，"
    "并以本轮读写过的文件和 focus 为中心。刚接触一个陌生仓库、需要了解整体结构时使用。"
    "给出 symbol 时改为列出这个符号的定义、使用它的地方、它调用的和子类/实现（文件:行号）；"
    "结果第一行标明来源：“精确（<语言服务器>）”来自该语言的语言服务器，"
    "“近似（代码索引）”是代码索引按名称匹配（同名符号会混在一起）。",
    _params([], focus=_string("可选：作为中心的文件路径或符号名、关键词，空格分隔"),
            max_tokens=_integer("地图最多多少 token，默认 1500，范围 200 到 6000"),
            symbol=_string("可选：要查看定义和引用的符号，如 parse_date 或 Cart.total（给出时不返回地图）")),
    None, is_async=True, parallel_safe=True,
    facts=ToolFacts(label="🗺️ 代码地图 {n} 次"),
)
# Every spec made here, those the session binds or adds (revert_turn, save_skill_reference, the code
# tools) included: what a table holds at most before MCP and browser tools join it (/policy's
# listing before a session exists).
EVERY_SPEC: tuple[ToolSpec, ...] = (*BUILTIN_SPECS, REVERT_TURN, SAVE_SKILL_REFERENCE, SEARCH_CODE, CODE_MAP)
