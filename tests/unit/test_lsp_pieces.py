"""Language servers' pure pieces (issue 38): the report, languages and roots, how a server is
found, the settings, the confined argv, the ledger's source for the diagnostics message."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from langchain_core.messages import HumanMessage

from paicli.memory.context.rounds import LSP_DIAGNOSTICS, internal
from paicli.memory.ledger.format import message_event, message_to_record
from paicli.config.settings import ConfigError, load_settings
from paicli.tools.lsp.languages import BY_KEY, language_id, language_of, root_of
from paicli.tools.lsp.options import LspOptions
from paicli.tools.lsp.report import MORE, Problem, compare, model_text, person_line, problems, utf16_column, utf16_units
from paicli.tools.lsp.resolve import Missing, find_server
from paicli.tools.lsp.manager import server_session
from paicli.tools.lsp.sandboxed import confined
from paicli.tools.sandbox.command import OUTSIDE, SANDBOXED, CommandSandbox, Mechanism, SandboxOptions, Unavailable


def diagnostic(line: int, character: int, message: str, severity: int | None = 1, source: str = "s", code=None):
    start = SimpleNamespace(line=line, character=character)
    return SimpleNamespace(range=SimpleNamespace(start=start), message=message, severity=severity, source=source, code=code)


# -- the report ---------------------------------------------------------------------------------
def test_columns_count_characters_not_utf16_units():
    line = "s = '😀' + 中文 + x"
    assert utf16_column(line, line.encode("utf-16-le").__len__() // 2 - 1) == len(line)
    assert utf16_units(line, utf16_column(line, 9)) == 9
    assert utf16_column("", 5) == 1


def test_only_errors_and_warnings_are_problems_with_one_line_messages():
    found = problems([diagnostic(0, 0, "bad\n  more", code=12), diagnostic(1, 2, "hint", severity=4),
                      diagnostic(1, 1, "no severity", severity=None)], "abc\ndef\n")
    assert [(p.line, p.column, p.message, p.code) for p in found] == [(1, 1, "bad more", "12"), (2, 2, "no severity", "")]


def test_new_means_not_told_before_counting_duplicates_and_ignoring_lines():
    told = [Problem(1, 3, 1, "undefined x", "s"), Problem(2, 9, 1, "unused", "s")]
    now = [Problem(1, 7, 1, "undefined x", "s"), Problem(1, 8, 1, "undefined x", "s")]
    report = compare("a.py", "srv", now, [p.key for p in told])
    assert [p.line for p in report.new] == [8] and report.fixed == 1 and len(report.current) == 2


def test_the_model_text_lists_a_bounded_number_and_counts_the_rest():
    reports = [compare(f"f{n}.py", "srv", [Problem(1, i + 1, 1, f"e{i}") for i in range(4)], []) for n in range(2)]
    text = model_text(reports, 5)
    assert text.count("\n- 错误") == 5 and MORE.format(n=3) in text
    assert model_text([compare("a.py", "srv", [], [])], 5) is None


def test_the_person_line_is_one_line_per_file_and_none_when_nothing_changed():
    report = compare("a.py", "srv", [Problem(1, 2, 3, "oops"), Problem(2, 1, 1, "meh")], ["1|||gone"])
    assert person_line(report) == "🩺 a.py: 新增 1 个错误、1 个警告，已消除 1 个（srv） · 2:3 oops"
    assert person_line(compare("a.py", "srv", [], [])) is None


# -- languages, roots, servers ------------------------------------------------------------------
def test_languages_by_extension_and_their_document_ids():
    assert language_of("x/y.TSX").key == "typescript" and language_id("y.tsx") == "typescriptreact"
    assert language_of("main.rs").key == "rust" and language_of("notes.txt") is None


def test_a_root_is_the_nearest_marker_and_never_above_the_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")  # above the project: never a root
    project = tmp_path / "p"
    (project / "sub" / "pkg").mkdir(parents=True)
    (project / "sub" / "pyproject.toml").write_text("")
    python = BY_KEY["python"]
    assert root_of(str(project / "sub" / "pkg" / "m.py"), str(project), python) == str(project / "sub")
    assert root_of(str(project / "top.py"), str(project), python) == str(project)


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_pyright_wheels_downloading_script_is_passed_over_for_the_next(tmp_path):
    executable(tmp_path / "pyright-langserver", "#!/usr/bin/python3\nimport pyright\n")
    executable(tmp_path / "pylsp", "#!/bin/sh\n")
    spec = BY_KEY["python"]
    spec = type(spec)(spec.key, spec.name, spec.ids, spec.markers, spec.candidates[1:])  # without basedpyright
    found = find_server(spec, LspOptions(), path=str(tmp_path))
    assert found.name == "pylsp" and found.argv == (str(tmp_path / "pylsp"),)
    assert "pylsp" in found.settings


def test_a_users_command_wins_and_off_turns_the_language_off(tmp_path):
    executable(tmp_path / "my-gopls", "#!/bin/sh\n")
    go = BY_KEY["go"]
    assert find_server(go, LspOptions(commands={"go": ("my-gopls", "serve")}), path=str(tmp_path)).argv == (
        str(tmp_path / "my-gopls"), "serve")
    assert find_server(go, LspOptions(commands={"go": ()})) == Missing("PAICLI_LSP_GO=off")
    assert isinstance(find_server(go, LspOptions(), path=str(tmp_path / "none")), Missing)


# -- settings -----------------------------------------------------------------------------------
def env(tmp_path, **values):
    return {"PAICLI_HOME": str(tmp_path / "home"), **values}


def test_lsp_settings_from_the_environment_and_config_json(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"lsp_wait_seconds": 1.5, "lsp_go": "gopls serve"}))
    s = load_settings(tmp_path, env(tmp_path, PAICLI_LSP_PYTHON="off", PAICLI_LSP_IDLE_SECONDS="30"))
    assert s.lsp == LspOptions(mode="auto", commands={"python": (), "go": ("gopls", "serve")}, wait=1.5, idle=30.0)
    assert not load_settings(tmp_path, env(tmp_path, PAICLI_LSP="OFF")).lsp.on


def test_a_projects_env_file_cannot_choose_a_server(tmp_path):
    (tmp_path / ".env").write_text("PAICLI_LSP_PYTHON=./evil --stdio\nPAICLI_LSP=auto\n")
    assert load_settings(tmp_path, env(tmp_path)).lsp.commands == {}


@pytest.mark.parametrize("name, value, words", [
    ("PAICLI_LSP", "sometimes", "PAICLI_LSP 只能是 auto、off 之一"),
    ("PAICLI_LSP_WAIT_SECONDS", "soon", "PAICLI_LSP_WAIT_SECONDS 必须是秒数"),
    ("PAICLI_LSP_WAIT_SECONDS", "0", "必须在 0 到 60 秒之间"),
    ("PAICLI_LSP_RUST", "'unclosed", "PAICLI_LSP_RUST 不是可执行的命令"),
])
def test_bad_lsp_settings_are_one_line_naming_the_setting(tmp_path, name, value, words):
    with pytest.raises(ConfigError, match=words):
        load_settings(tmp_path, env(tmp_path, **{name: value}))


# -- the confined launch ------------------------------------------------------------------------
def test_with_the_sandbox_off_a_server_runs_as_it_is_and_required_refuses(tmp_path):
    argv = ["/usr/bin/clangd"]
    env = {"PATH": "/usr/bin", "GITHUB_TOKEN": "t", "PAICLI_API_KEY": "k", "TMUX": "/tmp/tmux-0/default"}
    data = str(tmp_path / "sandbox")
    off, why = confined(argv, tmp_path, env, CommandSandbox(SandboxOptions(mode="off", data=data)), session="s")
    assert (off.argv, off.how, why) == (argv, OUTSIDE, "PAICLI_COMMAND_SANDBOX=off")
    assert off.env == {"PATH": "/usr/bin"}  # a command's environment, outside too
    none = CommandSandbox(SandboxOptions(mode="required", data=data), finder=lambda: Unavailable("没有 bwrap"))
    with pytest.raises(RuntimeError, match="PAICLI_COMMAND_SANDBOX=required"):
        confined(argv, tmp_path, env, none, session="s")
    skipped = CommandSandbox(SandboxOptions(mode="required", skipped=True, data=data))
    assert confined(argv, tmp_path, env, skipped, session="s")[1] == "--dangerously-skip-sandbox"
    assert not (tmp_path / "sandbox").exists()  # nothing confined, nothing made


def test_a_confined_server_sees_the_project_read_only_no_network_and_no_secrets(tmp_path):
    # PAICLI_SANDBOX_WRITABLE holds the project, a folder of it, and HOME (under /tmp, the rest of
    # tmp_path is out of sight already: the sandbox's /tmp is its own)
    outer = tmp_path / "work"
    home, project = outer / "h", outer / "p"
    paicli_home = home / ".paicli"
    for d in (home / ".ssh", home / ".cache", project / "build", paicli_home):
        d.mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    options = SandboxOptions(writable=(str(outer), str(project / "build")), hidden=(str(paicli_home),),
                             data=str(paicli_home / "sandbox"))
    sandbox = CommandSandbox(options, finder=lambda: Mechanism("bwrap", "/usr/bin/bwrap"))
    launch, why = confined(["/opt/srv", "--stdio"], project, {"HOME": str(home), "GH_TOKEN": "t"}, sandbox,
                           session=server_session(str(project)))
    try:
        args = launch.argv
        assert (launch.how, why, launch.seen) == (SANDBOXED, "", None)  # nothing to sweep afterwards
        assert args[-2:] == ["/opt/srv", "--stdio"] and "--unshare-net" in args
        assert "GH_TOKEN" not in launch.env and launch.env["TMPDIR"] == "/tmp"
        pairs = list(zip(args, args[1:], args[2:]))
        last_bind = max(i for i, (a, b, c) in enumerate(pairs) if a == "--bind")
        assert pairs.index(("--ro-bind", str(project), str(project))) > last_bind  # over any writable parent
        assert ("--bind", str(project), str(project)) not in pairs
        assert ("--bind", str(project / "build"), str(project / "build")) not in pairs
        assert ("--bind", str(outer), str(outer)) in pairs
        assert ("--overlay-src", str(home / ".cache")) in zip(args, args[1:])  # caches stay usable, copy-on-write
        assert ("--tmpfs", str(home / ".ssh")) in zip(args, args[1:]) and ("--tmpfs", str(paicli_home)) in zip(args, args[1:])
        assert ("--ro-bind", "/dev/null", str(home / ".netrc")) in pairs
        private = paicli_home / "sandbox" / "tmp" / server_session(str(project)) / "tmp"
        assert ("--bind", str(private), "/tmp") in pairs and private.is_dir()
        assert not (project / ".paicli").exists()  # a read-only project needs no .paicli made for it
    finally:
        launch.close()


# -- the ledger ----------------------------------------------------------------------------------
def test_the_diagnostics_message_is_a_user_event_with_the_reference_source():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    record, lc = message_to_record(internal("[LSP 诊断] …", LSP_DIAGNOSTICS, id="m1"), JsonPlusSerializer())
    assert message_event(record, lc) == ("user", "lsp_diagnostics")
    plain, plain_lc = message_to_record(HumanMessage("[LSP 诊断] typed by a person", id="m2"), JsonPlusSerializer())
    assert message_event(plain, plain_lc) == ("user", "user_input")  # the flag decides, not the text
