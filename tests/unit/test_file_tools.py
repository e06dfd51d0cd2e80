from pathlib import Path

import pytest

from paicli.tools.base import PolicyError, ToolContext
from paicli.tools.builtin.files import edit_file, list_dir, read_file, write_file
from paicli.tools.builtin.grep_engines import Query, find_rg, search_python, search_rg
from paicli.tools.builtin.search import glob_files, grep_code


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(root=tmp_path.resolve())


def make(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# read_file

def test_read_file_without_range_returns_whole_file(ctx):
    make(ctx.root, "a.txt", "one\ntwo\n")
    assert read_file({"path": "a.txt"}, ctx) == "文件内容:\none\ntwo\n"


def test_read_file_ranged_numbers_lines_and_points_to_next_offset(ctx):
    make(ctx.root, "src/a.py", "".join(f"line{n}\n" for n in range(1, 11)))
    result = read_file({"path": "src/a.py", "offset": "3", "limit": 2}, ctx)
    assert result == "文件内容: a.py (lines 3-4 of 10)\n    3 | line3\n    4 | line4\n...(已截断，可用 offset=5 继续读取)"


def test_read_file_ranged_to_end_has_no_continuation_and_defaults(ctx):
    make(ctx.root, "a.txt", "x\ny\nz")
    assert read_file({"path": "a.txt", "offset": 0}, ctx) == "文件内容: a.txt (lines 1-3 of 3)\n    1 | x\n    2 | y\n    3 | z\n"
    assert read_file({"path": "a.txt", "limit": "-5"}, ctx) == "文件内容: a.txt (lines 1-1 of 3)\n    1 | x\n...(已截断，可用 offset=2 继续读取)"


def test_read_file_offset_past_end_is_out_of_range(ctx):
    make(ctx.root, "a.txt", "x\ny\n")
    assert read_file({"path": "a.txt", "offset": 3}, ctx) == "文件内容: a.txt 共 2 行，offset 超出范围"


def test_read_file_refuses_non_regular_file(ctx):
    (ctx.root / "dir").mkdir()
    assert read_file({"path": "dir"}, ctx) == "读取文件失败: 不是普通文件"


def test_read_file_reports_missing_file(ctx):
    assert read_file({"path": "nope.txt"}, ctx).startswith("读取文件失败: ")


def test_read_file_goes_through_path_guard(ctx):
    with pytest.raises(PolicyError):
        read_file({"path": "../x"}, ctx)


# write_file

def test_write_file_creates_parent_directories(ctx):
    assert write_file({"path": "a/b/c.txt", "content": "héllo"}, ctx) == "文件已写入: a/b/c.txt"
    assert (ctx.root / "a/b/c.txt").read_text(encoding="utf-8") == "héllo"


def test_write_file_refuses_content_over_5mb(ctx):
    content = "é" * (5 * 1024 * 1024 // 2 + 1)  # 2 bytes each: the cap counts UTF-8 bytes, not chars
    with pytest.raises(PolicyError) as info:
        write_file({"path": "big.txt", "content": content}, ctx)
    assert info.value.reason == f"写入内容 {len(content.encode())} 字节超过 5MB 上限"
    assert not (ctx.root / "big.txt").exists()


# edit_file

def test_edit_file_replaces_unique_match(ctx):
    path = make(ctx.root, "a.py", "def f():\n    return 1\n")
    assert edit_file({"path": "a.py", "old_text": "return 1", "new_text": "return 2"}, ctx) == "文件已编辑: a.py"
    assert path.read_text() == "def f():\n    return 2\n"


def test_edit_file_multiple_matches_lists_their_lines(ctx):
    path = make(ctx.root, "a.py", "x = 1\ny = 2\nx = 1\n")
    result = edit_file({"path": "a.py", "old_text": "x = 1", "new_text": "x = 3"}, ctx)
    assert result == "old_text 匹配到 2 处（第 1, 3 行），请提供更长的上下文使其唯一，或设置 replace_all=true"
    assert path.read_text() == "x = 1\ny = 2\nx = 1\n"


def test_edit_file_missing_text_is_reported(ctx):
    make(ctx.root, "a.py", "x = 1\n")
    result = edit_file({"path": "a.py", "old_text": "y = 1", "new_text": "y = 2"}, ctx)
    assert result.startswith("old_text 未在文件中找到: a.py")


def test_edit_file_unchanged_content_is_reported(ctx):
    make(ctx.root, "a.py", "x = 1\n")
    result = edit_file({"path": "a.py", "old_text": "x", "new_text": "x"}, ctx)
    assert result == "替换前后内容相同，文件未修改: a.py"


def test_edit_file_replace_all_counts_replacements(ctx):
    path = make(ctx.root, "a.py", "x x x\n")
    result = edit_file({"path": "a.py", "old_text": "x", "new_text": "", "replace_all": "true"}, ctx)
    assert result == "文件已编辑: a.py（替换 3 处）"
    assert path.read_text() == "  \n"


def test_edit_file_validates_arguments_and_target(ctx):
    assert edit_file({"path": "a.py", "old_text": "", "new_text": "y"}, ctx) == "old_text 必须非空，new_text 必须提供"
    assert edit_file({"path": "a.py", "old_text": "x"}, ctx) == "old_text 必须非空，new_text 必须提供"
    assert edit_file({"path": "a.py", "old_text": "x", "new_text": "y"}, ctx) == "目标不是已有的普通文件: a.py"


def test_edit_file_keeps_crlf_line_endings(ctx):
    path = ctx.root / "w.txt"
    path.write_bytes(b"a\r\nb\r\n")
    edit_file({"path": "w.txt", "old_text": "b", "new_text": "c"}, ctx)
    assert path.read_bytes() == b"a\r\nc\r\n"


# list_dir

def test_list_dir_marks_directories_and_files(ctx):
    make(ctx.root, "f.txt", "")
    (ctx.root / "sub").mkdir()
    result = list_dir({"path": "."}, ctx)
    assert result.startswith("目录内容:\n")
    assert sorted(result.splitlines()[1:]) == ["[D] sub", "[F] f.txt"]


def test_list_dir_empty_or_missing(ctx):
    (ctx.root / "empty").mkdir()
    assert list_dir({"path": "empty"}, ctx) == "目录为空或不存在"
    assert list_dir({"path": "missing"}, ctx) == "目录为空或不存在"


# glob_files

def test_glob_files_matches_bare_pattern_at_any_depth_and_skips_excluded_dirs(ctx):
    for rel in ["a.py", "src/b.py", "src/deep/c.py", "node_modules/x.py", ".git/y.py", "build/z.py", "d.txt"]:
        make(ctx.root, rel, "")
    assert glob_files({"pattern": "*.py"}, ctx) == "匹配文件 3 个:\n1. a.py\n2. src/b.py\n3. src/deep/c.py"


def test_glob_files_with_slash_pattern_and_path(ctx):
    for rel in ["src/b.py", "src/deep/c.py", "src/deep/d.ts", "other/e.py"]:
        make(ctx.root, rel, "")
    assert glob_files({"pattern": "deep/*.{py,ts}", "path": "src"}, ctx) == "匹配文件 2 个:\n1. src/deep/c.py\n2. src/deep/d.ts"
    assert glob_files({"pattern": "src/**/*.py"}, ctx) == "匹配文件 2 个:\n1. src/b.py\n2. src/deep/c.py"


def test_glob_files_reports_cap_and_empty(ctx):
    for n in range(3):
        make(ctx.root, f"f{n}.md", "")
    assert glob_files({"pattern": "*.md", "max_results": "2"}, ctx) == "匹配文件 2 个（已达到上限 2）:\n1. f0.md\n2. f1.md"
    assert glob_files({"pattern": "*.rs"}, ctx) == "未找到匹配文件: *.rs"


# grep_code

def test_grep_code_literal_search_treats_pattern_literally(ctx):
    make(ctx.root, "a.py", "x = foo(1)\ny = foo.bar\n")
    result = grep_code({"pattern": "foo(1)"}, ctx)
    lines = result.splitlines()
    assert lines[0].startswith("匹配结果 1 条 (engine=")
    assert lines[1:3] == ["1. a.py:1", "   >    1 | x = foo(1)"]


def test_grep_code_regex_and_case_insensitive(ctx):
    make(ctx.root, "a.py", "Alpha = 1\nbeta = 2\nALPHA_2 = 3\n")
    result = grep_code({"pattern": "^alpha", "regex": True, "case_sensitive": "false"}, ctx)
    assert "1. a.py:1" in result and "2. a.py:3" in result and "a.py:2" not in result


def test_grep_code_shows_context_lines_with_hit_marker(ctx):
    make(ctx.root, "a.py", "l1\nl2\nTARGET\nl4\nl5\n")
    result = grep_code({"pattern": "TARGET", "context_lines": 1}, ctx)
    assert "1. a.py:3\n        2 | l2\n   >    3 | TARGET\n        4 | l4\n" in result


def test_grep_code_suggests_reads_for_up_to_three_files(ctx):
    for name in ["a", "b", "c", "d"]:
        make(ctx.root, f"src/{name}.py", "\n" * 29 + "needle\nneedle\n")
    result = grep_code({"pattern": "needle", "glob": "*.py"}, ctx)
    assert result.endswith(
        "\nsuggested_reads:\n"
        '- read_file {"path":"src/a.py","offset":10,"limit":80}\n'
        '- read_file {"path":"src/b.py","offset":10,"limit":80}\n'
        '- read_file {"path":"src/c.py","offset":10,"limit":80}'
    )


def test_grep_code_reports_max_results_partial(ctx):
    make(ctx.root, "a.txt", "hit\n" * 5)
    result = grep_code({"pattern": "hit", "max_results": 2}, ctx)
    assert "（partial: 已达到 max_results=2）:" in result.splitlines()[0]
    assert "\npartial: true（已达到 max_results=2，请缩小 path/glob/pattern 继续搜索）" in result


def test_grep_code_stops_at_max_chars(ctx):
    make(ctx.root, "a.txt", ("x" * 300 + " hit\n") * 20)
    result = grep_code({"pattern": "hit", "max_chars": 1000}, ctx)
    assert "\npartial: true（已达到 max_chars=1000，请缩小 path/glob/pattern 或提高 offset 后 read_file）" in result
    assert result.index("partial: true") < 1000 + 10


def test_grep_code_respects_glob_head_limit_and_excluded_dirs(ctx):
    make(ctx.root, "a.py", "k\n" * 5)
    make(ctx.root, "a.md", "k\n")
    make(ctx.root, "node_modules/m.py", "k\n")
    result = grep_code({"pattern": "k", "glob": "*.py", "head_limit": 2}, ctx)
    assert result.splitlines()[0].startswith("匹配结果 2 条")
    assert "a.md" not in result and "node_modules" not in result


def test_grep_code_no_match(ctx):
    make(ctx.root, "a.txt", "hello\n")
    assert grep_code({"pattern": "absent"}, ctx) == "未找到匹配内容: absent"


def test_grep_code_skips_symlink_to_outside(ctx, tmp_path_factory):
    secret = tmp_path_factory.mktemp("outside") / "secret.txt"
    secret.write_text("password=hunter2\n")
    (ctx.root / "leak.txt").symlink_to(secret)
    assert grep_code({"pattern": "hunter2"}, ctx) == "未找到匹配内容: hunter2"


def test_grep_code_invalid_regex_raises_clear_error(ctx):
    make(ctx.root, "a.txt", "x\n")
    with pytest.raises(ValueError):
        grep_code({"pattern": "foo(", "regex": True}, ctx)


def test_grep_engines_find_the_same_hits(ctx):
    make(ctx.root, "a.py", "hit\nmiss\nHIT\n")
    make(ctx.root, ".github/ci.yml", "hit\n")
    make(ctx.root, "sub/b.py", "hit\n")
    make(ctx.root, "z.py", "hit\n")
    make(ctx.root, "dist/c.py", "hit\n")
    query = Query("hit", regex=False, case_sensitive=False, glob=None, head_limit=20, max_results=50)
    by_rg = search_rg(find_rg(), ctx.root, query)
    by_python = search_python(ctx.root, query)
    assert (by_rg.engine, by_python.engine) == ("ripgrep", "python")
    assert by_rg.found == by_python.found
    assert len(by_python.found) == 5


def test_edit_file_on_undecodable_text_says_so_in_one_line_and_leaves_it(ctx):
    """paicli issue 23, item 7: not a raw codec error, and no replacement characters written back.
    A UTF-8 file with one stray byte (issue 41: a Latin-1 file is Latin-1 text, and is edited)."""
    target = ctx.root / "stray.txt"
    data = "name = '咖啡".encode() + b"\xe9'\n" + "# 说明：这是一个配置文件\n".encode() + b"value = 1\n"
    target.write_bytes(data)
    result = edit_file({"path": "stray.txt", "old_text": "value = 1", "new_text": "value = 2"}, ctx)
    assert not result.ok and "\n" not in result
    assert result == ("编辑文件失败: stray.txt 不是有效的 UTF-8 文本（第 1 行、第 15 字节起的 e9 无法按 UTF-8 解码: "
                      "invalid continuation byte），文件未修改")
    assert target.read_bytes() == data


def test_write_and_edit_refuse_text_utf8_cannot_store_without_touching_the_file(ctx):
    target = make(ctx.root, "a.txt", "old\n")
    result = write_file({"path": "a.txt", "content": "x\ud800y"}, ctx)
    assert not result.ok and result == ("写入文件失败: 参数 content 第 2 个字符 U+D800 无法编码为 UTF-8（孤立的代理字符），"
                                        "文件未写入: a.txt")
    result = edit_file({"path": "a.txt", "old_text": "old", "new_text": "\udfff"}, ctx)
    assert not result.ok and "参数 new_text 第 1 个字符 U+DFFF 无法编码为 UTF-8" in result and "\n" not in result
    assert target.read_text(encoding="utf-8") == "old\n"
