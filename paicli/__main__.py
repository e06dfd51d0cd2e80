"""`paicli` entry point: parse flags, then hand over to the REPL or the one-shot runner.

Only the standard library is imported at module level so `paicli --help` stays instant;
LangGraph and the model client are imported when a turn needs them (paicli.session).
"""

from __future__ import annotations

import argparse
import sys

EVAL_SUITES = ("extraction",)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="paicli",
        description="A terminal coding agent: reads, edits and runs code in your project with any "
        "OpenAI-compatible model (set PAICLI_API_KEY, PAICLI_PROVIDER or PAICLI_BASE_URL, PAICLI_MODEL).",
        epilog="Also: 'paicli studio' serves the project to LangGraph Studio and the SDK (see "
        "'paicli studio --help'); 'paicli eval extraction' scores automatic fact extraction on the golden "
        "set with the configured light model (see 'paicli eval --help'); 'paicli db import|export' moves "
        "sessions and memory to or from PAICLI_DATABASE_URL (see 'paicli db --help').",
    )
    p.add_argument("-p", "--prompt", metavar="TEXT", help="run one turn without the REPL, print the answer, exit")
    from paicli.modes import DEFAULT_MODE, MODES  # standard library only

    p.add_argument("--mode", choices=[m.flag for m in MODES], default=DEFAULT_MODE,
                   help="agent mode: " + "; ".join(m.summary for m in MODES))
    p.add_argument("--session", metavar="ID", help="continue (or create) the session with this id")
    p.add_argument("--project", metavar="DIR", help="project root the tools work in (default: current directory)")
    p.add_argument("--yes", action="store_true", help="approve every approval request (for scripts)")
    p.add_argument("--dangerously-skip-sandbox", action="store_true",
                   help="run this run's commands outside the command sandbox (printed on start)")
    p.add_argument("--continue", dest="resume_run", action="store_true",
                   help="finish the Plan or Team run that was cut short in the --session given, else in this "
                   "project's newest session; on a terminal the REPL stays open afterwards")
    p.add_argument("--verbose", action="store_true",
                   help="with -p: show each command's output and each edit's diff on stderr, as the REPL does")
    p.add_argument("--debug", action="store_true", help="show tracebacks for unexpected errors and log background work")
    return p


def eval_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="paicli eval", description="Measure paicli against a built-in data set.")
    p.add_argument("suite", choices=EVAL_SUITES,
                   help="extraction: the 18-sample fact extraction golden set, run on PAICLI_LIGHT_MODEL "
                   "(default: the main model); prints precision, recall, F1 and false writes")
    p.add_argument("--project", metavar="DIR", help="directory whose .env and prompt overrides apply (default: current)")
    p.add_argument("--debug", action="store_true", help="show tracebacks for unexpected errors and log background work")
    return p


def run_eval(argv: list[str]) -> int:
    args = eval_parser().parse_args(argv)
    from paicli.errors import run_guarded

    def evaluate() -> int:
        from paicli.eval_extraction import run
        from paicli.settings import load_settings

        return run(load_settings(args.project))

    return run_guarded(evaluate, debug=args.debug, log_dir=_log_dir())


def _log_dir():
    """$PAICLI_HOME/logs, where a crash's traceback goes (paicli.settings knows PAICLI_HOME)."""
    from paicli.settings import crash_log_dir

    return crash_log_dir()


def run_studio(argv: list[str]) -> int:
    from paicli.errors import run_guarded
    from paicli.studio.command import run_studio as serve

    return run_guarded(lambda: serve(argv), debug="--debug" in argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["eval"]:  # a subcommand; kept out of the agent's flags so they stay as they are
        return run_eval(argv[1:])
    if argv[:1] == ["studio"]:
        return run_studio(argv[1:])
    if argv[:1] == ["db"]:  # issue 28: paicli db import | export
        from paicli.commands.db import run_db
        from paicli.errors import run_guarded

        return run_guarded(lambda: run_db(argv[1:]), debug="--debug" in argv, log_dir=_log_dir())
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
    from paicli.repl import run_repl

    return run_guarded(lambda: run_repl(args), debug=args.debug, log_dir=_log_dir())


if __name__ == "__main__":
    sys.exit(main())
