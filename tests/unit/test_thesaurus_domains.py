"""Issue 16: the developer thesaurus bridges the wording of every domain, not only the tune set's.

One colloquial Chinese term ↔ English term (and a few reverse ones) per domain, and memories
found through them by the retriever among look-alikes."""

from datetime import UTC, datetime

import pytest

from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.retriever import Retriever
from paicli.memory.longterm.terms import terms
from paicli.memory.longterm.thesaurus import Thesaurus, builtin, parse

NOW = datetime(2026, 9, 23, 8, tzinfo=UTC)
P = "/work/proj"

BRIDGES = [  # (what the user says, a term the thesaurus must bring in)
    ("软删除", "deleted_at"), ("执行计划怎么看", "explain"),  # databases
    ("缓存命中率", "hit"),  # caching
    ("消息积压", "lag"),  # messaging
    ("向量检索", "vector"),  # search
    ("断点续传", "multipart"),  # storage
    ("锁文件要不要提交", "lockfil"),  # build and packages
    ("构建机", "runner"),  # CI/CD
    ("弹性伸缩", "keda"),  # containers
    ("沙箱环境", "sandbox"),  # environments
    ("破坏性变更", "break"),  # releases
    ("强推", "force"),  # git
    ("冒烟测试", "smok"),  # testing
    ("两步验证", "2fa"), ("找回密码", "reset"),  # auth
    ("火焰图", "flamegraph"), ("链路id", "traceid"),  # observability
    ("请求体", "payload"),  # API
    ("补数", "backfill"),  # scheduling
    ("防抖", "debounc"), ("首屏", "lcp"),  # frontend
    ("鸿蒙", "harmonyo"), ("深链接", "deeplink"),  # mobile
    ("切面", "aop"),  # backend
    ("内网穿透", "frp"),  # networking
    ("性能瓶颈", "bottleneck"),  # performance
    ("数据血缘", "lineag"), ("大模型", "llm"),  # data and AI
    ("居家办公", "wfh"),  # team
    ("主力语言", "primary"), ("机械键盘", "keyboard"),  # the user
    ("flame graph", "火焰"), ("soft delete", "逻辑"), ("work from home", "居家"), ("debounce", "防抖"),  # reverse
]


@pytest.mark.parametrize(("said", "expected"), BRIDGES)
def test_the_builtin_thesaurus_bridges_each_domain(said, expected):
    assert any(expected in t for t in builtin().expand(terms(said))), said


def test_the_builtin_thesaurus_covers_many_groups():
    assert len(builtin().groups) >= 850


def test_a_member_without_character_pairs_occurs_as_jiebas_word():
    # Every pair of "优先级" holds a grammar character: only jieba's whole word can stand for it.
    thesaurus = Thesaurus(parse("优先级 | priority\n"))
    assert "priority" in thesaurus.expand(terms("配置的优先级怎么定"))


def _e(content):
    return new_fact(content, project=P, now=NOW)


@pytest.mark.parametrize(("memory", "query"), [
    ("Kafka consumer lag 超过 10 万条时告警", "消息积压多少会报警"),
    ("搜索框输入做了 300ms 的 debounce", "防抖时间是多少"),
    ("pnpm-lock.yaml 这个锁文件必须提交", "should the lockfile be committed"),
    ("用户每周三居家办公", "which day do I WFH"),
    ("线上排查 CPU 问题先抓 flame graph", "火焰图怎么抓"),
])
def test_a_colloquial_question_finds_the_memory_among_look_alikes(memory, query):
    look_alikes = [_e(f"{name}服务的日志保留 {n} 天，告警发到值班群") for n, name in enumerate("甲乙丙丁戊己")]
    look_alikes += [_e("提交信息遵循约定式提交"), _e("搜索服务用 Elasticsearch，输入框在首页"),
                    _e("用户在上海办公，每周一上午开周会"), _e("线上排查问题先看 Grafana 面板")]
    ranked = Retriever().rank([_e(memory), *look_alikes], query, P, NOW, 5)
    assert ranked and ranked[0].entry.content == memory


def test_the_shipped_compiled_thesaurus_is_the_text_cut_into_terms():
    """builtin() reads data/thesaurus.compiled.json; after editing thesaurus.txt, rewrite it with
    `python -m paicli.memory.longterm.thesaurus`."""
    from paicli.memory.longterm.thesaurus import compiled
    from paicli.memory.longterm.thesaurus_data import compiled_text, shipped

    assert compiled_text() == compiled(), "run: .venv/bin/python -m paicli.memory.longterm.thesaurus"
    assert builtin().groups == Thesaurus(shipped()).groups
