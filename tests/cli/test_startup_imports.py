"""Issue 30: a plain ``paicli -p`` turn imports only what it uses.

No MCP server configured, no memories, a model that answers in text: the run must not load the
MCP client, the web tools, Studio, the shell parser or jieba, nor what only a tool call, a fact
extraction or ``/context`` needs (the command guards, the extraction pipeline, the prefix share,
the sandbox's explanation of a refused command).
``python -X importtime`` lists every module a process imported on stderr, so the real process is
checked, with nothing patched.

Left out of the list, on purpose: ``paicli.tools.mcp.config`` (reading ``mcp.json`` is how paicli learns
that no server is configured), the skill library (the built-in ``commit-message`` skill is in
every system prompt's skill index), and whatever ``langgraph`` itself imports (``langgraph_sdk``,
through ``langgraph.runtime``).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.cli.conftest import RUN_TIMEOUT, run_timeout
from tests.support.openai_server import Reply

FORBIDDEN = re.compile(r"^(mcp|langchain_mcp_adapters|psycopg|psycopg_pool|langgraph_api|langgraph_sdk|bashlex|jieba|bs4|markdownify"
                       r"|numpy|tree_sitter\w*|pathspec|codeindex\.(?!options$)\w+|paicli\.studio\w*|paicli\.tools\.mcp\.(?!config$|names$)\w+|paicli\.tools\.(?:builtin\.)?web_\w+"
                       r"|paicli\.memory\.longterm\.(thesaurus|retriever|terms)"
                       # issue 30 item 1: the command guards (imported by the first call decided), the
                       # fact-extraction pipeline (by the first extraction), /context's prefix share
                       r"|paicli\.tools\.policy\.(preflight|guards|command_rules|shell_parse|shell_words|shell_quote|scripts"
                       r"|script_files|recipes|git_blob)"
                       r"|paicli\.memory\.longterm\.(fact_extraction|fact_filters)"
                       r"|paicli\.run\.request_prefix|paicli\.memory\.context\.prefix_cache|paicli\.tools\.sandbox\.explain)(\.|$)")
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)


def imported(args: list[str], **kw) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True,
                          encoding="utf-8", timeout=run_timeout(RUN_TIMEOUT * 2), **kw)
    return done, set(IMPORTED.findall(done.stderr))


def test_a_plain_p_turn_imports_no_mcp_web_studio_shell_parser_or_memory_ranking(server, paicli_env, project):
    server.script = [Reply("你好")]
    done, modules = imported(["-m", "paicli", "-p", "你好"], cwd=project, env=paicli_env(server.base_url))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "你好" in done.stdout
    assert "paicli.oneshot" in modules and "langchain_openai" in modules  # the listing is real
    _, langgraph_own = imported(["-c", "import langchain_openai, langgraph.graph"])
    unwanted = sorted(m for m in modules - langgraph_own if FORBIDDEN.match(m))
    assert unwanted == []


@pytest.mark.process  # once per process
def test_the_session_import_leaves_its_objects_to_no_collector_and_the_collector_on():
    program = ("import gc, sys; from paicli.app import import_session; import_session(); "
               "print(gc.isenabled(), gc.get_freeze_count() > 50_000, 'paicli.run.session' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=run_timeout(RUN_TIMEOUT * 2))
    assert done.stdout.split() == ["True", "True", "True"], done.stderr[-2000:]


@pytest.mark.process
def test_a_process_that_already_imported_the_session_keeps_its_collector_as_it_is():
    program = ("import gc, paicli.run.session; gc.disable(); from paicli.app import import_session; import_session(); "
               "print(gc.isenabled(), gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=run_timeout(RUN_TIMEOUT * 2))
    assert done.stdout.split() == ["False", "0"], done.stderr[-2000:]
