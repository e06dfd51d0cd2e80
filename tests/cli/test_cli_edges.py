"""What a script sees at the edges of ``paicli -p``: exit codes, one line on stderr naming
what to fix, a closed stdout pipe, an empty answer, and a terminal that only shows text."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.cli.conftest import run_timeout
from tests.support.openai_server import Hang, Reply
from tests.support.pty_terminal import PtyTerminal

HOSTILE = "a\x1b]52;c;cm0gLXJmIH4=\x07b\x1b[2Jc\x1b]0;owned\x07d\x9b31me\u202ef"
# ESC, BEL, the other C0 controls but \t and \n, DEL, C1 (U+0080–U+009F), bidi overrides.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def one_problem_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line a script gets; never a traceback or an "内部错误" (internal error)."""
    assert "Traceback" not in done.stderr and "内部错误" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


# --- settings the user must fix: exit 2, one line naming the setting ---------------------

@pytest.mark.parametrize("text, named", [
    ("[1, 2]", "config.json"),
    ('"glm"', "config.json"),
    ("{not json", "config.json"),
    ('{"model": ["a", "b"]}', '"model"'),
    ('{"context_window": true}', '"context_window"'),
])
def test_a_config_file_of_the_wrong_shape_exits_2_naming_it(text, named, server, run_paicli, paicli_home):
    (paicli_home / "config.json").write_text(text, encoding="utf-8")
    done = run_paicli("-p", "hello", env={"PAICLI_MODEL": None})
    assert done.returncode == 2
    assert named in one_problem_line(done)
    assert done.stdout == "" and server.requests == []


@pytest.mark.parametrize("name, value", [
    ("PAICLI_BASE_URL", "http://127.0.0.1:99999/v1"),
    ("PAICLI_BASE_URL", "http://127.0.0.1:port/v1"),
    ("PAICLI_BASE_URL", "localhost:8080"),
    ("PAICLI_BASE_URL", "http://[::1/v1"),
    ("PAICLI_SEARXNG_URL", "http://127.0.0.1:70000"),
    ("PAICLI_SEARXNG_URL", "http://search host/"),
])
def test_a_malformed_url_setting_exits_2_naming_it(name, value, server, run_paicli):
    done = run_paicli("-p", "hello", env={name: value})
    assert done.returncode == 2
    assert name in one_problem_line(done)
    assert server.requests == []


@pytest.mark.parametrize("name", ["PAICLI_MEMORY_AUTO_EXTRACT_ENABLED", "PAICLI_TOOL_OFFLOAD_ENABLED"])
def test_an_unknown_flag_word_exits_2_naming_the_setting(name, server, run_paicli):
    """One flag parser: 'nope' is neither on nor off, for a memory flag as for a compaction flag."""
    done = run_paicli("-p", "hello", env={name: "nope"})
    assert done.returncode == 2
    line = one_problem_line(done)
    assert name in line and "'nope'" in line
    assert done.stdout == "" and server.requests == []


@pytest.mark.parametrize("session", ["s" * 300, "a/b", "..", "x/../../y", "-rf", ".hidden", "bad\x1b[2Jid"])
def test_an_unusable_session_id_exits_2_naming_the_flag(session, server, run_paicli):
    done = run_paicli("-p", "hello", f"--session={session}")
    assert done.returncode == 2
    line = one_problem_line(done)
    assert "--session" in line and "\x1b" not in line
    assert server.requests == []


def test_the_longest_allowed_session_id_works(server, run_paicli, paicli_home):
    server.script = [Reply("ok")]
    done = run_paicli("-p", "hello", "--session", "s" * 128)
    assert done.returncode == 0, done.stderr
    assert (paicli_home / "history" / "raw" / f"{'s' * 128}.jsonl").exists()


# --- slash commands in scripts ---------------------------------------------------------------

def test_an_unknown_slash_command_exits_1_with_one_line(server, run_paicli):
    done = run_paicli("-p", "/bogus")
    assert done.returncode == 1
    assert one_problem_line(done) == "❌ 未知命令: /bogus"
    assert done.stdout == "" and server.requests == []


def test_deleting_a_missing_memory_exits_1(server, run_paicli):
    done = run_paicli("-p", "/memory delete fact-00000000")
    assert done.returncode == 1
    assert one_problem_line(done) == "📭 未找到长期记忆: fact-00000000"
    assert done.stdout == ""


# --- the answer's edges ----------------------------------------------------------------------

def test_an_empty_answer_exits_1_with_a_notice(server, run_paicli):
    server.script = [Reply("")]
    done = run_paicli("-p", "hello")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "模型返回了空回复" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.process
def test_stdout_closed_by_its_reader_ends_quietly(server, paicli_env, project):
    """``paicli -p … | head -c 10``: the reader is gone before the answer is written."""
    server.script = [Reply("x" * 100_000)]
    child = subprocess.Popen([sys.executable, "-m", "paicli", "-p", "hello"], cwd=project,
                             env=paicli_env(server.base_url), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()
    _, err = child.communicate(timeout=run_timeout())
    stderr = err.decode("utf-8")
    assert child.returncode == 141  # 128 + SIGPIPE, what a shell pipeline expects
    assert "Traceback" not in stderr and "内部错误" not in stderr and "Exception ignored" not in stderr


@pytest.mark.process
def test_ctrl_c_on_a_terminal_leaves_no_spinner_after_the_cancel_line(server, paicli_env, project):
    """``paicli -p`` on a terminal shows a spinner on stderr while it waits; Ctrl-C stops it
    before the cancel line, so no frame of it is drawn after (where the shell's prompt goes)."""
    server.script = [Hang(60, Reply("too late"))]
    terminal = PtyTerminal([sys.executable, "-m", "paicli", "-p", "hello"], cwd=str(project),
                           env=paicli_env(server.base_url, TERM="xterm"))
    try:
        terminal.expect("思考中")
        deadline = time.monotonic() + run_timeout()
        while not server.requests:  # the turn waits for the model
            assert time.monotonic() < deadline
            time.sleep(0.05)
        terminal.proc.send_signal(signal.SIGINT)  # Ctrl-C, as the terminal sends it
        terminal.expect("⏹️ 已取消当前任务。")
        assert terminal.proc.wait(timeout=run_timeout()) == 130
        drained = time.monotonic() + 5
        while terminal._read(0.2) and time.monotonic() < drained:  # read to the end: the child closed it
            pass
        after = terminal.text.split("⏹️ 已取消当前任务。", 1)[1]
        assert "思考中" not in after, after
    finally:
        terminal.close()


# --- the terminal only shows text --------------------------------------------------------------

def test_escape_sequences_in_the_answer_are_shown_not_obeyed(server, run_paicli):
    server.script = [Reply(f"[red]{HOSTILE} :smile:")]
    done = run_paicli("-p", "hello")
    assert done.returncode == 0, done.stderr
    assert not RAW_CONTROL.search(done.stdout), repr(done.stdout)
    assert done.stdout == "[red]a␛]52;c;cm0gLXJmIH4=␇b␛[2Jc␛]0;owned␇d\\x9b31me\\u202ef :smile:\n"


def test_escape_sequences_in_tool_output_are_shown_not_obeyed(server, run_paicli):
    name = "x\x1b]0;owned\x07.txt"  # a file name the model read somewhere
    server.script = [Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": name}}]), Reply("done")]
    done = run_paicli("-p", "hello")
    assert done.returncode == 0, done.stderr
    assert not RAW_CONTROL.search(done.stderr), repr(done.stderr)
    assert "x␛]0;owned␇.txt" in done.stderr  # in the tool line and in the failure shown


# --- the audit log ---------------------------------------------------------------------------

def test_a_failed_write_is_audited_as_an_error_and_audit_lists_paths(server, run_paicli, project, paicli_home):
    (project / "blocker").write_text("a file, not a directory", encoding="utf-8")
    server.script = [
        Reply("", tool_calls=[{"name": "write_file", "arguments": {"path": "blocker/a.txt", "content": "x"}}]),
        Reply("", tool_calls=[{"name": "execute_command", "arguments": {"command": "echo hi"}}]),
        Reply("done"),
    ]
    assert run_paicli("-p", "write it", "--yes").returncode == 0
    audit_dir = paicli_home / "audit"
    (log,) = audit_dir.glob("audit-*.jsonl")
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(e["tool"], e["outcome"]) for e in entries] == [("write_file", "error"), ("execute_command", "allow")]
    assert entries[0]["reason"].startswith("写入文件失败")
    assert (audit_dir.stat().st_mode & 0o777, log.stat().st_mode & 0o777) == (0o700, 0o600)

    listed = run_paicli("-p", "/audit")
    assert listed.returncode == 0
    assert "        path: blocker/a.txt" in listed.stdout.splitlines()
    assert "        command: echo hi" in listed.stdout.splitlines()


def test_a_script_of_commands_on_stdin_exits_2_instead_of_running_one_odd_command(server, run_paicli, project,
                                                                                  paicli_home):
    # prompt_toolkit cannot poll a regular file: the REPL used to end at once, exit 0, every line
    # unread. Issue 41: stdin's text is one -p text, and these lines are no single task.
    script = project / "notes.txt"
    script.write_text("/save 数据库端口是 5432\n/exit\n", encoding="utf-8")
    with script.open(encoding="utf-8") as stdin:
        done = run_paicli(stdin=stdin)
    assert done.returncode == 2
    assert "paicli -p" in one_problem_line(done)
    assert not (paicli_home / "history").exists() and not (paicli_home / "memory").exists()  # nothing ran


@pytest.mark.parametrize("args, line", [
    (("--mode", "bad"), "paicli: 参数 --mode 的值 'bad' 无效（可选: 'react', 'plan', 'team'）（paicli --help 查看用法）"),
    (("--bogus",), "paicli: 无法识别的参数: --bogus（paicli --help 查看用法）"),
    (("-p",), "paicli: 参数 -p/--prompt 需要一个值（paicli --help 查看用法）"),
    (("eval",), "paicli eval: 缺少参数: suite（paicli eval --help 查看用法）"),
    (("studio", "--port", "x"), "paicli studio: 参数 --port 需要 int 类型的值，收到 'x'（paicli studio --help 查看用法）"),
    (("db", "bogus"), "paicli db: 参数 action 的值 'bogus' 无效（可选: 'import', 'export'）（paicli db --help 查看用法）"),
], ids=["choice", "unknown", "missing-value", "eval-suite", "studio-port", "db-action"])
def test_a_bad_command_line_is_told_in_chinese(args, line, server, run_paicli):
    # argparse's own words were English: "paicli: error: argument --mode: invalid choice: ...".
    done = run_paicli(*args)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == line
    assert "error:" not in done.stderr and "usage:" not in done.stderr
    assert done.stderr.startswith("用法:  paicli")


@pytest.mark.parametrize("args", [("--help",), ("eval", "--help"), ("db", "--help"), ("studio", "--help")],
                         ids=["paicli", "eval", "db", "studio"])
def test_help_has_chinese_headings(args, server, run_paicli):
    done = run_paicli(*args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("用法:  paicli") and "\n选项:\n" in done.stdout
    assert not any(word in done.stdout for word in ("usage:", "options:", "positional arguments:"))
