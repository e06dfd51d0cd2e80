import logging
import os

import pytest

from paicli.prompts.pai_md import (
    HEADER,
    MAX_TOTAL_CHARS,
    TRUNCATED_MARKER,
    load_project_context,
    memory_sources,
    parse_import,
    read_project_context,
)


@pytest.fixture
def dirs(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    home.mkdir()
    return home, project


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load(dirs):
    home, project = dirs
    return load_project_context(project, home)


def test_five_sources_come_in_reference_order(dirs):
    home, project = dirs
    files = [
        write(project / ".paicli" / "PAI.local.md", "five"),
        write(project / "PAI.local.md", "four"),
        write(project / ".paicli" / "PAI.md", "three"),
        write(project / "PAI.md", "two"),
        write(home / "PAI.md", "one"),
    ][::-1]
    body = "\n\n".join(f"### {f}\n\n{text}" for f, text in zip(files, ["one", "two", "three", "four", "five"]))
    assert load(dirs) == HEADER + body


def test_content_is_trimmed_and_blank_files_are_skipped(dirs):
    home, project = dirs
    write(home / "PAI.md", "  \n\t\n")
    write(project / "PAI.md", "\n\n  - 默认中文输出  \n\n")
    assert load(dirs) == f"## PAI.md 项目记忆\n\n### {project / 'PAI.md'}\n\n- 默认中文输出"


def test_no_content_anywhere_gives_empty_string(dirs):
    home, project = dirs
    assert load(dirs) == ""
    write(project / "PAI.local.md", "   ")
    assert load(dirs) == ""


def test_heading_path_is_absolute_and_normalized(dirs, tmp_path, monkeypatch):
    home, project = dirs
    write(project / "PAI.md", "rules")
    monkeypatch.chdir(tmp_path)
    out = load_project_context(project.relative_to(tmp_path) / "sub" / "..", home.relative_to(tmp_path))
    assert f"### {tmp_path}/project/PAI.md\n\nrules" in out


def test_relative_import_is_inlined_in_place(dirs):
    home, project = dirs
    write(project / "docs" / "style.md", "\n  use tabs  \n\n")
    write(project / "PAI.md", "before\n  @docs/style.md  \nafter")
    assert load(dirs).endswith("\n\nbefore\nuse tabs\nafter")


def test_nested_import_resolves_against_the_importing_files_directory(dirs):
    home, project = dirs
    write(project / "docs" / "inner" / "b.md", "B")
    write(project / "docs" / "a.md", "A\n@inner/b.md")
    write(project / "PAI.md", "@docs/a.md\nend")
    assert load(dirs).endswith("\n\nA\nB\nend")


def test_imports_stop_after_depth_three(dirs, caplog):
    home, project = dirs
    for n in range(1, 5):
        write(project / f"d{n}.md", f"level{n}\n@d{n + 1}.md" if n < 4 else "level4")
    write(project / "PAI.md", "level0\n@d1.md")
    with caplog.at_level(logging.WARNING):
        out = load(dirs)
    assert out.endswith("level0\nlevel1\nlevel2\nlevel3")
    assert "level4" not in out
    assert "beyond depth 3" in caplog.text


def test_cyclic_import_is_skipped_but_siblings_may_share_a_file(dirs, caplog):
    home, project = dirs
    write(project / "a.md", "A\n@b.md")
    write(project / "b.md", "B\n@a.md\n@PAI.md")
    write(project / "shared.md", "S")
    write(project / "PAI.md", "top\n@a.md\n@shared.md\n@shared.md")
    with caplog.at_level(logging.WARNING):
        out = load(dirs)
    assert out.endswith("\n\ntop\nA\nB\nS\nS")
    assert caplog.text.count("Skipping cyclic PAI.md import") == 2


def test_symlink_escaping_the_import_root_is_refused_and_named(dirs, tmp_path):
    home, project = dirs
    write(tmp_path / "outside" / "secret.md", "SECRET")
    (project / "link.md").symlink_to(tmp_path / "outside" / "secret.md")
    (project / "linkdir").symlink_to(tmp_path / "outside")
    write(project / "PAI.md", "top\n@link.md\n@linkdir/secret.md")
    memory = read_project_context(project, home)
    assert "SECRET" not in memory.text
    assert memory.text.endswith("\n\ntop")
    assert [line.split("：")[0] for line in memory.skipped] == [f"⚠️ 已跳过 {project / 'link.md'}",
                                                               f"⚠️ 已跳过 {project / 'linkdir' / 'secret.md'}"]


def test_a_top_level_source_linking_out_of_the_project_is_skipped_with_one_line(dirs, tmp_path):
    home, project = dirs
    secret = write(tmp_path / "secret", "-----BEGIN OPENSSH PRIVATE KEY-----")
    (project / "PAI.md").symlink_to(secret)
    (project / ".paicli" / "PAI.local.md").symlink_to("../../secret")
    write(project / "PAI.local.md", "LOCAL")
    memory = read_project_context(project, home)
    assert "PRIVATE KEY" not in memory.text and memory.text.endswith("LOCAL")
    assert memory.skipped == [
        f"⚠️ 已跳过 {project / 'PAI.md'}：它链接到 {secret}，在 {project} 之外，内容不会发给模型",
        f"⚠️ 已跳过 {project / '.paicli' / 'PAI.local.md'}：它链接到 {secret}，在 {project} 之外，内容不会发给模型"]


def test_the_users_file_must_stay_in_paicli_home_but_a_linked_home_directory_works(tmp_path):
    project, dotfiles = tmp_path / "project", tmp_path / "dotfiles"
    project.mkdir()
    write(dotfiles / "PAI.md", "MINE")
    linked_file = tmp_path / "home1"
    linked_file.mkdir()
    (linked_file / "PAI.md").symlink_to(dotfiles / "PAI.md")
    memory = read_project_context(project, linked_file)
    assert memory.text == "" and len(memory.skipped) == 1
    (tmp_path / "home2").symlink_to(dotfiles)  # PAICLI_HOME itself is the link
    assert read_project_context(project, tmp_path / "home2").text.endswith("MINE")


def test_a_project_under_a_linked_path_still_reads_its_own_files(tmp_path):
    real = tmp_path / "real"
    write(real / "PAI.md", "OWN")
    (tmp_path / "alias").symlink_to(real)
    memory = read_project_context(tmp_path / "alias", None)
    assert memory.text.endswith("OWN") and memory.skipped == []


def test_symlink_inside_the_root_is_followed(dirs):
    home, project = dirs
    write(project / "docs" / "real.md", "REAL")
    (project / "alias.md").symlink_to(project / "docs" / "real.md")
    write(project / "PAI.md", "@alias.md")
    assert load(dirs).endswith("\n\nREAL")


def test_home_file_imports_only_from_home(dirs):
    home, project = dirs
    write(home / "prefs.md", "PREFS")
    write(project / "proj.md", "PROJ")
    (home / "proj.md").symlink_to(project / "proj.md")
    write(home / "PAI.md", "@prefs.md\n@proj.md")
    assert load(dirs) == f"{HEADER}### {home / 'PAI.md'}\n\nPREFS"


def test_absolute_and_dotdot_paths_stay_literal(dirs, tmp_path):
    home, project = dirs
    write(tmp_path / "x.md", "X")
    write(project / "PAI.md", f"@{tmp_path / 'x.md'}\n@../x.md\n@sub/../x.md")
    assert load(dirs).endswith(f"\n\n@{tmp_path / 'x.md'}\n@../x.md\n@sub/../x.md")


def test_what_counts_as_an_import_line():
    assert parse_import("  @notes.md \t") == "notes.md"
    assert parse_import("@a b.md") is None
    assert parse_import("@") is None
    assert parse_import("email me @home") is None
    assert parse_import("@/etc/passwd") is None
    assert parse_import("@a/../b.md") is None


def test_line_with_a_space_is_not_an_import(dirs):
    home, project = dirs
    write(project / "a.md", "A")
    write(project / "PAI.md", "@a.md please\n@a.md")
    assert load(dirs).endswith("\n\n@a.md please\nA")


def test_missing_or_non_regular_import_is_skipped_with_a_warning(dirs, caplog):
    home, project = dirs
    (project / "folder.md").mkdir()
    write(project / "PAI.md", "top\n@missing.md\n@folder.md\nend")
    with caplog.at_level(logging.WARNING):
        out = load(dirs)
    assert out.endswith("\n\ntop\nend")
    assert "missing.md" in caplog.text and "folder.md" in caplog.text


def test_crlf_files_and_a_bom_still_find_imports(dirs):
    home, project = dirs
    write(project / "a.md", "A")
    (project / "PAI.md").write_bytes("\ufeff@a.md\r\nnext\rlast\r\n".encode())
    assert load(dirs).endswith("\n\nA\nnext\nlast")


def body_of_length(path, n, filler="x"):
    return filler * (n - len(f"### {path}\n\n"))


@pytest.mark.parametrize("length", [MAX_TOTAL_CHARS - 1, MAX_TOTAL_CHARS])
def test_budget_truncates_once_the_body_reaches_24000(dirs, length):
    home, project = dirs
    path = project / "PAI.md"
    write(path, body_of_length(path, length))
    body = f"### {path}\n\n" + body_of_length(path, length)
    out = load(dirs)
    if length < MAX_TOTAL_CHARS:
        assert out == HEADER + body
    else:
        assert out == f"{HEADER}{body[:23_920]}\n\n[PAI.md 内容已按 24000 字符预算截断]"
        assert TRUNCATED_MARKER == "[PAI.md 内容已按 24000 字符预算截断]"


def test_budget_counts_earlier_files_and_strips_whitespace_at_the_cut(dirs):
    home, project = dirs
    write(home / "PAI.md", "h" * 20_000)
    first = f"### {home / 'PAI.md'}\n\n" + "h" * 20_000 + "\n\n"
    path = project / "PAI.md"
    pad = 23_920 - len(first) - len(f"### {path}\n\n") - 10
    write(path, "p" * pad + " " * 50 + "q" * 5_000)
    write(project / "PAI.local.md", "never shown")
    kept = first + f"### {path}\n\n" + "p" * pad
    assert load(dirs) == f"{HEADER}{kept}\n\n{TRUNCATED_MARKER}"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can read mode 000 files")
def test_unreadable_file_is_logged_and_contributes_nothing(dirs, caplog):
    home, project = dirs
    path = write(project / "PAI.md", "secret")
    path.chmod(0)
    try:
        with caplog.at_level(logging.WARNING):
            assert load(dirs) == ""
    finally:
        path.chmod(0o644)
    assert "Failed to read" in caplog.text


def test_non_utf8_bytes_are_replaced_not_fatal(dirs):
    home, project = dirs
    (project / "PAI.md").write_bytes(b"caf\xe9 \xff\xfe ok")
    assert load(dirs).endswith("\n\ncaf\ufffd \ufffd\ufffd ok")


def test_without_a_home_only_the_project_files_are_read(tmp_path):
    """PAICLI_HOME is resolved only by paicli.config.settings: no fallback to ~/.paicli here."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "PAI.md").write_text("project rules", encoding="utf-8")
    assert [path for path, _ in memory_sources(project, None)][0] == project / "PAI.md"
    assert "project rules" in load_project_context(project, None)


def test_a_skipped_import_is_logged_without_its_control_characters(dirs, caplog):
    home, project = dirs
    write(project / "PAI.md", "top\n@\x1b]0;owned\x07.md")
    with caplog.at_level(logging.WARNING):
        assert load(dirs).endswith("\n\ntop")
    assert "\x1b" not in caplog.text and "\\x1b]0;owned\\x07.md" in caplog.text
