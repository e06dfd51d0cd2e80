"""`paicli` entry point: parse flags, then hand over to the REPL or the one-shot runner.

Only the standard library is imported at module level so `paicli --help` stays instant;
LangGraph and the model client are imported when a turn needs them (paicli.run.session).
"""

from __future__ import annotations

import argparse
import sys

from paicli.ui.arguments import Parser  # standard library only

EVAL_SUITES = ("extraction",)


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="paicli", add_help=False,
        description="终端编程 Agent：用任意 OpenAI 兼容模型读取、编辑并运行你项目中的代码"
        "（设置 PAICLI_API_KEY、PAICLI_PROVIDER 或 PAICLI_BASE_URL、PAICLI_MODEL）。",
        epilog="另有：'paicli studio' 把项目提供给 LangGraph Studio 和 SDK（见 'paicli studio --help'）；"
        "'paicli eval extraction' 用配置的轻量模型在标准集上为自动事实提取打分（见 'paicli eval --help'）；"
        "'paicli db import|export' 把会话和记忆迁入或迁出 PAICLI_DATABASE_URL（见 'paicli db --help'）。",
    )
    p.add_argument("-h", "--help", action="help", help="显示本帮助并退出")  # argparse's own is English
    p.add_argument("--version", action="version", version=f"paicli {_version()}", help="显示版本并退出")
    p.add_argument("-p", "--prompt", metavar="TEXT", help="不进入 REPL，运行一轮，打印回答后退出")
    from paicli.modes import DEFAULT_MODE, MODES  # standard library only

    p.add_argument("--mode", choices=[m.flag for m in MODES], default=DEFAULT_MODE,
                   help="Agent 模式。" + "；".join(m.summary for m in MODES))
    p.add_argument("--session", metavar="ID", help="继续（或新建）这个 id 的会话")
    p.add_argument("--project", metavar="DIR", help="工具工作的项目根目录（默认当前目录）")
    p.add_argument("--yes", action="store_true", help="批准所有审批请求（用于脚本）")
    p.add_argument("--dangerously-skip-sandbox", action="store_true",
                   help="本次运行的命令不进命令沙箱（启动时会打印提示）")
    p.add_argument("--continue", dest="resume_run", action="store_true",
                   help="完成被中断的 Plan 或 Team 运行：在 --session 指定的会话中，否则在本项目最新的会话中；"
                   "在终端上之后留在 REPL")
    p.add_argument("--verbose", action="store_true",
                   help="与 -p 一起用：像 REPL 一样在 stderr 显示每条命令的输出、每次编辑的 diff 和模型的思考过程")
    p.add_argument("--debug", action="store_true", help="意外错误时显示 traceback，并记录后台工作的日志")
    return p


def _version() -> str:
    """The installed distribution's version (issue 41: ``paicli --version``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("paicli")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown"


def eval_parser() -> argparse.ArgumentParser:
    p = Parser(prog="paicli eval", description="用内置数据集评测 paicli。", add_help=False)
    p.add_argument("-h", "--help", action="help", help="显示本帮助并退出")  # argparse's own is English
    p.add_argument("suite", choices=EVAL_SUITES,
                   help="extraction：18 个样本的事实提取标准集，用 PAICLI_LIGHT_MODEL（默认主模型）运行；"
                   "打印 precision、recall、F1 和错误写入数")
    p.add_argument("--project", metavar="DIR", help="使用哪个目录的 .env 和提示词覆盖（默认当前目录）")
    p.add_argument("--debug", action="store_true", help="意外错误时显示 traceback，并记录后台工作的日志")
    return p


def run_eval(argv: list[str]) -> int:
    args = eval_parser().parse_args(argv)
    from paicli.errors import run_guarded

    def evaluate() -> int:
        from paicli.commands.eval_extraction import run
        from paicli.config.settings import load_settings

        return run(load_settings(args.project))

    return run_guarded(evaluate, debug=args.debug, log_dir=_log_dir())


def _log_dir():
    """$PAICLI_HOME/logs, where a crash's traceback goes (paicli.config.settings knows PAICLI_HOME)."""
    from paicli.config.settings import crash_log_dir

    return crash_log_dir()


def run_studio(argv: list[str]) -> int:
    from paicli.errors import run_guarded
    from paicli.studio.command import run_studio as serve

    return run_guarded(lambda: serve(argv), debug="--debug" in argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["eval"], ["studio"], ["db"]):  # subcommands, kept out of the agent's flags
        return subcommand(argv[0], argv[1:])
    args = parser().parse_args(argv)
    if args.resume_run and args.prompt is not None:
        print("paicli: --continue 不能与 -p 同用（/continue 可以：paicli -p /continue --session ID）", file=sys.stderr)
        return 2
    from paicli.errors import run_guarded

    if args.debug:  # background work (fact extraction) reports its failures at info level
        import logging

        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.resume_run and not sys.stdin.isatty():  # on a terminal, the REPL finishes it (paicli.repl)
        from paicli.oneshot import run_continue

        return run_guarded(lambda: run_continue(args), debug=args.debug, log_dir=_log_dir())
    if args.prompt is not None:
        from paicli.oneshot import run_oneshot

        return run_guarded(lambda: run_oneshot(args), debug=args.debug, log_dir=_log_dir())
    if not _is_terminal(sys.stdin):  # issue 41: `echo task | paicli` runs the input as -p would
        from paicli.oneshot import run_piped

        return run_guarded(lambda: run_piped(args), debug=args.debug, log_dir=_log_dir())
    if not _is_terminal(sys.stdout):  # the REPL would draw its prompt and status bar into the pipe
        print("paicli: 标准输出不是终端，REPL 无法在这里显示；运行一轮请用 paicli -p \"任务\"", file=sys.stderr)
        return 2
    from paicli.repl import run_repl

    return run_guarded(lambda: run_repl(args), debug=args.debug, log_dir=_log_dir())


def subcommand(name: str, argv: list[str]) -> int:
    """``paicli eval …``, ``paicli studio …``, ``paicli db import|export`` (issue 28)."""
    if name == "eval":
        return run_eval(argv)
    if name == "studio":
        return run_studio(argv)
    from paicli.commands.db import run_db
    from paicli.errors import run_guarded

    return run_guarded(lambda: run_db(argv), debug="--debug" in argv, log_dir=_log_dir())


def _is_terminal(stream) -> bool:
    try:
        return bool(stream) and stream.isatty()
    except (AttributeError, ValueError):  # closed, or no stream at all
        return False


if __name__ == "__main__":
    sys.exit(main())
