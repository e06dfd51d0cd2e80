"""`paicli` entry point: parse flags, then hand over to the REPL or the one-shot runner.

Only the standard library is imported at module level so `paicli --help` stays instant;
LangGraph and the model client are imported when a turn needs them (paicli.session).
"""

from __future__ import annotations

import argparse
import sys

MODES = ("react", "plan", "team")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="paicli",
        description="A terminal coding agent: reads, edits and runs code in your project with any "
        "OpenAI-compatible model (set PAICLI_API_KEY, PAICLI_PROVIDER or PAICLI_BASE_URL, PAICLI_MODEL).",
    )
    p.add_argument("-p", "--prompt", metavar="TEXT", help="run one turn without the REPL, print the answer, exit")
    p.add_argument("--mode", choices=MODES, default="react", help="agent mode (default: react)")
    p.add_argument("--session", metavar="ID", help="continue (or create) the session with this id")
    p.add_argument("--project", metavar="DIR", help="project root the tools work in (default: current directory)")
    p.add_argument("--yes", action="store_true", help="approve every approval request (for scripts)")
    p.add_argument("--debug", action="store_true", help="show tracebacks for unexpected errors")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.mode != "react":
        print(f"paicli: --mode {args.mode} is not available yet; only --mode react works in this version", file=sys.stderr)
        return 2
    from paicli.errors import run_guarded

    if args.prompt is not None:
        from paicli.oneshot import run_oneshot

        return run_guarded(lambda: run_oneshot(args), debug=args.debug)
    from paicli.repl import run_repl

    return run_guarded(lambda: run_repl(args), debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
