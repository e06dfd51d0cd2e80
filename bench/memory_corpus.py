"""The data ``bench/memory.py`` runs on: a labelled query set and generated distractors.

27 queries (14 Chinese, 13 English) and the memories they should find, each planted with
hand-written near misses that share its words, among distractor memories generated with a fixed
seed from developer-fact templates (ports, versions, build and test tools, owners, timeouts,
preferences), written over the last year. Every memory is visible to ``PROJECT``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from paicli.memory.longterm.entry import Entry, new_fact, normalize_project_key

SEED = 20261129
PROJECT = normalize_project_key("/home/dev/shop")
NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)

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
