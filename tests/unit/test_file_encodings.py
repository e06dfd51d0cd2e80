"""Issue 41, item 1: text in any encoding is text. read_file names the encoding, edit_file and
write_file keep it (and CRLF breaks, and a BOM) or refuse in one line, binary is about content,
and grep_code (both engines) finds and shows what read_file reads."""

from __future__ import annotations

import pytest

from paicli.tools.base import ToolContext
from paicli.tools.builtin.files import edit_file, read_file, write_file
from paicli.tools.builtin.grep_engines import find_rg
from paicli.tools.builtin.search import grep_code
from paicli.tools.file_text import sniff

GBK_SOURCE = "# -*- coding: gbk -*-\n# 读取数据库配置\ndef 读取配置():\n    return '你好，世界'\n"
LATIN1_SOURCE = "# café résumé naïve\nprint('déjà vu')\n"
BIG5_SOURCE = "# 這是一個設定檔案，用於讀取資料庫\nx = '你好'\n"
SJIS_SOURCE = "# これは設定ファイルです。データベースを読み込みます\nx = 'こんにちは'\n"


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(root=tmp_path.resolve())


@pytest.mark.parametrize("text, codec, label", [
    pytest.param(GBK_SOURCE, "gbk", "GBK", id="gbk"),
    pytest.param(LATIN1_SOURCE, "latin-1", "Windows-1252", id="latin1"),
    pytest.param(BIG5_SOURCE, "big5", "Big5", id="big5"),
    pytest.param(SJIS_SOURCE, "shift_jis", "Shift-JIS", id="shift-jis"),
    pytest.param("hello 世界\nline two\n", "utf-16", "UTF-16LE BOM", id="utf16-bom"),
])
def test_text_in_another_encoding_is_read_as_text_with_the_encoding_named(ctx, text, codec, label):
    (ctx.root / "src.py").write_bytes(text.encode(codec))
    assert read_file({"path": "src.py"}, ctx) == f"文件内容（编码: {label}）:\n{text}"
    ranged = read_file({"path": "src.py", "offset": 2, "limit": 1}, ctx)
    assert ranged.startswith(f"文件内容: src.py (lines 2-2 of {len(text.splitlines())}, 编码 {label})\n")
    assert f"    2 | {text.splitlines()[1]}\n" in ranged


def test_plain_utf8_names_no_encoding(ctx):
    (ctx.root / "a.py").write_text("x = '中文'\n", encoding="utf-8")
    assert read_file({"path": "a.py"}, ctx) == "文件内容:\nx = '中文'\n"


def test_a_gbk_file_is_edited_and_stays_gbk(ctx):
    target = ctx.root / "gbk_src.py"
    target.write_bytes(GBK_SOURCE.encode("gbk"))
    result = edit_file({"path": "gbk_src.py", "old_text": "你好，世界", "new_text": "再见，世界"}, ctx)
    assert result == "文件已编辑: gbk_src.py（保留 GBK 编码）"
    assert target.read_bytes() == GBK_SOURCE.replace("你好", "再见").encode("gbk")


def test_a_latin1_file_is_edited_and_written_and_stays_latin1(ctx):
    target = ctx.root / "latin.py"
    target.write_bytes(LATIN1_SOURCE.encode("latin-1"))
    assert edit_file({"path": "latin.py", "old_text": "déjà vu", "new_text": "à bientôt"}, ctx).startswith("文件已编辑")
    assert target.read_bytes() == LATIN1_SOURCE.replace("déjà vu", "à bientôt").encode("latin-1")
    assert write_file({"path": "latin.py", "content": "s = 'crème brûlée'\n"}, ctx) == \
        "文件已写入: latin.py（保留 Windows-1252 编码）"
    assert target.read_bytes() == "s = 'crème brûlée'\n".encode("latin-1")


def test_a_character_the_encoding_cannot_hold_is_refused_in_one_line(ctx):
    target = ctx.root / "gbk_src.py"
    data = GBK_SOURCE.encode("gbk")
    target.write_bytes(data)
    result = edit_file({"path": "gbk_src.py", "old_text": "你好", "new_text": "你好 🙂"}, ctx)
    assert not result.ok and "\n" not in result
    assert result == ("编辑文件失败: 第 4 行的字符 “🙂”（U+1F642） 无法用 GBK 编码保存（文件原为 GBK 编码，写入时保留），"
                      "文件未修改: gbk_src.py")
    result = write_file({"path": "gbk_src.py", "content": "x = '🙂'\n"}, ctx)
    assert not result.ok and result.startswith("写入文件失败: 第 1 行的字符 “🙂”（U+1F642） 无法用 GBK 编码保存")
    assert target.read_bytes() == data


def test_crlf_breaks_and_a_bom_are_kept(ctx):
    target = ctx.root / "win.txt"
    target.write_bytes("\ufefffirst\r\nsecond\r\nthird\r\n".encode("utf-8"))
    # the model's old_text spans two lines with \n, as it reads them
    assert edit_file({"path": "win.txt", "old_text": "first\nsecond", "new_text": "one\ntwo"}, ctx) == \
        "文件已编辑: win.txt（保留 UTF-8 BOM 编码、CRLF 换行）"
    assert target.read_bytes() == "\ufeffone\r\ntwo\r\nthird\r\n".encode("utf-8")
    write_file({"path": "win.txt", "content": "a\nb\n"}, ctx)
    assert target.read_bytes() == "\ufeffa\r\nb\r\n".encode("utf-8")
    utf16 = ctx.root / "u16.txt"
    utf16.write_bytes("alpha\r\nbeta\r\n".encode("utf-16"))
    assert edit_file({"path": "u16.txt", "old_text": "beta", "new_text": "gamma"}, ctx).startswith("文件已编辑")
    assert utf16.read_bytes() == "alpha\r\ngamma\r\n".encode("utf-16")


def test_a_new_file_is_utf8(ctx):
    assert write_file({"path": "new.txt", "content": "中文\n"}, ctx) == "文件已写入: new.txt"
    assert (ctx.root / "new.txt").read_bytes() == "中文\n".encode("utf-8")


def test_binary_is_about_content_never_one_byte(ctx):
    (ctx.root / "one_nul.txt").write_bytes(b"hello world\n" * 100 + b"\0" + b"more text\n")
    assert read_file({"path": "one_nul.txt"}, ctx).startswith("文件内容:\nhello world")
    (ctx.root / "sparse.dat").write_bytes(b"\0" * 4000 + b"text\n")
    assert "是二进制文件" in read_file({"path": "sparse.dat"}, ctx)
    (ctx.root / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + b"plain ascii after the magic" * 20)
    assert "是二进制文件（类型: image/png" in read_file({"path": "image.txt"}, ctx)
    assert "是二进制文件" in edit_file({"path": "image.txt", "old_text": "plain", "new_text": "x"}, ctx)


def test_one_stray_byte_in_utf8_stays_utf8_and_is_not_edited(ctx):
    data = ("# 中文说明\n" * 40).encode() + b"x = '\xff'\n"
    (ctx.root / "stray.py").write_bytes(data)
    assert sniff(data).encoding == "utf_8" and sniff(data).lossy
    assert read_file({"path": "stray.py"}, ctx).startswith("文件内容（编码: UTF-8，含无法按 UTF-8 解码的字节（显示为 �））:\n# 中文说明")
    assert not edit_file({"path": "stray.py", "old_text": "x = ", "new_text": "y = "}, ctx).ok
    assert (ctx.root / "stray.py").read_bytes() == data


def engines() -> list:
    found = ["python"]
    if find_rg() is not None:
        found.append("ripgrep")
    return found


@pytest.mark.parametrize("engine", engines())
def test_grep_finds_and_shows_what_read_file_reads(ctx, engine):
    (ctx.root / "gbk_src.py").write_bytes(GBK_SOURCE.encode("gbk"))
    (ctx.root / "latin.py").write_bytes(LATIN1_SOURCE.encode("latin-1"))
    (ctx.root / "utf8.py").write_text("def 读取配置():\n    pass\n", encoding="utf-8")
    (ctx.root / "nul.txt").write_bytes(b"def x\n" * 50 + b"\0\n")
    (ctx.root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"def " * 50)
    ascii_hits = grep_code({"pattern": "def "}, ctx, engine=engine)
    assert "gbk_src.py:3\n   >    3 | def 读取配置():" in ascii_hits
    assert "nul.txt:1" in ascii_hits and "logo.png" not in ascii_hits  # as read_file says
    chinese = grep_code({"pattern": "读取配置"}, ctx, engine=engine)
    assert chinese.startswith("匹配结果 2 条")
    assert "gbk_src.py:3\n   >    3 | def 读取配置():" in chinese and "utf8.py:1" in chinese
    latin = grep_code({"pattern": "déjà"}, ctx, engine=engine)
    assert "latin.py:2\n   >    2 | print('déjà vu')" in latin
