"""Issue 16: recall by rarity, the developer thesaurus, and what `/memory search` shows without a match."""

from datetime import UTC, datetime, timedelta

from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.retriever import Retriever
from paicli.memory.longterm.terms import key_terms, stem, terms
from paicli.memory.longterm.thesaurus import Thesaurus, builtin, parse

NOW = datetime(2026, 9, 23, 8, tzinfo=UTC)
P = "/work/proj"


def _e(content, days_old=0, **kw):
    return new_fact(content, project=P, now=NOW - timedelta(days=days_old), **kw)


def _top(entries, query, retriever=None, limit=5):
    return [s.entry.content for s in (retriever or Retriever()).rank(entries, query, P, NOW, limit)]


# -- weighting -------------------------------------------------------------------------------------
def test_a_word_in_every_memory_cannot_outrank_a_rare_exact_match():
    common = [_e(f"{name}服务使用 MySQL 作为数据库，数据库每天备份") for name in "甲乙丙丁戊己庚辛壬癸" * 5]
    rare = _e("时区统一用 UTC", days_old=60)  # older: newer must not rescue the others
    assert _top([*common, rare], "数据库 时区")[0] == rare.content
    assert _top([*common, rare], "数据库里的时间用哪个时区")[0] == rare.content


def test_rarity_decides_between_two_partial_matches():
    entries = [_e(f"订单服务第 {i} 号配置") for i in range(30)] + [_e("结算页的灰度比例是 5%", days_old=90)]
    assert _top(entries, "订单 灰度")[0] == "结算页的灰度比例是 5%"


def test_terms_cover_chinese_pairs_words_identifiers_and_versions():
    found = terms("项目使用 PostgreSQL 15.4，配置在 db/migration 和 max_connections")
    assert {"项目", "使用", "15.4", "db/migration", "db", "migration", "max_connections", "connection"} <= set(found)
    assert "postgresql" in found and "sql" in found  # camelCase parts too
    assert "库是" not in terms("数据库是 MySQL")  # a pair across a grammar word is not a term
    assert "用户" in terms("用户是后端工程师")  # ... unless it is a word
    assert stem("reindexes") == stem("reindexing") == "reindex" and stem("releases") == stem("release")
    assert key_terms("数据库迁移") == frozenset({"数据", "据库", "库迁", "迁移"})


def test_a_thesaurus_word_jieba_splits_is_still_a_term():
    assert {"从库", "会话", "站会"} <= set(terms("读请求走从库，会话多久过期，站会几点开"))  # jieba: 从/库, 会/话, 站/会
    assert "试用" not in terms("单元测试用 cargo test")  # a pair across words the thesaurus does not name stays out
    entries = [_e("Read traffic goes to a MySQL read replica"), _e("MySQL slow query log threshold is 1 second"),
               _e("读请求的超时是 3 秒")]
    assert _top(entries, "读请求走从库吗")[0] == "Read traffic goes to a MySQL read replica"


def test_an_identifier_and_a_version_match_as_their_own_terms():
    entries = [_e("billing-api 在 staging 监听 7443"), _e("billing 报表每天生成"), _e("api 文档在 docs/")]
    assert _top(entries, "billing-api 端口")[0] == "billing-api 在 staging 监听 7443"
    versions = [_e("Python 3.12 用于新服务"), _e("Python 3.10 用于老脚本")]
    assert _top(versions, "哪里用 3.10")[0] == "Python 3.10 用于老脚本"


# -- thesaurus -------------------------------------------------------------------------------------
def test_a_member_in_the_query_brings_in_its_group_and_the_longest_member_wins():
    thesaurus = Thesaurus(parse("# comment | not a group\n主库 | 主数据库 | primary database\n"
                                "数据库 | database\n数据库迁移 | 表结构变更 | schema migration\nC# | csharp\n"))
    assert {"primary", "databas", "主数"} <= thesaurus.expand(terms("主库是什么"))
    assert thesaurus.expand(terms("没有关系的问题")) == set()
    migration = thesaurus.expand(terms("数据库迁移怎么做"))
    assert "schema" in migration and "表结" in migration and "databas" not in migration  # not "数据库"'s group
    assert len(thesaurus.groups) == 4  # "C#" is a word, the comment line is not a group


def test_the_builtin_thesaurus_is_large_and_bridges_the_issue_examples():
    thesaurus = builtin()
    assert len(thesaurus.groups) >= 300
    bridges = {"主库": "primary", "打包": "构建", "手机端": "移动", "令牌": "token", "私服": "nexus",
               "表结构变更": "迁移", "持续集成": "ci", "技术背景": "background"}
    for word, expected in bridges.items():
        assert any(expected in t for t in thesaurus.expand(terms(word))), word


def test_a_synonym_finds_the_memory_but_counts_less_than_the_users_own_word():
    synonym, exact = _e("移动端用 React Native 开发"), _e("手机端的推送走极光")
    noise = [_e(f"{x}服务的日志保留 7 天") for x in "甲乙丙丁"]
    assert _top([synonym, *noise], "手机端用什么开发") == [synonym.content]
    ranked = Retriever().rank([synonym, exact, *noise], "手机端", P, NOW)
    assert [s.entry for s in ranked] == [exact, synonym] and ranked[1].score < 0.8 * ranked[0].score


def test_english_questions_find_chinese_memories_and_the_reverse():
    entries = [_e("项目使用 PostgreSQL 15 作为主数据库"), _e("前端构建工具是 Vite 5"),
               _e("生产环境部署在 Kubernetes 的 shop-prod 命名空间"),
               _e("Read traffic goes to a MySQL read replica"), *(_e(f"{x}服务的负责人是张伟") for x in "甲乙丙")]
    assert _top(entries, "which database does the main service use")[0] == entries[0].content
    assert _top(entries, "frontend bundler")[0] == entries[1].content
    assert _top(entries, "kubernetes namespace for production")[0] == entries[2].content
    assert _top(entries, "读写分离怎么做的")[0] == entries[3].content


def test_about_me_questions_find_the_users_background():
    entries = [_e("用户是后端工程师，熟悉 Go 和 Java", scope="global"), _e("登录页的背景图由设计组提供")]
    assert _top(entries, "我的技术背景")[0] == entries[0].content


def test_nothing_shared_is_no_match():
    assert _top([_e("前端构建工具是 Vite 5")], "咖啡机坏了") == []


# -- "nothing matched" -----------------------------------------------------------------------------
def test_recently_verified_lists_visible_entries_latest_confirmation_first(tmp_path):
    memory = LongTermMemory(tmp_path, MemoryOptions(sync=False))
    old = memory.save_fact("构建用 Maven", scope="project", project_key=P, now=NOW - timedelta(days=9)).entry
    memory.save_fact("部署用 Helm", scope="project", project_key=P, now=NOW - timedelta(days=5))
    memory.save_fact("别的项目的事实", scope="project", project_key="/other", now=NOW)
    memory.verify(old.id, P, now=NOW - timedelta(days=1))
    assert [e.content for e in memory.recently_verified(P)] == ["构建用 Maven", "部署用 Helm"]
    assert memory.search("咖啡机", P, now=NOW) == []
    assert memory.context_block("咖啡机", 640, P, now=NOW) == ""  # injection stays strict
