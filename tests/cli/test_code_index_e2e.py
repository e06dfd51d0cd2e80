"""The code index end to end (issue 37): `/index`, then the model's `search_code` finds the symbol's
file and lines; an `edit_file` is searchable at once; `/graph` lists callers and subclasses; a Java
project's class, interface and annotated methods are found by name and by their Javadoc words."""

from __future__ import annotations

import re
import sqlite3

from tests.support.code_project import SYMBOLS, write_polyglot
from tests.support.openai_server import Reply


def call(name: str, **arguments) -> Reply:
    return Reply("", tool_calls=[{"name": name, "arguments": arguments}])


def tool_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def first_hit(text: str) -> str:
    return re.search(r"^1\. (\S+)", text, re.MULTILINE).group(1)


def test_index_then_search_code_gives_the_symbol_s_file_and_lines(run_paicli, project, server):
    write_polyglot(project)
    done = run_paicli("-p", "/index")
    assert done.returncode == 0, done.stderr
    assert "✅ 代码索引已更新: 12 个文件" in done.stdout and "检索方式: BM25 关键词" in done.stdout
    server.script = [call("search_code", query="parse an HTTP date header"), Reply("在 shop/pricing.py")]
    done = run_paicli("-p", "日期解析在哪里")
    assert done.returncode == 0, done.stderr
    (result,) = tool_texts(server.requests[1])
    path, line = SYMBOLS["parse_http_date"]
    assert first_hit(result) == f"{path}:{line}-{line + 3}"
    assert "function parse_http_date" in result and "签名: def parse_http_date(text)" in result
    assert f"{line + 2:5d} |     parts = text.split()" in result
    assert "仅按关键词 BM25 检索" in result  # said once: vectors are not configured


def test_an_edit_is_found_by_the_next_search(run_paicli, project, server):
    write_polyglot(project)
    assert run_paicli("-p", "/index").returncode == 0
    server.script = [
        call("edit_file", path="shop/pricing.py", old_text="    return math.floor(value * 100 + 0.5) / 100",
             new_text="    return banker_rounding(value)  # half to even, like the tax office"),
        call("search_code", query="banker rounding tax office"),
        Reply("改好了")]
    done = run_paicli("-p", "把舍入改成银行家舍入")
    assert done.returncode == 0, done.stderr
    result = tool_texts(server.requests[2])[-1]
    path, line = SYMBOLS["round_cents"]
    assert first_hit(result) == f"{path}:{line}-{line + 2}"
    assert "banker_rounding(value)  # half to even" in result


def test_graph_lists_a_caller_and_a_subclass(run_paicli, project):
    write_polyglot(project)
    assert run_paicli("-p", "/index").returncode == 0
    done = run_paicli("-p", "/graph PriceRule")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "shop/pricing.py:6  class PriceRule" in out
    assert re.search(r"shop/pricing\.py:32  default_rule \(call\)", out)
    assert "shop/pricing.py:13  BulkDiscount (继承)" in out
    assert "按名称匹配" in out  # it says the links are by name
    java = run_paicli("-p", "/graph Warehouse").stdout
    assert "ColdStorage.java:9  ColdStorage (实现)" in java


def test_a_java_project_is_found_by_names_and_javadoc_words(run_paicli, project):
    write_polyglot(project)
    assert run_paicli("-p", "/index").returncode == 0
    expected = {
        "ColdStorage": "ColdStorage.java:9  class ColdStorage",
        "a refrigerated warehouse for frozen food": "ColdStorage.java:9  class ColdStorage",
        "Warehouse": "Warehouse.java:8  interface Warehouse",
        "storage of goods the shop can ship": "Warehouse.java:8  interface Warehouse",
        "purgeExpired": "ColdStorage.java:21  method ColdStorage.purgeExpired",
        "move expired goods to the disposal queue": "ColdStorage.java:21  method ColdStorage.purgeExpired",
    }
    for query, hit in expected.items():
        done = run_paicli("-p", f"/search {query}")
        assert done.returncode == 0, done.stderr
        first = next(line for line in done.stdout.splitlines() if line.strip().startswith("1."))
        assert hit in first, (query, done.stdout)
    scheduled = run_paicli("-p", "/search Scheduled cron").stdout
    assert "purgeExpired" in scheduled and "@Scheduled(cron" in scheduled  # the annotation is in the signature


def test_the_first_search_indexes_a_small_project_and_says_so(run_paicli, project, server):
    write_polyglot(project)
    server.script = [call("search_code", query="token bucket rate limiter"), Reply("好")]
    done = run_paicli("-p", "限流在哪")
    assert done.returncode == 0, done.stderr
    assert "代码库尚未索引，正在建立代码索引" in done.stderr
    (result,) = tool_texts(server.requests[1])
    assert first_hit(result).startswith("engine/src/lib.rs:")


def test_a_project_too_big_to_index_on_the_fly_asks_for_index(run_paicli, project, server):
    write_polyglot(project)
    server.script = [call("search_code", query="rate limiter"), call("search_code", query="zzqxv nothing"),
                     Reply("好")]
    done = run_paicli("-p", "找一下", env={"PAICLI_CODE_INDEX_AUTO_MAX_FILES": "3"})
    assert done.returncode == 0, done.stderr
    (result,) = tool_texts(server.requests[1])
    assert "代码库尚未索引，请先使用 /index 命令索引当前项目。" in result and "超过 3 个" in result
    assert run_paicli("-p", "/index").returncode == 0
    server.script += [call("search_code", query="zzqxv"), Reply("没有")]  # the server's cursor goes on
    done = run_paicli("-p", "搜 zzqxv")
    assert done.returncode == 0, done.stderr
    assert "\n未找到与查询相关的代码。\n" in tool_texts(server.requests[-1])[0]


def test_index_status_and_clear(run_paicli, project, paicli_home):
    write_polyglot(project)
    assert "还没有代码索引" in run_paicli("-p", "/index status").stdout
    assert run_paicli("-p", "/index").returncode == 0
    status = run_paicli("-p", "/index status").stdout
    assert "12 个文件" in status and "java 3" in status and "python 1" in status
    (database,) = paicli_home.glob("codeindex/*/index.sqlite")
    assert sqlite3.connect(database).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert "已删除" in run_paicli("-p", "/index clear").stdout
    assert not database.exists()


def test_index_with_a_path_moves_the_project_root(run_paicli, project, tmp_path):
    other = tmp_path / "other"
    write_polyglot(other)
    done = run_paicli("-p", f"/index {other}")
    assert done.returncode == 0, done.stderr
    assert f"📁 项目根已切换到: {other}" in done.stdout and "12 个文件" in done.stdout
    missing = run_paicli("-p", f"/index {tmp_path / 'nowhere'}")
    assert missing.returncode == 1 and "❌ 目录不存在" in missing.stderr


def test_search_and_graph_need_an_index_and_a_query(run_paicli, project):
    write_polyglot(project)
    done = run_paicli("-p", "/search parse")
    assert done.returncode == 1 and "代码库尚未索引，请先使用 /index 命令索引当前项目。" in done.stderr
    assert run_paicli("-p", "/search").returncode == 1
    assert run_paicli("-p", "/index").returncode == 0
    unknown = run_paicli("-p", "/graph NoSuchThing")
    assert unknown.returncode == 1 and "没有名为 NoSuchThing 的符号" in unknown.stderr
    mapped = run_paicli("-p", "/graph")
    assert mapped.returncode == 0 and "🗺️ 代码地图" in mapped.stdout and "shop/pricing.py:" in mapped.stdout
