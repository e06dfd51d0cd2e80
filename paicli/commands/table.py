"""Every slash command, one :class:`CommandSpec` each, in ``/help`` order (reference u.1).

``/help``, completion, ``paicli -p "/…"``, the REPL and the README's command table come from this
list (``paicli.commands.dispatch``); a mode's command (``/plan``, ``/team``) comes from its
``ModeSpec`` row in ``paicli.modes``. A new command is a row here and its handler in a module of
its own under ``paicli/commands/`` (CONTRIBUTING, "Add a slash command").

Only the standard library and ``paicli.modes`` are imported here: the handlers are named, and
imported when their command first runs.
"""

from __future__ import annotations

from typing import Any

from paicli.commands.output import Output
from paicli.commands.spec import CommandResult, CommandSpec, Handler, Line
from paicli.modes import MODES, ModeSpec

C = "paicli.commands."


def mode_command(spec: ModeSpec) -> Handler:
    """``/<mode> [任务]`` (reference s.1 item 8): a run in the mode, or the next input in it."""

    def run(app: Any, payload: str, say: Output) -> CommandResult | None:
        if payload:
            return CommandResult(run=(spec.name, payload))
        app.next_mode = spec.name
        say(spec.next_input)
        return None

    run.__name__ = f"{spec.name}_command"
    return run


def mode_commands() -> tuple[CommandSpec, ...]:
    return tuple(CommandSpec(m.command, mode_command(m), m.command_help, m.command_doc[1], arguments="[任务]",
                             doc_arguments=m.command_doc[0])
                 for m in MODES if m.command and m.command_help is not None)


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("/help", C + "dispatch:show_help", "显示可用命令", "the command list"),
    CommandSpec("/model", C + "model:model",
                "查看当前模型；list 列出目录与端点的模型；<服务商>/<模型> 连同服务商和 key 一起切换；add 登记模型的窗口与能力",
                "the model: endpoint, window, output limit, reasoning, images, price, thresholds",
                arguments="[list|info|refresh|add] [服务商/]<模型>", doc_arguments="[info]",
                completion=("list", "info", "refresh", "add"),
                more=(Line("list|refresh", "", "the model catalog by provider (window, reasoning, images, price; which "
                           "keys are set), then the endpoint's own `/v1/models` (`refresh` asks it again)"),
                      Line("[provider/]<name>", "", "switch model, or provider, key and model together, live: the "
                           "window, thresholds, light model and reviewer follow"),
                      Line("add [provider/]<name> [--window N] [--output N] [--vision] [--reasoning] [--price in/out]",
                           "", "register a model in `$PAICLI_HOME/config.json`"))),
    CommandSpec("/resume", C + "conversation:resume", "列出最近的会话并选择一个继续；带 id 时直接继续",
                "list recent sessions (newest first, with their mode, message count, first message, and `⏸️` "
                "when a Plan or Team run is unfinished) and pick one; with an id, continue it",
                arguments="[会话 id]", doc_arguments="[id]"),
    CommandSpec("/clear", C + "clear:clear", "清空当前对话（长期记忆保留；清空的对话无法用 /resume 找回）",
                "start an empty conversation in the same session; long-term memory stays, and the ledger keeps its "
                "lines, but no command brings the cleared conversation back (`/resume` continues the session as it "
                "is now)", aliases=("clear",), mention=("clear",), mention_note=("，先确认", ", which asks first")),
    CommandSpec("/cancel", C + "mode:cancel", "任务运行中按 Ctrl-C 或 ESC 取消；空闲时取消待执行的 /plan、/team（也可按 ESC）",
                "drop a pending `/plan` or `/team` (as ESC at the prompt does), else say nothing runs; a running "
                "turn is cancelled with Ctrl-C or ESC", aliases=("cancel",), mention=("cancel",)),
    CommandSpec("/compact", C + "conversation:compact", "立即把早期对话压缩为摘要（保留最近一轮）",
                "summarise the conversation now, keeping the last user round"),
    CommandSpec("/context", C + "conversation:context", "查看上下文占用与压缩阈值",
                "where the next request's tokens go, how far the compaction thresholds are, and how much of "
                "it repeats the last request (the part the prompt cache serves)", aliases=("/ctx",)),
    CommandSpec("/save", C + "memory:save", "保存长期记忆（默认当前项目；--global 全局；--force 冲突时两条都保留）",
                "remember a fact for this project (`--global`: for every project; `--force`: keep it even if "
                "it conflicts with a stored one)",
                arguments="[--global] [--force] <事实>", doc_arguments="[--global] [--force] <fact>",
                completion=("--global", "--force")),
    CommandSpec("/memory", C + "memory:memory", "查看和管理长期记忆（clear 只清空当前项目的，先确认）",
                "memory status; `list`, `search <q>`, `delete <id>`, `verify <id>` (still true: refresh its "
                "date), `replace <id> <fact>`, `clear [--global] [--yes]` (this project's memories, the global ones "
                "too with `--global`, after a `y/N` question counting each; a script needs `--yes`)",
                arguments="[list|search|delete|verify|replace|clear]", doc_arguments="",
                completion=("list", "search", "delete", "verify", "replace", "clear")),
    CommandSpec("/skill", C + "skill:skill", "查看和管理 Skill；项目 Skill 须 /skill trust 后才会作为指令加载",
                "list skills (broken ones with the reason), show one, turn one off or on, trust a project "
                "skill, rescan the skill folders",
                arguments="[list|show|on|off|trust|reload] [名称]", doc_arguments="[list|show|on|off|trust|reload] [name]",
                aliases=("/skills",), completion=("list", "show", "on", "off", "trust", "reload")),
    CommandSpec("/audit", C + "project:audit", "查看今天最近 N 条危险工具调用的审计记录（默认 10）",
                "today's last N risky tool calls (writes, commands, memory writes, fetches), allowed, refused "
                "or cancelled (Ctrl-C at the question or while it ran); an edited call shows the arguments "
                "that ran and the model's beside them", arguments="[N]"),
    CommandSpec("/mcp", C + "mcp:mcp", "查看 MCP server 状态与工具数；重启、停用、启用、信任项目 server、查看日志",
                "MCP servers: state and tool counts; restart, stop or start one, trust a project server, "
                "show its log", arguments="[restart|disable|enable|trust|logs <name>]",
                completion=("restart", "disable", "enable", "trust", "logs", "resources", "prompts"),
                more=(Line("resources|prompts [name]", "列出 MCP server 提供的资源、资源模板与提示词（@server:uri 在输入中引用资源）",
                           "what MCP servers offer: resources (uri, name, type, description), resource templates and "
                           "prompts (name, arguments)"),
                      Line("prompts <name> <提示词> [参数=值 …]", "取回 MCP 提示词（prompts/get）放入输入框，编辑后发送",
                           "fetch an MCP prompt into the input (edit, then Enter to send); `-p` prints it",
                           "prompts <name> <prompt> [arg=value …]"))),
    CommandSpec("/browser", C + "browser:browser",
                "查看浏览器模式与页面；连接你正在运行的 Chrome（需输入 y 确认）、断开回到隔离模式、列出标签页",
                "the browser (`PAICLI_BROWSER`): its mode and pages; hand the agent your running Chrome after you "
                "type `y`, go back to the isolated browser, list the tabs",
                arguments="[status|connect [端口]|disconnect|tabs]", doc_arguments="[status|connect [port]|disconnect|tabs]",
                completion=("status", "connect", "disconnect", "tabs")),
    CommandSpec("/lsp", C + "lsp:lsp", "查看语言服务器（语言、根目录、状态）；重启、关闭或恢复某种语言的服务器",
                "language servers: each language, its server, root, state (starting, ready, failed and why); "
                "restart one (a failed one too), turn a language off or on for the session",
                arguments="[restart|off|on <语言>]", doc_arguments="[restart|off|on <language>]",
                completion=("restart", "off", "on")),
    *mode_commands(),  # paicli.modes
    CommandSpec("/continue", C + "continuing:continue_run", "继续执行当前会话中被中断的计划或多 Agent 运行",
                "finish this session's Plan or Team run that was cut short (Ctrl-C, a crash, `kill -9`); the "
                "Ctrl-C message names the session and says `/continue`"),
    CommandSpec("/index", C + "code_index:index", "建立或更新代码索引（带路径时先把项目根切换过去）；status 查看，clear 删除",
                "build or update the project's code index (symbols and references from tree-sitter, BM25 in SQLite; "
                "vectors when an embeddings endpoint is set); with a path, move the project root there first; "
                "`status`, `clear`", arguments="[路径|status|clear]", doc_arguments="[path|status|clear]",
                completion=("status", "clear")),
    CommandSpec("/search", C + "code_index:search", "在代码索引中检索（自然语言或标识符，中英文皆可），列出 文件:行号",
                "search the code index as the model's `search_code` does (words, Chinese or English, or "
                "identifiers): `path:line`, symbol, signature", arguments="<查询>", doc_arguments="<query>"),
    CommandSpec("/graph", C + "code_index:graph", "查看符号的定义、使用处、调用和子类；不带符号时显示仓库的代码地图",
                "a symbol's definition, users, calls and subclasses: exact from the language server where one is "
                "up (`精确（basedpyright）`), else matched by name (`近似（代码索引）`); alone: the repository map, "
                "its most referenced definitions", arguments="[符号]", doc_arguments="[Symbol]"),
    CommandSpec("/snapshot", C + "snapshot:snapshot", "查看每次运行前自动保存的项目快照、仓库占用；clean 只保留最近 N 个",
                "the project's turn snapshots, newest first (time, mode, input, files changed since); where "
                "they live, their size and limits; keep only the newest N",
                arguments="[list|status|clean [N]]", completion=("list", "status", "clean")),
    CommandSpec("/restore", C + "snapshot:restore",
                "把工作区恢复到第 N 个快照（默认 1 = 最近一次运行之前），先列出改动并确认；可再次 /restore 1 撤销",
                "put the project's files back as they were before the N-th most recent run (default 1), after "
                "showing what changes and asking; `/restore 1` again undoes it", arguments="[N]"),
    CommandSpec("/mode", C + "mode:mode",
                "查看或切换会话模式（Shift+Tab 循环切换）：auto 自动审查，plan 每条输入先规划，ask 全部确认",
                "show or set the session mode (Shift+Tab cycles them): `auto` (the start) lets the auto "
                "reviewer pass low-risk commands, `plan` plans every input before it runs, `ask` asks for "
                "every write, edit and command", arguments="[auto|plan|ask]", completion=("auto", "plan", "ask")),
    CommandSpec("/hitl", C + "mode:hitl", "查看或切换审批档位：on 全部危险操作都确认；default 由模型审查命令（启动默认）",
                "show or set the approval level: `on` asks for every write, edit and command; `default` (the "
                "startup level) lets the auto reviewer pass low-risk commands",
                arguments="[on|default]", completion=("on", "default")),
    CommandSpec("/policy", C + "project:policy", "查看安全策略、审批档位、全部放行的工具和今日最近的拒绝",
                "the guards, the approval level, the tools approved for the session and today's recent refusals"),
    CommandSpec("/config", C + "project:config", "查看生效的配置及每项的来源（密钥已遮盖）",
                "the settings in effect and where each came from (environment, `.env`, `config.json`, "
                "default); the key is masked", completion=("provider",),
                more=(Line("provider [名称]", "列出服务商及其 key 是否已设置；带名称时设为默认服务商并切换",
                           "the providers and whether each has a key; with a name, make it the default (in "
                           "`config.json`) and switch to it", "provider [name]"),)),
    CommandSpec("/init", C + "project:init", "根据项目文件生成简短的 PAI.md（不调用模型；--force 覆盖已有文件）",
                "write a short `PAI.md` from the project's files (no model call; `--force` replaces an "
                "existing one)", arguments="[--force]", completion=("--force",)),
    CommandSpec("/export", C + "project:export", "把当前对话导出为 Markdown（$PAICLI_HOME/exports/）",
                "save the conversation as Markdown under `$PAICLI_HOME/exports/` and print the path"),
    CommandSpec("/history", C + "project:history", "清空输入历史",
                "forget the input history (Up no longer brings old inputs back)", arguments="clear",
                completion=("clear",)),
    CommandSpec("/exit", C + "dispatch:leave", "退出 paicli（也可以输入 exit / quit，或连按两次 Ctrl-C）",
                "leave (also `exit`, `quit`, Ctrl-D, or Ctrl-C twice at the prompt)", aliases=("/quit", "exit", "quit")),
)
