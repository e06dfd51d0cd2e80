"""The code index (issue 37): words, the walk's rules, what each grammar yields, incremental updates,
a damaged or newer index, the search ranking and the reference graph, on real files and SQLite."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from paicli.codeindex.extract import extract
from paicli.codeindex.graph import relations
from paicli.codeindex.indexer import update
from paicli.codeindex.languages import GRAMMARS, Grammar, by_suffix
from paicli.codeindex.rank import ranked, render
from paicli.codeindex.search import search
from paicli.codeindex.store import SCHEMA, Busy, Damaged, Store
from paicli.codeindex.walk import walk
from paicli.codeindex.words import identifier_words, index_text, query_terms, translate
from tests.support.code_project import SYMBOLS, write_polyglot


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "index")


@pytest.fixture
def poly(tmp_path) -> Path:
    return write_polyglot(tmp_path / "poly")


def facts_of(path: Path):
    grammar = by_suffix().get(path.suffix)
    return extract(path.read_bytes(), grammar, grammar.load() if grammar else None, path.name)


def first(store: Store, query: str) -> str:
    hit = search(store, query, 5).hits[0]
    return f"{hit.path}:{hit.start_line} {hit.kind} {hit.qualified}"


# -- words ----------------------------------------------------------------------------------------

def test_identifiers_split_into_words_in_every_spelling():
    assert identifier_words("parseHttpDate") == ["parse", "http", "date"]
    assert identifier_words("parse_http_date") == ["parse", "http", "date"]
    assert identifier_words("HTTPServer") == ["http", "server"]
    assert identifier_words("utf8Decode") == ["utf", "8", "decode"]


def test_indexed_text_carries_camel_case_words_and_chinese_pairs():
    text = index_text("return parseHttpDate(x)  # 解析日期")
    assert "parse http date" in text and "解析 析日 日期" in text


def test_a_chinese_query_gets_the_glossary_s_english_and_its_pairs():
    terms, words = query_terms("解析日期的函数")
    assert {"parse", "date"} <= set(terms) and "解析" in terms and "日期" in terms
    assert "函数" not in terms  # a word that says nothing about the code
    assert translate("读取压缩文件") == ["read", "load", "compress", "compression", "zip", "gzip", "file"]


def test_query_terms_keep_a_camel_case_identifier_whole_and_drop_stopwords():
    terms, _ = query_terms("where is parseHttpDate defined")
    assert terms == ["parsehttpdate", "parse", "http", "date"]


# -- the walk -------------------------------------------------------------------------------------

def test_the_walk_honours_gitignore_and_paiignore_and_says_why_it_skipped(tmp_path):
    root = tmp_path / "p"
    (root / "src" / "gen").mkdir(parents=True)
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / ".venv").mkdir()
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "venv").mkdir()  # a package called venv, not a virtual environment
    (root / "venv" / "__init__.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("*.log\nsrc/gen/\n")
    (root / "src" / ".paiignore").write_text("secret.py\n!keep.log\n")
    for name in ("src/a.py", "src/secret.py", "src/keep.log", "src/b.log", "src/gen/c.py", "node_modules/x/i.js",
                 "logo.png", "package-lock.json", "app.min.js"):
        (root / name).write_text("x\n")
    (root / "big.txt").write_text("x" * 2000)
    (root / "link.py").symlink_to(root / "src" / "a.py")
    (root / "to_root").symlink_to("/")
    walked = walk(root, max_file_bytes=1000)
    assert [f.rel for f in walked.files] == [".gitignore", "src/.paiignore", "src/a.py", "src/keep.log", "venv/__init__.py"]
    assert walked.skipped == {"ignored": 3, "vendored": 2, "binary": 1, "generated": 2, "huge": 1, "symlink": 2}


def test_the_walk_stops_at_its_limit(tmp_path):
    for i in range(30):
        (tmp_path / f"f{i:02}.py").write_text("x = 1\n")
    walked = walk(tmp_path, limit=10)
    assert len(walked.files) == 10 and walked.truncated


# -- what each grammar yields ---------------------------------------------------------------------

@pytest.mark.parametrize("path,symbol,kind,qualified,doc", [
    ("shop/pricing.py", "BulkDiscount", "class", "BulkDiscount", "Ten percent off"),
    ("shop/pricing.py", "apply", "method", "BulkDiscount.apply", ""),
    ("src/main/java/com/example/inventory/Warehouse.java", "Warehouse", "interface", "Warehouse", "Storage of goods"),
    ("src/main/java/com/example/inventory/ColdStorage.java", "purgeExpired", "method", "ColdStorage.purgeExpired",
     "Moves expired goods"),
    ("app/src/Cart.kt", "Basket", "interface", "Basket", "A shopping cart"),
    ("app/src/Cart.kt", "total", "method", "ListCart.total", "Adds up the prices"),
    ("web/checkout.js", "formatTotal", "function", "formatTotal", ""),
    ("web/checkout.js", "confirm", "method", "Checkout.confirm", "Confirms the order"),
    ("web/session.ts", "UserSession", "interface", "UserSession", "Who is logged in"),
    ("web/session.ts", "SessionId", "type", "SessionId", ""),
    ("svc/queue.go", "Push", "method", "JobQueue.Push", "Push appends a job"),
    ("svc/queue.go", "Runner", "interface", "Runner", "Runner is anything"),
    ("engine/src/lib.rs", "Gate", "trait", "Gate", "Something that can decide"),
    ("engine/src/lib.rs", "allow", "method", "RateLimiter.allow", "Takes one token"),
    ("native/checksum.c", "crc32_buffer", "function", "crc32_buffer", "Computes the CRC-32"),
    ("native/checksum.c", "ring_buffer", "struct", "ring_buffer", ""),
    ("native/matrix.cpp", "multiply", "method", "linalg.Matrix.multiply", ""),
    ("native/matrix.cpp", "Matrix", "class", "linalg.Matrix", "A dense matrix"),
], ids=lambda v: str(v).replace("/", "_")[:40])
def test_each_language_yields_its_symbols_with_kind_qualified_name_and_doc(poly, path, symbol, kind, qualified, doc):
    found = [s for s in facts_of(poly / path).symbols if s.name == symbol and s.qualified == qualified]
    assert found, [(s.name, s.qualified) for s in facts_of(poly / path).symbols]
    assert found[-1].kind == kind and found[-1].doc.startswith(doc)


def test_references_name_calls_subclasses_and_implementations(poly):
    refs = {(r.kind, r.name) for r in facts_of(poly / "src/main/java/com/example/inventory/ColdStorage.java").refs}
    assert {("extends", "BaseStore"), ("implements", "Warehouse"), ("call", "audit"), ("annotation", "Scheduled"),
            ("import", "HashMap")} <= refs
    rust = {(r.kind, r.name) for r in facts_of(poly / "engine/src/lib.rs").refs}
    assert ("implements", "Gate") in rust and ("call", "refill_hint") in rust


def test_symbols_know_their_lines_and_the_chunks_cover_the_rest(poly):
    facts = facts_of(poly / "shop/pricing.py")
    lines = {s.name: s.start_line for s in facts.symbols}
    assert lines["parse_http_date"] == SYMBOLS["parse_http_date"][1]
    assert any(c.symbol == -1 and c.start_line == 1 for c in facts.chunks)  # the module docstring and import


def test_a_grammar_that_fails_to_load_makes_its_files_text_and_says_so_once(tmp_path, store):
    def broken():
        raise OSError("grammar library is damaged")

    grammars = (Grammar("python", "none", "none", "", (".py",), loader=broken), *GRAMMARS[1:])
    for i in range(3):
        (tmp_path / "p").mkdir(exist_ok=True)
        (tmp_path / "p" / f"m{i}.py").write_text(f"def helper_{i}():\n    return {i}\n")
    report = update(store, tmp_path / "p", grammars=grammars)
    assert report.files == 3 and len(report.problems) == 1 and "python 语法无法加载" in report.problems[0]
    assert search(store, "helper_1", 3).hits[0].path == "m1.py"  # found as text
    assert store.connection().execute("SELECT count(*) FROM symbols").fetchone() == (0,)


def test_a_query_the_grammar_rejects_is_a_grammar_that_fails(tmp_path, store):
    bad = (Grammar("python", "tree_sitter_python", "language", "(no_such_node) @def.class", (".py",)), *GRAMMARS[1:])
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.py").write_text("def f():\n    pass\n")
    report = update(store, tmp_path / "p", grammars=bad)
    assert report.files == 1 and "python 语法无法加载" in report.problems[0]


# -- updates --------------------------------------------------------------------------------------

def test_an_update_reads_only_what_changed_and_drops_what_is_gone(poly, store):
    full = update(store, poly)
    assert (full.added, full.changed, full.removed) == (12, 0, 0)
    again = update(store, poly)
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 0, 0, 12)
    (poly / "svc/queue.go").unlink()
    target = poly / "shop/pricing.py"
    target.write_text(target.read_text().replace("round_cents", "round_to_cents"))
    touched = poly / "README.md"
    os.utime(touched, (1, 1))  # only the time changed: read, hashed, not parsed again
    third = update(store, poly)
    assert (third.added, third.changed, third.removed, third.unchanged) == (0, 1, 1, 10)
    assert first(store, "round_to_cents") == "shop/pricing.py:20 function round_to_cents"
    assert search(store, "JobQueue Push", 5).hits == [] or all(h.path != "svc/queue.go" for h in search(store, "JobQueue", 5).hits)


def test_an_update_of_named_files_only_touches_those(poly, store):
    update(store, poly)
    (poly / "web/checkout.js").write_text("export function shippingFee(grams) { return 1; }\n")
    (poly / "web/session.ts").unlink()
    report = update(store, poly, only=["web/checkout.js", "web/session.ts"])
    assert (report.changed, report.removed) == (1, 1)
    paths = {p for (p,) in store.connection().execute("SELECT path FROM files")}
    assert "web/session.ts" not in paths and len(paths) == 11


def test_a_pool_of_worker_processes_gives_the_same_index(tmp_path, poly):
    import paicli.codeindex.indexer as indexer

    one, two = Store(tmp_path / "one"), Store(tmp_path / "two")
    update(one, poly, workers=1)
    saved = indexer.PARALLEL_FROM
    rows = "SELECT f.path, s.qualified, s.start_line FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY 1, 3, 2"
    try:
        indexer.PARALLEL_FROM = 1  # the module's threshold, not a paicli module patched: restored below
        update(two, poly, workers=2)
    finally:
        indexer.PARALLEL_FROM = saved
    assert one.connection().execute(rows).fetchall() == two.connection().execute(rows).fetchall()


def test_a_cancelled_update_keeps_what_it_wrote_and_the_next_one_finishes(tmp_path, store):
    root = tmp_path / "many"
    root.mkdir()
    for i in range(300):
        (root / f"m{i:03}.py").write_text(f"def function_{i}():\n    return {i}\n")
    cancel = threading.Event()
    report = update(store, root, workers=1, cancel=cancel, progress=lambda p: cancel.set())
    assert report.cancelled and 0 < report.added < 300
    assert store.connection().execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rest = update(store, root, workers=1)
    assert rest.added == 300 - report.added and rest.unchanged == report.added


def test_a_second_writer_waits_or_is_told_the_index_is_busy(poly, store):
    from filelock import FileLock

    update(store, poly)
    with FileLock(str(store.directory / "index.lock")).acquire(timeout=1):  # as another process's lock
        with pytest.raises(Busy):
            update(store, poly, wait=0)


def test_two_threads_indexing_one_project_at_once_take_turns(tmp_path, poly):
    """Two first-use tool calls in one process (parallel-safe code_map/search_code): the file lock
    is one re-entrant object across threads, so the project's own lock makes them take turns."""
    from concurrent.futures import ThreadPoolExecutor

    from paicli.codeindex.project import CodeIndexes

    project = CodeIndexes(tmp_path / "home").project(poly, str(poly))
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda _: project.update(embed=False, workers=1), range(2)))
    assert sorted(r.added for r in reports) == [0, 12] and project.indexed()
    assert project.store.connection().execute("SELECT count(*) FROM files").fetchone()[0] == 12


@pytest.mark.parametrize("damage", ["garbage", "truncated", "newer"])
def test_a_damaged_or_newer_index_is_rebuilt_with_one_line(poly, store, damage):
    update(store, poly)
    store.close()
    if damage == "garbage":
        store.path.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        store.path.write_bytes(store.path.read_bytes()[:3000])
        for suffix in ("-wal", "-shm"):
            Path(str(store.path) + suffix).unlink(missing_ok=True)
    else:
        conn = sqlite3.connect(store.path)
        conn.execute(f"PRAGMA user_version = {SCHEMA + 1}")
        conn.commit()
        conn.close()
    report = update(store, poly)
    assert len(report.problems) == 1 and "已删除并将重建" in report.problems[0]
    assert "\n" not in report.problems[0]
    assert ("更新版本" in report.problems[0]) == (damage == "newer")
    assert report.files == 12 and first(store, "RateLimiter").startswith("engine/src/lib.rs:4 struct")


def test_checked_raises_damaged_once_and_then_works(poly, store):
    update(store, poly)
    store.close()
    store.path.write_bytes(b"x" * 5000)
    with pytest.raises(Damaged):
        store.checked()
    assert store.checked().execute("SELECT count(*) FROM files").fetchone() == (0,)


# -- search, graph, map ---------------------------------------------------------------------------

@pytest.mark.parametrize("query,expected", [
    ("parse_http_date", "shop/pricing.py:25 function parse_http_date"),
    ("parseHttpDate", "shop/pricing.py:25 function parse_http_date"),
    ("parse an http date header", "shop/pricing.py:25 function parse_http_date"),
    ("解析日期", "shop/pricing.py:25 function parse_http_date"),
    ("token bucket that limits calls", "engine/src/lib.rs:4 struct RateLimiter"),
    ("CRC-32 checksum", "native/checksum.c:5 function crc32_buffer"),
    ("multiply two matrices", "native/matrix.cpp:9 method linalg.Matrix.multiply"),
    ("forget the sessions whose time is up", "web/session.ts:12 method SessionStore.evictExpired"),
    ("RateLimiter", "engine/src/lib.rs:4 struct RateLimiter"),
])
def test_search_ranks_the_symbol_first(poly, store, query, expected):
    update(store, poly)
    assert first(store, query) == expected


def test_a_query_of_nothing_searchable_finds_nothing(poly, store):
    update(store, poly)
    assert search(store, "的 了", 5).hits == [] and search(store, '"*) ( ^ -', 5).hits == []


def test_relations_by_name_find_definition_callers_calls_and_subclasses(poly, store):
    update(store, poly)
    found = relations(store, "PriceRule")
    assert [(d.path, d.line) for d in found.definitions] == [("shop/pricing.py", 6)]
    assert [(u.qualified, u.kind) for u in found.users] == [("default_rule", "call")]
    assert [(s.qualified, s.kind) for s in found.subclasses] == [("BulkDiscount", "extends")]
    calls = dict(relations(store, "BulkDiscount.apply").calls)
    assert [p.qualified for p in calls["round_cents"]] == ["round_cents"]


def test_the_map_ranks_what_others_lean_on_and_follows_the_focus(poly, store):
    update(store, poly)
    ranks = ranked(store)
    top = [r.qualified for r in ranks[:12]]
    assert "PriceRule" in top and "BaseStore" in top
    focused = [r.path for r in ranked(store, ["engine/src/lib.rs"])[:3]]
    assert focused.count("engine/src/lib.rs") == 3
    lines = render(ranks, 60, lambda s: len(s) // 4 + 1)
    assert lines[0].endswith(":") and sum(len(l) // 4 + 1 for l in lines) <= 60 + 20


def test_an_update_of_named_files_keeps_the_walk_s_rules(tmp_path, store):
    root, outside = tmp_path / "p", tmp_path / "outside"
    (root / "gen").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text("def stolen():\n    pass\n")
    (root / ".gitignore").write_text("gen/\n")
    (root / "gen" / "out.py").write_text("def generated():\n    pass\n")
    (root / "a.py").write_text("def kept():\n    pass\n")
    (root / "linked").symlink_to(outside)
    update(store, root)
    report = update(store, root, only=["gen/out.py", "linked/secret.py", "a.py", "../outside/secret.py"])
    assert report.added == 0 and report.unchanged == 1
    paths = {p for (p,) in store.connection().execute("SELECT path FROM files")}
    assert paths == {".gitignore", "a.py"}


def test_worker_processes_never_import_the_project_s_own_modules(tmp_path, store):
    import paicli.codeindex.indexer as indexer

    root = tmp_path / "p"
    (root / "codeindex").mkdir(parents=True)
    marker = tmp_path / "pwned"
    (root / "codeindex" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (root / "tree_sitter.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (root / "a.py").write_text("def a():\n    pass\n")
    saved, cwd = indexer.PARALLEL_FROM, os.getcwd()
    try:
        indexer.PARALLEL_FROM = 1
        os.chdir(root)  # as `paicli` started in the repository
        report = update(store, root, workers=2)
    finally:
        indexer.PARALLEL_FROM = saved
        os.chdir(cwd)
    assert report.files == 3 and not marker.exists()


def test_two_first_openings_at_once_both_get_the_index_and_neither_deletes_it(tmp_path):
    """Two threads (or processes) that both found no index: the second's creation once failed on
    "table meta already exists", read as damage, and deleted the index under the first
    ("no such table: symbols")."""
    import threading

    from paicli.codeindex.store import Store

    for round_ in range(20):
        where = tmp_path / f"index-{round_}"
        start, failures = threading.Barrier(3), []

        def open_it() -> None:
            start.wait()
            try:
                Store(where).checked().execute("SELECT count(*) FROM symbols").fetchone()
            except Exception as error:  # noqa: BLE001 - collected for the assertion
                failures.append(error)

        threads = [threading.Thread(target=open_it) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == [] and (where / "index.sqlite").exists()
