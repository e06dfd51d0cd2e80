"""Issue 16's evaluation set: memories asked about in other words and in the other language.

Memories of one developer's projects (most in Chinese, some in English), each planted with
hand-written look-alikes that share its words but answer something else, among generated
distractors (``memory_corpus.Generator`` plus templates like "X 服务使用 Y 作为数据库", the
look-alikes that buried the right answer before). Questions of five kinds:

- ``zh``: a Chinese paraphrase of a Chinese memory ("主库是什么数据库？");
- ``en-zh``: an English question about a Chinese memory;
- ``zh-en``: a Chinese question about an English memory;
- ``pref``: the user's preferences ("回答用什么语言");
- ``me``: about the user ("我的技术背景").

Three parts:
- ``tune`` (``QUESTIONS``, 120): looked at while the thesaurus and the weights were made; it began
  as half tune, half measured, and once the measured half had been looked at it was folded in.
- ``seen`` (``SEEN``, 55): written as the blind part before the second round of tuning and
  measured once (recall@5 zh 0.83 at 1k, 0.75 at 10k: short of the target); its misses were then
  read, so it became a tune part too.
- ``blind`` (``recall_blind.QUESTIONS``, 113, and 25 more memories with their look-alikes):
  written on 2026-12-01 by another engineer who read neither the ranker nor the thesaurus, before
  the third round of tuning; measured once at the end. Its misses are never printed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from paicli.memory.longterm.entry import Entry

from memory_corpus import NOW, SEED, SERVICES, W, Generator
from recall_blind import MEMORIES as BLIND_MEMORIES
from recall_blind import QUESTIONS as BLIND

# name: (content, scope, look-alikes that share its words but answer something else)
MEMORIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "pg-main": ("项目使用 PostgreSQL 15 作为主数据库", "project",
                ("报表服务使用 ClickHouse 作为分析数据库", "PostgreSQL 的慢查询日志阈值是 500 毫秒")),
    "vite": ("前端构建工具是 Vite 5", "project", ("前端的 ESLint 配置在 apps/web/.eslintrc.cjs", "前端构建产物上传到 CDN")),
    "mobile-rn": ("移动端用 React Native 开发，iOS 和 Android 共用一套代码", "project",
                  ("移动端的埋点 SDK 由数据组维护", "iOS 证书每年三月续期")),
    "token-ttl": ("token 有效期 2 小时，过期后用 refresh token 续期", "project",
                  ("短信验证码 5 分钟内有效", "第三方 API token 存在 Vault 里")),
    "maven-repo": ("Maven 仓库地址是 https://nexus.internal/repository/maven-public", "project",
                   ("npm 私有源地址是 https://npm.internal", "Maven 构建时加 -DskipITs 跳过集成测试")),
    "flyway": ("数据库迁移用 Flyway 管理，每次改表都新增一个 V 开头的脚本", "project",
               ("数据库连接池用 HikariCP，最大 50 个连接", "迁移到新机房的计划推迟到明年")),
    "ci-gha": ("CI 用 GitHub Actions，配置在 .github/workflows/ci.yml", "project",
               ("流水线失败时会在飞书群里通知", "Jenkins 只给老的报表项目用")),
    "db-tz": ("数据库里的时间字段统一存 UTC，展示时按用户所在时区转换", "project",
              ("服务器时间用 NTP 同步", "订单服务使用 MySQL 作为数据库")),
    "me-backend": ("用户是后端工程师，熟悉 Go 和 Java", "global",
                   ("用户服务的后端接口用 Go 编写", "Java 服务的 GC 日志放在 /var/log/gc")),
    "redis-cache": ("缓存用 Redis 7 集群，key 统一加 shop: 前缀", "project",
                    ("Redis 的慢日志每周清理一次", "本地开发不启用缓存预热")),
    "kafka": ("订单事件通过 Kafka 发送，topic 是 order.events", "project",
              ("Kafka 集群由中间件组运维", "订单表按月分区")),
    "es": ("商品搜索基于 Elasticsearch 8，索引名 products_v3", "project",
           ("搜索框的联想词每天凌晨更新", "Elasticsearch 集群磁盘水位告警阈值是 85%")),
    "oss": ("图片等静态文件存到阿里云 OSS 的 shop-assets 桶", "project",
            ("用户头像最大 2 MB", "阿里云账号由运维统一管理")),
    "prometheus": ("监控用 Prometheus + Grafana，告警规则在 ops/alerts.yml", "project",
                   ("Grafana 的管理员账号找运维要", "告警短信每月限额 1000 条")),
    "log-json": ("日志统一输出 JSON 格式，用 logback，采集到 ELK", "project",
                 ("日志级别在生产环境默认 INFO", "审计日志单独存一张表")),
    "sentry": ("线上异常上报到 Sentry，项目名 shop-backend", "project",
               ("异常处理统一用 GlobalExceptionHandler", "线上问题复盘文档放在 Confluence")),
    "k8s-ns": ("生产环境部署在 Kubernetes 的 shop-prod 命名空间", "project",
               ("测试环境部署在 Kubernetes 的 shop-test 命名空间", "生产环境的数据库只读账号是 ro_user")),
    "helm": ("部署用 Helm chart，chart 在 deploy/charts/shop", "project",
             ("部署窗口是每周二和周四下午", "chart 的版本号跟应用版本一致")),
    "canary": ("上线采用灰度发布，先放 5% 流量观察半小时", "project",
               ("流量高峰在晚上 8 点到 10 点", "上线前要在群里发公告")),
    "rollback": ("发布出问题时用 helm rollback 回滚到上一个版本", "project",
                 ("数据库变更不支持自动回滚", "发布记录在 Jira 的 Release 页面")),
    "sso": ("登录走公司统一 SSO，基于 OAuth2 + OIDC", "project",
            ("登录页的背景图由设计组提供", "OAuth2 的回调地址要在白名单里登记")),
    "rbac": ("权限模型是 RBAC，角色定义在 auth/roles.yaml", "project",
             ("文件权限统一是 644", "角色名用大写下划线")),
    "bcrypt": ("用户密码用 bcrypt 加密存储，cost 为 12", "project",
               ("数据库密码放在 Vault 里", "密码输错 5 次锁定 30 分钟")),
    "junit": ("后端单测用 JUnit 5 + Mockito，覆盖率要求 80% 以上", "project",
              ("后端接口文档用 Swagger 生成", "覆盖率报告发到 SonarQube")),
    "playwright": ("端到端测试用 Playwright，跑在 nightly 流水线里", "project",
                   ("nightly 构建失败会发邮件", "测试账号的密码在 1Password 里")),
    "k6": ("压测用 k6，脚本在 perf/ 目录", "project", ("perf/ 目录下还有火焰图工具", "大促前两周封网")),
    "review": ("代码评审至少一人通过，评审意见都要回复后才能合并", "project",
               ("合并后自动删除源分支", "代码风格问题交给格式化工具，不在评审里争论")),
    "trunk": ("分支策略是 trunk-based，功能分支不超过三天", "project",
              ("分支名用小写加中划线", "三天内没人处理的 issue 会自动提醒")),
    "hotfix": ("紧急修复从 release 分支拉 hotfix/ 开头的分支", "project",
               ("release 分支在发版后保留一个月", "修复线上 bug 要补回归测试")),
    "semver": ("版本号遵循语义化版本，打 tag 后自动发布", "project",
               ("tag 只能由负责人打", "版本发布说明由产品写")),
    "changelog": ("每次发版都要更新 CHANGELOG.md", "project", ("README 里的徽章不用手动更新",)),
    "pnpm": ("前端是 pnpm monorepo，各个包在 packages/ 下", "project",
             ("packages/ui 是公共组件库", "前端 node_modules 不要提交")),
    "tailwind": ("样式用 Tailwind CSS，不要写行内 style", "project", ("设计稿在 Figma 上", "深色模式下次迭代再做")),
    "zustand": ("前端状态管理用 Zustand，不用 Redux", "project", ("Redux DevTools 插件可以卸载了", "前端路由用 React Router 6")),
    "i18n": ("国际化文案放在 locales/ 目录，默认语言是简体中文", "project",
             ("locales/ 目录的翻译由外包维护", "简体中文文案由产品审核")),
    "kong": ("所有外部请求经过 Kong 网关，限流也在网关配置", "project",
             ("内部服务之间不经过网关", "网关的 SSL 证书由运维续期")),
    "grpc": ("服务之间用 gRPC 通信，proto 文件放在 api/proto", "project",
             ("对外接口是 REST", "proto 字段编号不能复用")),
    "docker-base": ("镜像的基础镜像统一用 eclipse-temurin:21-jre", "project",
                    ("镜像推到 harbor.internal/shop", "Dockerfile 里不要装 curl")),
    "vault": ("密钥和密码放在 HashiCorp Vault 里，禁止写进代码仓库", "project",
              ("代码仓库开了分支保护", "Vault 的 root token 只有两个人有")),
    "backup": ("数据库每天凌晨 2 点全量备份，保留 7 天", "project",
               ("数据库每天凌晨 3 点跑统计任务", "备份机房在北京")),
    "xxl-job": ("定时任务用 XXL-JOB 调度，任务都注册在调度中心", "project",
                ("任务中心的 UI 是另一个团队做的", "调度服务的负责人是李娜")),
    "ruff": ("Python 代码用 ruff 做检查和格式化", "project", ("Python 脚本放在 scripts/ 下", "类型检查暂时不强制")),
    "ide": ("用户平时用 IntelliJ IDEA 写代码", "global", ("项目的 .idea 目录不提交",)),
    "pref-chinese": ("用户希望回答用中文，专业术语保留英文", "global", ("错误信息要带英文错误码",)),
    "pref-brief": ("用户喜欢简洁的回答，先给结论再解释", "global", ("周报先写结论再写细节",)),
    "pref-no-emoji": ("用户不喜欢在代码注释里用 emoji", "global", ("提交信息里可以用 gitmoji",)),
    "pref-spaces": ("用户习惯用 4 个空格缩进，不用 tab", "global", ("Makefile 必须用 tab",)),
    "pref-confirm": ("用户要求改动数据库之前先征求他的同意", "global", ("数据库改动要走变更单",)),
    "me-lead": ("用户是这个项目的技术负责人，负责架构设计", "global", ("架构设计文档放在 docs/adr",)),
    "me-city": ("用户在上海办公，工作时间是早 9 点到晚 7 点", "global", ("公司总部在杭州",)),
    "me-rust": ("用户正在学习 Rust，还不太熟悉生命周期", "global", ("Rust 服务用 tokio 做异步",)),
    "me-mac": ("用户的开发机是 MacBook Pro，系统是 macOS", "global", ("CI 机器是 Ubuntu 22.04",)),
    "en-replica": ("Read traffic goes to a MySQL read replica; writes go to the primary", "project",
                   ("MySQL slow query log threshold is 1 second",)),
    "en-rabbit": ("Notification jobs are queued in RabbitMQ with a dead-letter queue for failures", "project",
                  ("Notification templates live in templates/notify",)),
    "en-unleash": ("Feature toggles are managed in Unleash", "project", ("Dead feature code is removed after two sprints",)),
    "en-staging": ("The staging environment is at https://staging.shop.internal", "project",
                   ("Staging data is reset every Sunday",)),
    "en-oncall": ("On-call rotation is weekly and the schedule lives in PagerDuty", "project",
                  ("PagerDuty alerts also go to the #ops channel",)),
    "en-jira": ("Every pull request must link a Jira ticket in its description", "project",
                ("Jira tickets are groomed on Mondays",)),
    "en-vitest": ("Frontend unit tests use Vitest; coverage must stay above 70%", "project",
                  ("Frontend lint runs on every commit",)),
    "en-webpack": ("The legacy admin panel still builds with Webpack 4", "project",
                   ("The legacy admin panel will be retired next year",)),
    "en-cdn": ("Static assets are served through Cloudflare CDN with a 1-day cache", "project",
               ("Cloudflare DNS is managed by the ops team",)),
    "en-ratelimit": ("The public API is rate limited to 100 requests per minute per API key", "project",
                     ("API keys are rotated every 90 days",)),
    "en-tdd": ("The user wants a failing test written before the fix", "global",
               ("Flaky tests are quarantined, not deleted",)),
    "en-data-bg": ("The user came from a data engineering background (Spark, Airflow)", "global",
                   ("Airflow DAGs for reports live in another repo",)),
    "en-mysql-utf8": ("All MySQL tables use utf8mb4 with the utf8mb4_0900_ai_ci collation", "project",
                      ("MySQL runs version 8.0 in every environment",)),
    "en-sql-review": ("Schema changes need a DBA review before they are merged", "project",
                      ("The DBA team sits in Beijing",)),
    # added with the second blind part (``SEEN``), asked about only there
    "apifox": ("接口文档用 Apifox 维护，项目名 shop-api", "project",
               ("Apifox 的团队席位由行政采购", "接口文档的截图不要放进仓库")),
    "compose": ("本地开发用 docker compose 启动依赖服务，配置在 dev/compose.yaml", "project",
                ("本地开发的数据库端口是 5433", "docker compose 文件里不要写密码")),
    "commits": ("提交信息遵循 Conventional Commits 规范，例如 feat: 和 fix: 前缀", "project",
                ("提交前会跑 pre-commit 钩子", "提交记录超过 50 条的 PR 要拆分")),
    "en-pgbouncer": ("Database connections go through PgBouncer in transaction mode", "project",
                     ("PgBouncer logs are shipped to Loki",)),
}

# (question, the memories it should find, kind)
QUESTIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # -- Chinese paraphrases of Chinese memories
    ("主库是什么数据库？", ("pg-main",), "zh"),
    ("前端用什么打包？", ("vite",), "zh"),
    ("手机端用什么技术栈开发", ("mobile-rn",), "zh"),
    ("登录令牌多久过期", ("token-ttl",), "zh"),
    ("私服地址是多少", ("maven-repo",), "zh"),
    ("表结构变更怎么做", ("flyway",), "zh"),
    ("持续集成用的是哪个平台", ("ci-gha",), "zh"),
    ("数据库里的时间用哪个时区", ("db-tz",), "zh"),
    ("缓存中间件是什么", ("redis-cache",), "zh"),
    ("订单消息走哪个消息队列", ("kafka",), "zh"),
    ("全文检索用的什么引擎", ("es",), "zh"),
    ("图片上传到哪个对象存储", ("oss",), "zh"),
    ("服务的指标和看板用什么", ("prometheus",), "zh"),
    ("日志是什么格式，收集到哪里", ("log-json",), "zh"),
    ("线上报错在哪里看", ("sentry",), "zh"),
    ("正式环境的 k8s namespace 叫什么", ("k8s-ns",), "zh"),
    ("上线新版本怎么控制放量", ("canary",), "zh"),
    ("版本发坏了怎么退回去", ("rollback",), "zh"),
    ("单点登录用的什么协议", ("sso",), "zh"),
    ("访问控制怎么设计的", ("rbac",), "zh"),
    ("用户口令怎么存", ("bcrypt",), "zh"),
    ("后端单元测试框架", ("junit",), "zh"),
    ("E2E 测试工具是什么", ("playwright",), "zh"),
    ("性能测试用什么工具", ("k6",), "zh"),
    ("MR 合并需要满足什么条件", ("review",), "zh"),
    ("我们的分支模型", ("trunk",), "zh"),
    ("线上紧急 bug 的修复分支从哪拉", ("hotfix",), "zh"),
    ("发版的版本号怎么定", ("semver",), "zh"),
    ("发布时要更新哪个变更日志", ("changelog",), "zh"),
    ("前端包管理器和仓库结构", ("pnpm",), "zh"),
    ("CSS 怎么写", ("tailwind",), "zh"),
    ("前端全局状态用什么库", ("zustand",), "zh"),
    ("多语言文案放哪", ("i18n",), "zh"),
    ("API 网关是哪个", ("kong",), "zh"),
    ("微服务之间怎么调用", ("grpc",), "zh"),
    ("Dockerfile 的 FROM 用哪个", ("docker-base",), "zh"),
    ("凭据应该存在哪里", ("vault",), "zh"),
    ("数据库多久备份一次", ("backup",), "zh"),
    ("定时作业用什么框架", ("xxl-job",), "zh"),
    ("Python 的 lint 工具", ("ruff",), "zh"),
    ("应用发布到集群用什么工具", ("helm",), "zh"),
    ("订单事件的主题名", ("kafka",), "zh"),
    ("商品检索的索引叫什么", ("es",), "zh"),
    # -- English questions about Chinese memories
    ("which database does the main service use", ("pg-main",), "en-zh"),
    ("frontend bundler", ("vite",), "en-zh"),
    ("kubernetes namespace for production", ("k8s-ns",), "en-zh"),
    ("how long is the login token valid", ("token-ttl",), "en-zh"),
    ("where is the private maven repository", ("maven-repo",), "en-zh"),
    ("how do we run database migrations", ("flyway",), "en-zh"),
    ("what do we use for continuous integration", ("ci-gha",), "en-zh"),
    ("which timezone are timestamps stored in", ("db-tz",), "en-zh"),
    ("what cache do we use", ("redis-cache",), "en-zh"),
    ("which message queue carries order events", ("kafka",), "en-zh"),
    ("search engine for products", ("es",), "en-zh"),
    ("where are uploaded images stored", ("oss",), "en-zh"),
    ("monitoring and alerting stack", ("prometheus",), "en-zh"),
    ("log format", ("log-json",), "en-zh"),
    ("error tracking tool", ("sentry",), "en-zh"),
    ("how do we roll back a bad release", ("rollback",), "en-zh"),
    ("gradual rollout strategy", ("canary",), "en-zh"),
    ("authentication protocol for login", ("sso",), "en-zh"),
    ("how are passwords hashed", ("bcrypt",), "en-zh"),
    ("backend unit testing framework", ("junit",), "en-zh"),
    ("load testing tool", ("k6",), "en-zh"),
    ("code review rules before merging", ("review",), "en-zh"),
    ("branching strategy", ("trunk",), "en-zh"),
    ("state management library in the frontend", ("zustand",), "en-zh"),
    ("where do translations live", ("i18n",), "en-zh"),
    ("which api gateway", ("kong",), "en-zh"),
    ("how do services talk to each other", ("grpc",), "en-zh"),
    ("docker base image", ("docker-base",), "en-zh"),
    ("where are secrets stored", ("vault",), "en-zh"),
    ("how often is the database backed up", ("backup",), "en-zh"),
    ("where is the helm chart", ("helm",), "en-zh"),
    ("how to fix an urgent production bug", ("hotfix",), "en-zh"),
    ("which css framework do we use", ("tailwind",), "en-zh"),
    # -- Chinese questions about English memories
    ("读写分离怎么做的", ("en-replica",), "zh-en"),
    ("通知任务用什么队列", ("en-rabbit",), "zh-en"),
    ("功能开关在哪里管理", ("en-unleash",), "zh-en"),
    ("预发环境的地址", ("en-staging",), "zh-en"),
    ("值班表在哪里看", ("en-oncall",), "zh-en"),
    ("合并请求要关联什么", ("en-jira",), "zh-en"),
    ("前端单测框架和覆盖率要求", ("en-vitest",), "zh-en"),
    ("老后台用什么打包", ("en-webpack",), "zh-en"),
    ("静态资源走哪个内容分发网络", ("en-cdn",), "zh-en"),
    ("开放接口的限流是多少", ("en-ratelimit",), "zh-en"),
    ("MySQL 表的字符集", ("en-mysql-utf8",), "zh-en"),
    ("改表结构需要谁审核", ("en-sql-review",), "zh-en"),
    ("从库承担什么流量", ("en-replica",), "zh-en"),
    ("消息发送失败的消息去哪了", ("en-rabbit",), "zh-en"),
    ("灰度开关用什么平台", ("en-unleash",), "zh-en"),
    ("CDN 缓存多久", ("en-cdn",), "zh-en"),
    ("线上值班多久轮换一次", ("en-oncall",), "zh-en"),
    ("老管理后台的构建工具版本", ("en-webpack",), "zh-en"),
    ("接口每分钟能调用多少次", ("en-ratelimit",), "zh-en"),
    ("数据库排序规则用哪个", ("en-mysql-utf8",), "zh-en"),
    # -- preferences
    ("回答用什么语言", ("pref-chinese",), "pref"),
    ("我喜欢什么样的回答风格", ("pref-brief",), "pref"),
    ("注释里能不能加表情符号", ("pref-no-emoji",), "pref"),
    ("缩进用空格还是制表符", ("pref-spaces",), "pref"),
    ("动数据库前要注意什么", ("pref-confirm",), "pref"),
    ("how should I write tests when fixing a bug", ("en-tdd",), "pref"),
    ("what language should you answer in", ("pref-chinese",), "pref"),
    ("does the user want long explanations", ("pref-brief",), "pref"),
    ("tabs or spaces", ("pref-spaces",), "pref"),
    ("修 bug 时测试先写还是后写", ("en-tdd",), "pref"),
    ("我用什么编辑器", ("ide",), "pref"),
    ("which IDE do I use", ("ide",), "pref"),
    # -- about the user
    ("我的技术背景", ("me-backend",), "me"),
    ("我擅长哪些编程语言", ("me-backend",), "me"),
    ("我在项目里是什么角色", ("me-lead",), "me"),
    ("我在哪个城市上班", ("me-city",), "me"),
    ("我的工作时间", ("me-city",), "me"),
    ("我在学什么新语言", ("me-rust",), "me"),
    ("我用的什么电脑", ("me-mac",), "me"),
    ("what is my background", ("me-backend", "en-data-bg"), "me"),
    ("what languages am I good at", ("me-backend",), "me"),
    ("what is my role on this project", ("me-lead",), "me"),
    ("what operating system is my laptop", ("me-mac",), "me"),
    ("我以前做过什么方向", ("en-data-bg",), "me"),
)

# The second blind part, now seen: written after the tune and measured parts had both been looked
# at, measured once, then read (see the module docstring).
SEEN: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("核心业务数据存在哪种关系型数据库", ("pg-main",), "zh"),
    ("Web 端项目靠什么编译打包", ("vite",), "zh"),
    ("App 是原生开发还是跨平台", ("mobile-rn",), "zh"),
    ("登录态能保持多长时间", ("token-ttl",), "zh"),
    ("Java 依赖从哪个制品库拉取", ("maven-repo",), "zh"),
    ("加字段的 SQL 脚本怎么管理", ("flyway",), "zh"),
    ("每次提交后自动跑的构建流水线在哪配置", ("ci-gha",), "zh"),
    ("键值缓存的 key 有什么命名规范", ("redis-cache",), "zh"),
    ("下单以后产生的事件发到哪里", ("kafka",), "zh"),
    ("商品图片存在哪个 bucket", ("oss",), "zh"),
    ("报警配置写在哪个文件", ("prometheus",), "zh"),
    ("生产上的崩溃和报错上报到哪个平台", ("sentry",), "zh"),
    ("k8s 发布用的模板包放在哪个目录", ("helm",), "zh"),
    ("PR 需要几个人批准才能合", ("review",), "zh"),
    ("特性分支最长能存在多久", ("trunk",), "zh"),
    ("页面样式用什么方案", ("tailwind",), "zh"),
    ("界面默认显示哪种语言", ("i18n",), "zh"),
    ("容器里跑的是哪个 Java 运行时", ("docker-base",), "zh"),
    ("计划任务用什么平台跑", ("xxl-job",), "zh"),
    ("内部接口用什么 RPC 框架", ("grpc",), "zh"),
    ("对外流量的入口是什么组件", ("kong",), "zh"),
    ("API 文档在哪个工具里写", ("apifox",), "zh"),
    ("在自己机器上怎么把依赖的中间件跑起来", ("compose",), "zh"),
    ("提交说明有什么格式要求", ("commits",), "zh"),
    ("where does the core business data live", ("pg-main",), "en-zh"),
    ("what framework is the mobile app built with", ("mobile-rn",), "en-zh"),
    ("where are order events published", ("kafka",), "en-zh"),
    ("which index holds the product catalog", ("es",), "en-zh"),
    ("where are production exceptions reported", ("sentry",), "en-zh"),
    ("how are permissions modelled", ("rbac",), "en-zh"),
    ("end-to-end test framework", ("playwright",), "en-zh"),
    ("how long can a feature branch live", ("trunk",), "en-zh"),
    ("which package manager does the frontend use", ("pnpm",), "en-zh"),
    ("what schedules our cron jobs", ("xxl-job",), "en-zh"),
    ("python linter and formatter", ("ruff",), "en-zh"),
    ("where is the API documentation maintained", ("apifox",), "en-zh"),
    ("commit message convention", ("commits",), "en-zh"),
    ("读请求打到哪个库", ("en-replica",), "zh-en"),
    ("推送通知的任务排在什么队列里", ("en-rabbit",), "zh-en"),
    ("特性开关用什么工具", ("en-unleash",), "zh-en"),
    ("PR 描述里要带什么链接", ("en-jira",), "zh-en"),
    ("静态文件通过什么加速", ("en-cdn",), "zh-en"),
    ("数据库结构变更要谁批准", ("en-sql-review",), "zh-en"),
    ("数据库连接池代理用什么", ("en-pgbouncer",), "zh-en"),
    ("前端单元测试的覆盖率门槛", ("en-vitest",), "zh-en"),
    ("写注释时有什么忌讳", ("pref-no-emoji",), "pref"),
    ("can you change the database without asking me first", ("pref-confirm",), "pref"),
    ("should answers start with the conclusion", ("pref-brief",), "pref"),
    ("how wide is my indentation", ("pref-spaces",), "pref"),
    ("先写测试再修复吗", ("en-tdd",), "pref"),
    ("what city am I based in", ("me-city",), "me"),
    ("我几点下班", ("me-city",), "me"),
    ("which language am I currently learning", ("me-rust",), "me"),
    ("我的电脑装的什么系统", ("me-mac",), "me"),
    ("谁负责这个项目的架构", ("me-lead",), "me"),
)

# Look-alikes share a question's words but answer something else ("X 服务使用 Y 作为数据库" for a
# question about time zones); none names another service's answer to the same question, which
# no ranking could tell from the right one without knowing which service the user means.
ZH_TEMPLATES = ("{svc}使用 {store} 作为数据库", "{svc}的数据库连接数上限是 {n}", "{svc}的前端打包耗时 {n} 秒",
                "{svc}的缓存过期时间是 {n} 秒", "{svc}的时间字段存成时间戳", "{svc}的 CI 失败时通知{person}",
                "{svc}的登录接口超时 {n} 毫秒", "{svc}部署在{env_test}的 {en} 命名空间",
                "{svc}的 {mq} 消息积压超过 {n} 条时告警")
EN_TEMPLATES = ("{en} backs up its {store} data daily", "{en} frontend bundle size budget is {n} KB",
                "{en} retries failed {mq} messages {k} times", "{en} is deployed to the {en}-{env_test_en} namespace")
FE, MQ = ("webpack", "rollup", "esbuild", "parcel"), ("Kafka", "RabbitMQ", "RocketMQ", "NATS")


@dataclass
class RecallSet:
    entries: list[Entry]
    gold: dict[str, str]  # memory name -> entry id


def questions() -> list[tuple[str, tuple[str, ...], str, str]]:
    """(question, gold names, kind, part) for the three parts (see the module docstring)."""
    return ([(question, gold, kind, "tune") for question, gold, kind in QUESTIONS]
            + [(question, gold, kind, "seen") for question, gold, kind in SEEN]
            + [(question, gold, kind, "blind") for question, gold, kind in BLIND])


def build(size: int) -> RecallSet:
    """The memories, their look-alikes, then generated distractors up to ``size``, shuffled."""
    gen = Generator(SEED + 16)
    gold, entries = {}, []
    for name, (content, scope, near) in (MEMORIES | BLIND_MEMORIES).items():
        entry = gen.entry(content, scope, 200)
        gold[name] = entry.id
        entries += [entry, *(gen.entry(text, scope, 365) for text in near)]
    rng = random.Random(SEED + 17)
    while len(entries) < size:
        if rng.random() < 0.3:
            (svc, en), slots = rng.choice(SERVICES), {k: rng.choice(v) for k, v in W.items()}
            template = rng.choice(ZH_TEMPLATES + EN_TEMPLATES)
            text = template.format(svc=svc, en=en, fe=rng.choice(FE), mq=rng.choice(MQ), k=rng.randrange(2, 9),
                                   **slots)
            entries.append(gen.entry(text, "project", 365))
        else:
            entries.append(gen.distractor())
    rng.shuffle(entries)
    return RecallSet(entries, gold)


assert len(QUESTIONS) == 120, len(QUESTIONS)
assert len(MEMORIES) >= 60
assert not MEMORIES.keys() & BLIND_MEMORIES.keys()
assert all(g in MEMORIES | BLIND_MEMORIES for _, names, _ in QUESTIONS + SEEN + BLIND for g in names)
assert len({q for q, _, _ in QUESTIONS + SEEN + BLIND}) == len(QUESTIONS) + len(SEEN) + len(BLIND)
assert NOW
