"""What long-term memory costs and how well it finds things, at 1,000 and 10,000 memories.

Prints, per size, side by side with baselines run in the same process:

1. **Search.** p50 / p95 of ``LongTermMemory.search`` (limit 10, what the per-turn context block
   asks for) in a warm process: one warm-up query first, then queries cycled from a varied list.
   Baselines: LangGraph's ``InMemoryStore.search`` with the same query over the same items (it
   does no ranking without an index) and a naive substring scan. Also the first (cold) search of
   a fresh process (parse the file, vectorize every memory) and a search right after a write
   (the candidate list changed, so the retriever restacks its matrix).
2. **Write.** p50 / p95 of one explicit ``save_fact`` with fsync: file lock, reread (skipped when
   the file is unchanged since our own last write), dedup and conflict checks, serialization,
   temp file, fsync, ``os.replace``; and the same with a second writer on the file in between,
   so every write re-parses it. Baseline: ``json.dump`` of the same list (same format) to a temp
   file, fsync and ``os.replace``, no lock or checks. Then where one write's time goes.
3. **Recall@5** on a labelled set of queries (half Chinese, half English), each with the memory
   or memories it should find, planted among generated distractors that share its words. For
   the retriever and for a keyword-only ranking (the retriever's formula with the cosine term
   dropped: share of query jieba tokens found × decay), so the vector part's value shows.

The file is built in one go with ``memory.memory_file.dump``: ``save_fact`` one by one would be
O(n²) through its conflict checks. Every memory is visible to the query's project (global or
this project's), the worst case for ranking. Benchmarks print; they never fail over a target.

    /work/venv/bin/python bench/memory.py            # about 40 s on 2 cores
    /work/venv/bin/python bench/memory.py --quick    # fewer samples, about 15 s
    /work/venv/bin/python bench/memory.py --misses   # also list the queries each ranking missed
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ahead of bench/: `memory` is the package

import jieba  # noqa: E402
import numpy as np  # noqa: E402
from langgraph.store.base import PutOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from memory.conflict import find_conflicts  # noqa: E402
from memory.dedup import find_duplicate  # noqa: E402
from memory.long_term import LongTermMemory, MemoryOptions  # noqa: E402
from memory.memory_entry import Entry, new_fact, normalize_project_key, to_json  # noqa: E402
from memory.memory_file import FILE_NAME, _parse, dump  # noqa: E402
from memory.retriever import decay_for_age, keyword_score, tokenize  # noqa: E402
from memory.store import namespace_of  # noqa: E402

SIZES = (1_000, 10_000)
TARGET_SEARCH_MS, TARGET_WRITE_MS = 20.0, 50.0  # at 10,000 memories
LIMIT, K = 10, 5  # the context block's top 10; recall@5
SEED = 20261129
PROJECT = normalize_project_key("/home/dev/shop")
NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
FLAT = NOW + timedelta(days=36_500)  # every memory at the decay floor: relevance alone, then newest

# -- the labelled set ------------------------------------------------------------------------------
# name: (content, scope, near misses that share its words but answer something else)
GOLD: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "invoice-port": ("发票服务在本地开发时监听 6380 端口", "project",
                     ("发票服务的负责人是王强", "发票服务的日志保留 14 天")),
    "pnpm": ("前端项目统一用 pnpm 管理依赖，不要提交 package-lock.json", "project",
             ("npm 镜像源配置为 https://registry.npmmirror.com", "前端项目的 ESLint 配置在 apps/web/.eslintrc.cjs")),
    "java-width": ("Java 代码行宽上限 120 列，提交前跑 mvn spotless:apply", "project",
                   ("Python 代码行宽上限 100 列，用 ruff 检查",)),
    "flyway": ("数据库迁移用 Flyway，脚本放在 db/migration 目录", "project",
               ("数据库备份每天凌晨 3 点执行", "迁移到新机房的计划推迟到下季度")),
    "comment-lang": ("用户偏好：回答用中文，代码注释和标识符用英文", "global",
                     ("用户偏好：命令行输出不要带颜色",)),
    "commit-format": ("提交信息遵循 Conventional Commits，例如 feat(order): 新增退款接口", "project",
                      ("提交前必须跑一遍单元测试",)),
    "session-ttl": ("登录会话存在 Redis 里，过期时间 30 分钟", "project", ("登录页的验证码 5 分钟内有效",)),
    "review": ("合并请求至少要两个人 review 才能合入 main 分支", "project", ("main 分支受保护，禁止直接 push",)),
    "kind": ("本地联调用 kind 起 Kubernetes 集群，配置在 deploy/kind.yaml", "project",
             ("生产环境的 Kubernetes 集群在华东 2 区",)),
    "gpu": ("训练脚本默认用两张 A100，显存不够时把 batch_size 降到 16", "project", ("训练数据放在 s3://ml-data/train",)),
    "openapi": ("接口文档用 OpenAPI 3 写，放在 docs/api/openapi.yaml，改接口要同步更新", "project",
                ("接口超时默认 5 秒",)),
    "node": ("Node 版本固定为 20 LTS，用 .nvmrc 管理", "project", ("Node 脚本放在 tools/ 目录下",)),
    "timezone": ("服务器时间统一用 UTC，前端展示时再转成北京时间", "global", ("服务器每周日凌晨重启",)),
    "billing-port": ("The billing-api listens on port 7443 in staging", "project",
                     ("billing-api owner is carol", "billing-worker retries failed invoices 3 times")),
    "formatter": ("We use ruff for linting and formatting Python; black is no longer used", "project",
                  ("Python scripts in tools/ must run on 3.10",)),
    "itest": ("Integration tests need Docker running; start them with make itest", "project",
              ("Unit tests run with pytest -q in under a minute",)),
    "secrets": ("Secrets are stored in Vault under secret/shop; never commit .env files", "project",
                ("The .env.example file lists every variable the app reads",)),
    "release": ("Release tags follow semver vMAJOR.MINOR.PATCH and are cut from the release branch", "project",
                ("Release notes are drafted in docs/releases/",)),
    "flags": ("Feature flags are managed in LaunchDarkly; the SDK key is in FLAG_SDK_KEY", "project",
              ("Dead feature code is removed within two sprints",)),
    "short-answers": ("The user prefers short answers: code first, explanations after", "global",
                      ("The user reads diffs in the terminal, not in a browser",)),
    "pg-conn": ("Postgres max_connections is 200 on the primary; use pgbouncer for pooling", "project",
                ("Postgres backups run nightly at 02:00",)),
    "log-lang": ("Error messages shown to users must be in Chinese; logs stay in English", "global",
                 ("Logs are shipped to Loki and kept for 30 days",)),
    "prod-deploy": ("Production deploys need a manual approval step in the GitLab pipeline", "project",
                    ("The GitLab runner cache is cleared every Monday",)),
    "squash": ("Squash commits when merging pull requests; the PR title becomes the commit subject", "project",
               ("Pull request templates live in .github/PULL_REQUEST_TEMPLATE.md",)),
    "pr-approval": ("Pull requests need one approval from a code owner before merging", "project", ()),
    "compose": ("Local dev dependencies start with docker compose -f compose.dev.yml up (Postgres, Redis, Kafka)",
                "project", ("compose.ci.yml is only for the CI runners",)),
    "reindex": ("The search-indexer reindexes nightly at 01:30 UTC via a cron job", "project",
                ("search-indexer memory limit is 2 GiB",)),
}
QUERIES: tuple[tuple[str, tuple[str, ...]], ...] = (  # (query, the gold it should find)
    ("发票服务本地跑在哪个端口？", ("invoice-port",)),
    ("前端装依赖该用 npm 还是 pnpm", ("pnpm",)),
    ("Java 代码一行最多多少个字符", ("java-width",)),
    ("数据库迁移脚本放在哪个目录", ("flyway",)),
    ("代码注释用什么语言写", ("comment-lang",)),
    ("提交信息的格式要求", ("commit-format",)),
    ("登录会话多久过期", ("session-ttl",)),
    ("合并到 main 需要几个人审批", ("review",)),
    ("本地怎么起 k8s 集群", ("kind",)),
    ("训练时显存不够怎么办", ("gpu",)),
    ("接口文档在哪里", ("openapi",)),
    ("node 版本是多少", ("node",)),
    ("时区怎么处理", ("timezone",)),
    ("前端的 node 和包管理器有什么约定", ("node", "pnpm")),
    ("which port does billing use in staging", ("billing-port",)),
    ("what python formatter do we use", ("formatter",)),
    ("how to run the integration tests", ("itest",)),
    ("where are secrets kept", ("secrets",)),
    ("how are release versions tagged", ("release",)),
    ("where do we toggle feature flags", ("flags",)),
    ("how long should my answers be", ("short-answers",)),
    ("database connection limit", ("pg-conn",)),
    ("what language should log messages use", ("log-lang",)),
    ("how do I deploy to production", ("prod-deploy",)),
    ("rules for merging pull requests", ("squash", "pr-approval")),
    ("start local dependencies for development", ("compose",)),
    ("when does reindexing run", ("reindex",)),
)
EXTRA_QUERIES = ("订单服务的端口", "Redis 缓存过期时间", "kafka topic", "用户服务负责人", "gradle build",
                 "日志保留多少天", "rate limit", "pytest", "配置文件在哪", "timeout retries")

# -- generated distractors -------------------------------------------------------------------------
# Built from the same vocabulary, but never about a gold memory's subject: no 发票/billing service,
# no Java line width, no deploys to production, no Node versions, so no distractor is a right answer.
SERVICES = (("订单服务", "order-service"), ("用户服务", "user-service"), ("支付网关", "payment-gateway"),
            ("库存服务", "inventory-service"), ("通知服务", "notification-service"), ("搜索服务", "search-service"),
            ("报表服务", "report-service"), ("认证服务", "auth-service"), ("调度服务", "scheduler"),
            ("管理后台", "admin-console"), ("推荐服务", "recommend-service"), ("物流服务", "shipping-service"),
            ("优惠券服务", "coupon-service"), ("评论服务", "review-service"), ("消息服务", "message-service"))
LANGS = {"Java": ("11", "17", "21"), "Python": ("3.10", "3.11", "3.12"), "Go": ("1.21", "1.22"),
         "Kotlin": ("1.9", "2.0"), "Rust": ("1.78", "1.80"), "TypeScript": ("5.3", "5.4")}
PREFERENCES = (("dataclasses", "dicts"), ("pathlib", "os.path"), ("f-strings", "format()"), ("httpx", "requests"),
               ("constructor injection", "field injection"))
W = dict(  # slot vocabularies drawn independently
    store=("Redis", "PostgreSQL", "MySQL", "MongoDB", "Kafka", "RabbitMQ", "Elasticsearch", "ClickHouse", "etcd"),
    env_zh=("开发环境", "测试环境", "预发环境", "生产环境"), env_en=("dev", "staging", "qa", "prod"),
    env_test=("开发环境", "测试环境", "预发环境"), env_test_en=("dev", "staging", "qa"),
    lang2=tuple(lang for lang in LANGS if lang != "Java"),
    build=("Maven", "Gradle", "poetry", "uv", "cargo", "make", "bazel"), ci=("GitHub Actions", "GitLab CI", "Jenkins"),
    test=("pytest", "JUnit 5", "go test", "jest", "vitest", "cargo test"), store_ver=("6.2", "7.2", "8.0", "15.4"),
    person=("张伟", "李娜", "王强", "陈静", "刘洋", "赵敏", "alice", "bob", "dave", "erin"),
    linter=("ruff", "eslint", "golangci-lint", "checkstyle", "mypy", "detekt", "clippy"),
    feature=("灰度发布", "限流", "新版结算页", "审计日志", "缓存预热"),
    feature_en=("dark mode", "rate limiting", "the new checkout", "audit logging"),
    event=("created", "updated", "cancelled", "paid"),
    path=("config/application.yml", "deploy/values.yaml", "settings.toml", "conf/app.properties", ".env.local"),
    n=("5", "10", "20", "50", "100", "200", "300", "600"), w=("88", "100", "120"), mm=("00", "15", "30", "45"),
)
TEMPLATES_ZH = (
    "{svc}在{env_zh}的端口是 {port}", "{store} 在{env_zh}监听 {port} 端口", "{svc}使用 {lang} {ver}，用 {build} 构建",
    "{svc}的 {store} 连接池大小设为 {n}", "{svc}的负责人是{person}，改动前先找他确认", "{store} 版本固定在 {store_ver}，升级前要评估",
    "{svc}的单元测试用 {test}，CI 跑在 {ci} 上", "{svc}的配置文件在 {path}", "环境变量 {ENV} 控制{svc}的{feature}",
    "{svc}调用{svc2}的超时时间是 {n} 毫秒，重试 {k} 次", "{svc}在 {store} 里的缓存过期时间是 {n} 秒",
    "{svc}的日志保留 {k} 天，之后归档", "{lang2} 代码行宽上限 {w} 列，用 {linter} 检查", "{svc}的接口限流是每秒 {n} 次",
    "{svc}部署到{env_test}走 {ci}，镜像推到 harbor.internal/{en}", "{person}负责{svc}的值班，告警发到 #{en}-alerts",
    "{svc}的数据库表名用 snake_case，主键统一叫 id", "{svc}的消息写到 {store} 的 {en}.{event}",
    "排查{svc}问题先看 Grafana 的 {en} 面板", "{svc}的定时任务每天 {hh}:{mm} 执行",
)
TEMPLATES_EN = (
    "{en} listens on port {port} in {env_en}", "{store} in {env_en} runs on port {port}",
    "{en} uses {lang} {ver} and builds with {build}", "{en}: {store} connection pool size is {n}",
    "{en} owner is {person}; ask before changing its schema", "{store} is pinned to version {store_ver}",
    "Tests for {en} use {test}; CI runs on {ci}", "Config for {en} lives in {path}",
    "The env var {ENV} toggles {feature_en} in {en}", "Timeout from {en} to {en2} is {n} ms with {k} retries",
    "Cache TTL for {en} in {store} is {n} seconds", "{en} keeps logs for {k} days",
    "{lang2} code: max line length {w}, checked by {linter}", "{en} rate limit is {n} requests per second",
    "Deploy {en} to {env_test_en} via {ci}; images go to harbor.internal/{en}",
    "{en} publishes events to the {store} topic {en}.{event}", "{en} cron job runs daily at {hh}:{mm}",
    "When debugging {en}, check its Grafana dashboard first", "Prefer {pref} over {alt} in {en}",
)
SUFFIXES = ("", "", "", "（{person}确认过）", "，见 {path}", " (confirmed by {person})", "; see docs/{en}.md")


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def fact_id(self) -> str:
        return f"fact-{self.rng.getrandbits(32):08x}"

    def entry(self, content: str, scope: str, max_age_days: float) -> Entry:
        when = NOW - timedelta(days=self.rng.uniform(0, max_age_days))
        fact = new_fact(content, scope=scope, project=PROJECT, now=when)
        return Entry(self.fact_id(), fact.content, fact.type, when, when, fact.metadata)

    def slots(self) -> dict[str, str]:
        r = self.rng
        (svc, en), (svc2, en2) = r.sample(SERVICES, 2)
        lang, (pref, alt) = r.choice(tuple(LANGS)), r.choice(PREFERENCES)
        return {**{k: r.choice(v) for k, v in W.items()}, "svc": svc, "en": en, "svc2": svc2, "en2": en2,
                "lang": lang, "ver": r.choice(LANGS[lang]), "pref": pref, "alt": alt,
                "port": str(r.randrange(3000, 9999)), "k": str(r.randrange(2, 31)), "hh": f"{r.randrange(24):02d}",
                "ENV": f"{en.upper().replace('-', '_')}_{r.choice(('FLAG', 'MODE', 'ENABLED'))}"}

    def distractor(self) -> Entry:
        s = self.slots()
        template = self.rng.choice(TEMPLATES_ZH if self.rng.random() < 0.5 else TEMPLATES_EN)
        content = (template + self.rng.choice(SUFFIXES)).format(**s)
        return self.entry(content, "project" if self.rng.random() < 0.7 else "global", 365)


@dataclass
class Corpus:
    entries: list[Entry]
    gold: dict[str, str]  # gold name -> entry id


def build_corpus(size: int) -> Corpus:
    """Gold memories and their near misses, then generated distractors up to ``size``, shuffled."""
    gen = Generator(SEED)
    gold, entries = {}, []
    for name, (content, scope, near) in GOLD.items():
        entry = gen.entry(content, scope, 200)
        gold[name] = entry.id
        entries += [entry, *(gen.entry(text, scope, 365) for text in near)]
    entries += [gen.distractor() for _ in range(size - len(entries))]
    gen.rng.shuffle(entries)
    return Corpus(entries, gold)


# -- measurements ----------------------------------------------------------------------------------
def timed(fn: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def p(values: list[float], q: float) -> float:
    """In ms: the median for q = 0.5, else the nearest-rank q-quantile."""
    if q == 0.5:
        return statistics.median(values) * 1e3
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)] * 1e3


def query_cycle() -> list[str]:
    return [q for q, _ in QUERIES] + list(EXTRA_QUERIES)


def search_times(memory: LongTermMemory, entries: list[Entry], runs: int) -> dict[str, list[float]]:
    queries = query_cycle()
    store = InMemoryStore()
    store.batch([PutOp(namespace_of(e), e.id, {k: v for k, v in to_json(e).items() if k != "id"}) for e in entries])

    def cycled(fn: Callable[[str], object]) -> list[float]:
        it = iter(queries * (runs // len(queries) + 1))
        return timed(lambda: fn(next(it)), runs)

    def scan(query: str) -> list[Entry]:
        low = query.lower()
        return [e for e in entries if low in e.content.lower()][:LIMIT]

    return {"ours": cycled(lambda q: memory.search(q, PROJECT, LIMIT)),
            "InMemoryStore": cycled(lambda q: store.search(("memories",), query=q, limit=LIMIT)),
            "substring scan": cycled(scan)}


def new_content(rng: random.Random) -> str:
    """A fresh fact no existing one duplicates or conflicts with (letters differ, not just numbers)."""
    svc, en = rng.choice(SERVICES)
    option = "_".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=8)) for _ in range(3))
    return rng.choice((f"{svc}新增配置项 {option}，默认关闭", f"{en} gained the option {option}"))


def write_times(directory: Path, entries: list[Entry], runs: int, rng: random.Random) -> dict[str, list[float]]:
    """One writer; two writers taking turns (each write re-parses); the plain-JSON baseline."""
    (directory / FILE_NAME).write_bytes(dump(entries))
    a = LongTermMemory(directory, MemoryOptions(sync=True))
    b = LongTermMemory(directory, MemoryOptions(sync=True))
    statuses: list[str] = []

    def save(memory: LongTermMemory) -> None:
        statuses.append(memory.save_fact(new_content(rng), scope="project", project_key=PROJECT).status.value)

    save(a)  # loads the file: not timed
    single = timed(lambda: save(a), runs)
    save(b)
    turns = timed(lambda: save(a if len(statuses) % 2 else b), runs)
    after = []
    a.search("warm-up", PROJECT, LIMIT)
    for _ in range(max(3, runs // 2)):  # a search right after our own write: a new candidate list
        save(a)
        after += timed(lambda: a.search(rng.choice(query_cycle()), PROJECT, LIMIT), 1)
    assert set(statuses) == {"STORED"}, statuses
    items = [to_json(e) for e in a.entries()]
    plain_dir = directory / "plain"
    plain_dir.mkdir()

    def plain() -> None:
        items.append(to_json(new_fact(new_content(rng), project=PROJECT)))
        fd, temp = tempfile.mkstemp(suffix=".tmp", dir=plain_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(items, out, ensure_ascii=False, indent=2)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, plain_dir / FILE_NAME)

    return {"ours": single, "ours, 2 writers": turns, "json.dump": timed(plain, runs), "search after": after}


def write_breakdown(directory: Path, runs: int, rng: random.Random) -> dict[str, float]:
    """Median ms of each part of a write, on the file write_times left behind."""
    data = (directory / FILE_NAME).read_bytes()
    entries = _parse(data)
    incoming = new_fact(new_content(rng), project=PROJECT)

    def sync_replace() -> None:
        fd, temp = tempfile.mkstemp(suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, directory / "breakdown.json")

    parts = {"dedup + conflict checks": lambda: (find_duplicate(entries, incoming), find_conflicts(entries, incoming)),
             "dump (to_json + json.dumps indent=2)": lambda: dump(entries),
             "temp file + fsync + replace": sync_replace,
             "re-parse (after another writer)": lambda: _parse(data)}
    return {name: statistics.median(timed(fn, runs)) * 1e3 for name, fn in parts.items()}


# -- recall ----------------------------------------------------------------------------------------
def keyword_only(entries: list[Entry], query: str, limit: int, now: datetime) -> list[str]:
    """The retriever's ranking without its cosine term: keyword share × decay, then newest."""
    low, tokens = query.lower(), tokenize(query)
    stamps = np.array([e.timestamp.timestamp() for e in entries])
    scores = np.array([keyword_score(low, tokens, e.content.lower()) for e in entries])
    scores *= decay_for_age((now.timestamp() - stamps) / 86_400)
    hits = np.nonzero(scores > 0)[0]
    return [entries[i].id for i in hits[np.lexsort((-stamps[hits], -scores[hits]))][:limit]]


RANKINGS = {
    "retriever": lambda memory, now: lambda q: [s.entry.id for s in memory.search(q, PROJECT, K, now=now)],
    "keyword only": lambda memory, now: lambda q: keyword_only(memory.entries(), q, K, now),
}


def recall(rank: Callable[[str], list[str]], corpus: Corpus) -> tuple[dict[str, float], list[str]]:
    """Mean recall@K per language and overall, and the queries with a relevant memory missing."""
    per: dict[str, list[float]] = {"zh": [], "en": []}
    misses = []
    for query, names in QUERIES:
        top = rank(query)[:K]
        found = sum(corpus.gold[n] in top for n in names) / len(names)
        per["en" if query.isascii() else "zh"].append(found)
        if found < 1:
            misses.append(query)
    result = {lang: statistics.mean(v) for lang, v in per.items()}
    result["all"] = statistics.mean(per["zh"] + per["en"])
    return result, misses


# -- report ----------------------------------------------------------------------------------------
@dataclass
class Row:
    size: int
    cold_ms: float
    search: dict[str, list[float]]
    writes: dict[str, list[float]]
    breakdown: dict[str, float]
    recall: dict[str, tuple[dict[str, float], list[str]]]


def measure(size: int, searches: int, writes: int) -> Row:
    corpus = build_corpus(size)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as where:
        directory = Path(where)
        (directory / "search").mkdir()
        (directory / "search" / FILE_NAME).write_bytes(dump(corpus.entries))
        memory = LongTermMemory(directory / "search", MemoryOptions(sync=True))
        cold = timed(lambda: memory.search("发票服务端口", PROJECT, LIMIT), 1)[0]  # the one warm-up query
        search = search_times(memory, memory.entries(), searches)
        recalls = {f"{name}{label}": recall(rank(memory, when), corpus)
                   for label, when in (("", NOW), (", decay flat", FLAT)) for name, rank in RANKINGS.items()}
        rng = random.Random(SEED + size)
        (directory / "write").mkdir()
        write = write_times(directory / "write", corpus.entries, writes, rng)
        breakdown = write_breakdown(directory / "write", max(3, writes // 2), rng)
    search["ours after a write"] = write.pop("search after")
    return Row(size, cold * 1e3, search, write, breakdown, recalls)


def table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    print(title)
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for r in (header, *rows):
        print("  " + "  ".join(f"{c:<{w}}" if i in (0, len(r) - 1) else f"{c:>{w}}"
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    print()


def target(row: Row, value: float, limit: float) -> str:
    return "" if row.size != SIZES[-1] else f"<= {limit:g} ms {'ok' if value <= limit else 'MISSED'}"


def report(rows: list[Row], show_misses: bool) -> None:
    search_rows, write_rows, recall_rows = [], [], []
    for r in rows:
        ours = p(r.search["ours"], 0.5)
        for name in ("ours", "InMemoryStore", "substring scan", "ours after a write"):
            v = r.search[name]
            ratio = f"{ours / p(v, 0.5):.1f}x" if name in ("InMemoryStore", "substring scan") else ""
            note = target(r, ours, TARGET_SEARCH_MS) if name == "ours" else ""
            search_rows.append((f"{r.size:,}", name, str(len(v)), f"{p(v, 0.5):.2f}", f"{p(v, 0.95):.2f}", ratio,
                                note))
        search_rows.append((f"{r.size:,}", "ours, first search (cold)", "1", f"{r.cold_ms:.0f}", "", "", ""))
        ours = p(r.writes["ours"], 0.5)
        for name, v in r.writes.items():
            ratio = f"{p(v, 0.5) / p(r.writes['json.dump'], 0.5):.1f}x" if name != "json.dump" else ""
            note = target(r, ours, TARGET_WRITE_MS) if name == "ours" else ""
            write_rows.append((f"{r.size:,}", name, str(len(v)), f"{p(v, 0.5):.1f}", f"{p(v, 0.95):.1f}", ratio, note))
        for name, (value, misses) in r.recall.items():
            shown = "; ".join(misses) if show_misses else f"{len(misses)} queries"
            recall_rows.append((f"{r.size:,}", name, *(f"{value[k]:.2f}" for k in ("zh", "en", "all")), shown))
    table(f"search: ms per query, limit {LIMIT}, warm process, {len(query_cycle())} queries cycled "
          "(ratio = ours / baseline p50)", ("memories", "search", "n", "p50", "p95", "ratio", "target"), search_rows)
    table("write: ms per explicit save_fact, fsync on (ratio = p50 / json.dump p50)",
          ("memories", "write", "n", "p50", "p95", "ratio", "target"), write_rows)
    print("where a write goes (median ms):")
    for r in rows:
        print(f"  {r.size:>6,}  " + "  ".join(f"{k} {v:.1f}" for k, v in r.breakdown.items()))
    print()
    n_zh = sum(not q.isascii() for q, _ in QUERIES)
    table(f"recall@{K}: {len(QUERIES)} labelled queries ({n_zh} zh, {len(QUERIES) - n_zh} en), "
          f"{sum(len(n) for _, n in QUERIES)} relevant memories planted with {sum(len(g[2]) for g in GOLD.values())} "
          "near misses", ("memories", "ranking", "zh", "en", "all", "missed (run with --misses to list)"), recall_rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples (about 15 s)")
    parser.add_argument("--misses", action="store_true", help="list the queries each ranking missed")
    args = parser.parse_args()
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()  # the dictionary load is start-up cost, not a search's
    searches, writes = (40, 4) if args.quick else (300, 15)
    started = time.perf_counter()
    rows = [measure(size, searches, writes) for size in SIZES]
    report(rows, args.misses)
    print(f"total {time.perf_counter() - started:.0f} s; files on {os.path.realpath(tempfile.gettempdir())}")


if __name__ == "__main__":
    main()
