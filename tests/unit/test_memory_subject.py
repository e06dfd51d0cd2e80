"""Issue 16, second pass: a memory about a subject the query never names ranks lower, and a
pair across a grammar word is no term even when the dictionary knows it as a word."""

from datetime import UTC, datetime, timedelta

from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.retriever import Retriever
from paicli.memory.longterm.subject import subject_terms
from paicli.memory.longterm.terms import terms

NOW = datetime(2026, 9, 23, 8, tzinfo=UTC)
P = "/work/proj"
SERVICES = ("报表服务", "支付网关", "搜索服务", "物流服务", "推荐服务", "管理后台", "订单服务", "库存服务")


def _e(content, days_old=0):
    return new_fact(content, project=P, now=NOW - timedelta(days=days_old))


def _top(entries, query, limit=5):
    return [s.entry.content for s in Retriever().rank(entries, query, P, NOW, limit)]


def test_a_pair_across_a_grammar_word_is_no_term_even_if_the_dictionary_knows_it():
    assert "试用" not in terms("单元测试用 cargo test")  # 测试/用, though 试用 is a word
    assert "用户" in terms("用户是后端工程师")  # cut as a word here: kept


def test_subject_is_the_phrase_a_memory_opens_with():
    assert "报表" in subject_terms("报表服务的前端打包耗时 5 秒")
    assert "服务" not in subject_terms("报表服务的前端打包耗时 5 秒")  # its kind: "服务" names no service
    assert "推荐" in subject_terms("推荐服务使用 MySQL 作为数据库")  # a named component that acts
    assert "支付" in subject_terms("支付网关部署在 k8s")
    assert "redis" in subject_terms("Redis 的慢日志每周清理一次")
    assert "user-service" in subject_terms("user-service keeps logs for 2 days")
    assert subject_terms("前端构建工具是 Vite 5") == frozenset()  # no "X 的" opening
    assert subject_terms("用户的开发机是 MacBook Pro") == frozenset()  # the user: every question's subject
    assert subject_terms("数据库里的时间字段统一存 UTC") == frozenset()  # a place, not a subject


def test_look_alikes_about_other_services_do_not_bury_the_answer_in_other_words():
    look_alikes = [_e(f"{svc}的前端打包耗时 {n} 秒") for svc in SERVICES for n in (5, 10, 30)]
    right = _e("前端构建工具是 Vite 5", days_old=120)  # older: newer must not rescue it
    assert _top([*look_alikes, right], "前端用什么打包")[0] == right.content


def test_components_that_act_are_subjects_and_their_kind_names_none_of_them():
    look_alikes = [_e(f"{svc}使用 {db} 作为数据库") for svc in SERVICES for db in ("MySQL", "MongoDB")]
    right = _e("项目使用 PostgreSQL 15 作为主数据库", days_old=120)
    assert _top([*look_alikes, right], "业务数据存在哪种数据库")[0] == right.content
    assert _top([*look_alikes, right], "推荐服务用什么数据库")[0].startswith("推荐服务")


def test_a_look_alike_whose_subject_the_query_names_still_comes_first():
    look_alikes = [_e(f"{svc}的前端打包耗时 {n} 秒") for svc in SERVICES for n in (5, 10, 30)]
    right = _e("前端构建工具是 Vite 5", days_old=120)
    assert _top([*look_alikes, right], "报表服务的前端打包要多久")[0].startswith("报表服务")
    code_names = [_e(f"{svc}-service keeps logs for {n} days") for svc in ("auth", "billing", "search") for n in (2, 9)]
    assert _top([*code_names, _e("日志保留 30 天")], "how long does auth-service keep logs")[0].startswith("auth-service")
