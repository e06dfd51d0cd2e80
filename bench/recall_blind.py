"""Issue 16's second blind part: new memories and new questions, never tuned on.

Written on 2026-12-01 by an engineer who did not work on the ranker, before its further tuning,
without reading the thesaurus or the retriever and without running either on these questions.
The lead engineer does not read it before it is measured once; it is never tuned on, and its
misses are never printed (only the counts per kind), so it keeps measuring whether the retriever
generalizes to wording and facts nobody tuned for.

25 new memories of the same developer's projects and of the user (19 in Chinese, 6 in English),
each with hand-written look-alikes that share its words but answer something else, and questions
of the same five kinds as ``recall_set`` (``zh``, ``en-zh``, ``zh-en``, ``pref``, ``me``), about
these memories and about ``recall_set.MEMORIES``, worded apart from every question there. Each
question has one right answer among both sets of memories and their look-alikes. Plain data:
``recall_set`` wires it in and checks that every gold name exists.
"""

from __future__ import annotations

# name: (content, scope, look-alikes that share its words but answer something else)
MEMORIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # -- the projects, in Chinese
    "nacos": ("应用配置放在 Nacos 配置中心，按环境分命名空间", "project",
              ("Nacos 集群由中间件组维护", "配置项的 key 用小写加点号")),
    "fe-proxy": ("前端本地开发时 /api 开头的请求代理到 localhost:8080 的后端", "project",
                 ("后端本地启动要加 --spring.profiles.active=dev", "前端本地端口被占用时会自动换一个")),
    "jumpserver": ("登录生产服务器必须经过 JumpServer 堡垒机，不允许直连 SSH", "project",
                   ("堡垒机账号的密码 90 天改一次", "测试服务器可以用个人密钥直接 SSH")),
    "standup": ("每天上午 10 点在飞书视频开站会，控制在 15 分钟内", "project",
                ("周会在每周一下午 3 点", "飞书群里不要发大文件")),
    "layers": ("后端分层是 controller、service、repository，业务逻辑只写在 service 层", "project",
               ("repository 层的方法名以 find 或 save 开头", "controller 的路径用复数名词")),
    "testcontainers": ("集成测试用 Testcontainers 拉起真实的 PostgreSQL，不用 H2 内存库", "project",
                       ("集成测试在 CI 里是单独的 job", "H2 只在老的演示项目里用")),
    "app-review": ("iOS 提审前要先在 TestFlight 上内测三天，没问题再提交 App Store", "project",
                   ("TestFlight 的内测名单由测试组维护", "安卓渠道包用 Walle 打")),
    "p99": ("后端接口的 P99 延迟要求在 300 毫秒以内", "project",
            ("首页接口加了本地缓存", "慢接口每周在周会上过一遍")),
    "lighthouse": ("首页首屏要在 2 秒内加载完，Lighthouse 性能分不低于 90", "project",
                   ("Lighthouse 报告存在 CI 的构建产物里", "首页轮播图由运营后台配置")),
    "dw-hive": ("业务库数据每天凌晨用 DataX 同步到 Hive 数仓，报表数据是 T+1 的", "project",
                ("Hive 表按天分区", "报表导出上限是 10 万行")),
    "pii-mask": ("日志里的手机号和身份证号必须脱敏，只保留后四位", "project",
                 ("手机号登录要先过图形验证码", "身份证号在数据库里加密存储")),
    "renovate": ("依赖升级由 Renovate 机器人每周一自动提 PR", "project",
                 ("Renovate 不自动升级大版本", "引入新的第三方依赖前要在群里说明用途")),
    "orm": ("持久层用 MyBatis-Plus，不用 JPA 和 Hibernate", "project",
            ("Mapper 的 XML 文件放在 resources/mapper 下", "实体类用 Lombok 生成 getter")),
    "api-envelope": ("接口统一返回 {code, message, data} 结构，code 为 0 表示成功", "project",
                     ("错误码表在 docs/error-codes.md", "接口字段名用小驼峰")),
    "test-host": ("测试环境的接口域名是 https://api-test.shop.internal", "project",
                  ("测试环境的域名证书是自签的", "测试环境只能在公司内网访问")),
    # -- the user, in Chinese
    "pref-git-cli": ("用户习惯在终端里敲 git 命令，不用图形化的 Git 客户端", "global",
                     ("终端配色用 Solarized",)),
    "pref-naming": ("用户希望变量和函数名用完整的英文单词，不要缩写", "global",
                    ("数据库表名用小写下划线", "常量名用全大写")),
    "me-team": ("用户带一个 6 人的后端小组，每两周和组员一对一沟通", "global",
                ("前端组有 4 个人", "一对一沟通的记录不要发到群里")),
    "me-cka": ("用户考过 CKA 证书，对 Kubernetes 运维比较熟", "global", ("团队里还没人考过 CKS",)),
    # -- in English
    "en-node": ("The web frontend requires Node.js 20; the version is pinned in .nvmrc", "project",
                ("Node scripts for the build live in tools/",)),
    "en-pr-size": ("Pull requests should stay under 400 changed lines; split bigger ones", "project",
                   ("PR titles must be written in English",)),
    "en-tracing": ("Distributed tracing uses SkyWalking; production samples 10% of requests", "project",
                   ("The SkyWalking UI is only reachable over the VPN",)),
    "en-storybook": ("Shared UI components are documented in Storybook at https://storybook.shop.internal",
                     "project", ("Storybook builds are skipped for draft pull requests",)),
    "en-android-min": ("The Android app supports Android 7.0 (API level 24) and above", "project",
                       ("The iOS app supports iOS 14 and above",)),
    "en-pref-diff": ("The user wants code changes shown as a diff, not the whole rewritten file", "global",
                     ("Generated files are excluded from the diff in code review",)),
}

# (question, the memories it should find, kind)
QUESTIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # -- Chinese paraphrases of the new Chinese memories
    ("改线上配置要去哪个平台", ("nacos",), "zh"),
    ("配置中心用的是哪个", ("nacos",), "zh"),
    ("前端本地调接口是怎么转到后端的", ("fe-proxy",), "zh"),
    ("怎么登生产的机器", ("jumpserver",), "zh"),
    ("线上服务器能直接 ssh 上去吗", ("jumpserver",), "zh"),
    ("每天早会几点开", ("standup",), "zh"),
    ("站会一般开多久", ("standup",), "zh"),
    ("业务逻辑应该放哪一层", ("layers",), "zh"),
    ("controller 里能写业务代码吗", ("layers",), "zh"),
    ("集成测试里的数据库是真的还是内存的", ("testcontainers",), "zh"),
    ("iOS 上架前要走什么流程", ("app-review",), "zh"),
    ("接口响应时间的指标是多少", ("p99",), "zh"),
    ("首页打开速度有什么要求", ("lighthouse",), "zh"),
    ("报表数据是实时的吗", ("dw-hive",), "zh"),
    ("业务数据多久同步一次到数仓", ("dw-hive",), "zh"),
    ("打日志的时候手机号要处理吗", ("pii-mask",), "zh"),
    ("用户身份证号能原样打到日志里吗", ("pii-mask",), "zh"),
    ("依赖版本谁来升级", ("renovate",), "zh"),
    ("ORM 框架用哪个", ("orm",), "zh"),
    ("可以用 JPA 吗", ("orm",), "zh"),
    ("接口返回的 code 等于几算成功", ("api-envelope",), "zh"),
    ("测试环境的后端地址是多少", ("test-host",), "zh"),
    ("测试服的 api 域名是啥", ("test-host",), "zh"),
    ("首屏性能分要跑到多少", ("lighthouse",), "zh"),
    ("苹果那边提审前要先内测多久", ("app-review",), "zh"),
    ("本地前端的 /api 转发到哪个端口", ("fe-proxy",), "zh"),
    ("自动升级依赖的 PR 是哪个机器人提的", ("renovate",), "zh"),
    ("后端接口的响应体长什么样", ("api-envelope",), "zh"),
    # -- Chinese paraphrases of recall_set's Chinese memories, worded apart from its questions
    ("前端现在还用 webpack 打包吗", ("vite",), "zh"),
    ("安卓和苹果是两套代码吗", ("mobile-rn",), "zh"),
    ("access token 过期了怎么办", ("token-ttl",), "zh"),
    ("公司 nexus 的地址", ("maven-repo",), "zh"),
    ("改表的迁移脚本文件名怎么起", ("flyway",), "zh"),
    ("ci 的 yml 在哪个路径", ("ci-gha",), "zh"),
    ("存库的时间要不要转成 UTC", ("db-tz",), "zh"),
    ("redis 是单机还是集群", ("redis-cache",), "zh"),
    ("Grafana 的数据源是什么", ("prometheus",), "zh"),
    ("后端用的哪个日志框架", ("log-json",), "zh"),
    ("Sentry 上我们的项目叫什么", ("sentry",), "zh"),
    ("生产的 pod 在哪个 ns 下", ("k8s-ns",), "zh"),
    ("灰度第一批放多少流量", ("canary",), "zh"),
    ("上线后发现问题怎么快速恢复", ("rollback",), "zh"),
    ("我们的登录是自己做的还是接公司的", ("sso",), "zh"),
    ("角色配置文件在哪", ("rbac",), "zh"),
    ("bcrypt 的 cost 设的多少", ("bcrypt",), "zh"),
    ("后端单测覆盖率要达到多少", ("junit",), "zh"),
    ("nightly 跑的是什么测试", ("playwright",), "zh"),
    ("压测脚本放哪", ("k6",), "zh"),
    ("review 的评论不回复能合吗", ("review",), "zh"),
    ("我们用 git flow 吗", ("trunk",), "zh"),
    ("hotfix 分支的命名规则", ("hotfix",), "zh"),
    ("打完 tag 之后还要手动发布吗", ("semver",), "zh"),
    ("发版的时候要改哪个 md 文件", ("changelog",), "zh"),
    ("前端 monorepo 的子包放哪个目录", ("pnpm",), "zh"),
    ("可以直接在元素上写 style 吗", ("tailwind",), "zh"),
    ("前端还能用 Redux 吗", ("zustand",), "zh"),
    ("新加一个英文文案要改哪里", ("i18n",), "zh"),
    ("限流规则在哪配", ("kong",), "zh"),
    ("proto 文件放在哪", ("grpc",), "zh"),
    ("基础镜像用的哪个 JDK 镜像", ("docker-base",), "zh"),
    ("全量备份几点跑，留几天", ("backup",), "zh"),
    ("新加的定时任务要在哪注册", ("xxl-job",), "zh"),
    ("本地依赖的 compose 文件在哪个路径", ("compose",), "zh"),
    # -- English questions about Chinese memories (new and recall_set's)
    ("which config center do we use", ("nacos",), "en-zh"),
    ("how do I ssh into a production server", ("jumpserver",), "en-zh"),
    ("what time is the daily standup", ("standup",), "en-zh"),
    ("which layer should business logic go in", ("layers",), "en-zh"),
    ("do integration tests use an in-memory database", ("testcontainers",), "en-zh"),
    ("what's the latency target for our APIs", ("p99",), "en-zh"),
    ("is report data real time", ("dw-hive",), "en-zh"),
    ("can I log phone numbers", ("pii-mask",), "en-zh"),
    ("how are dependency upgrades handled", ("renovate",), "en-zh"),
    ("what does a successful API response look like", ("api-envelope",), "en-zh"),
    ("test environment api url", ("test-host",), "en-zh"),
    ("how long do iOS builds stay in beta before we submit them", ("app-review",), "en-zh"),
    ("how much traffic does the first canary step get", ("canary",), "en-zh"),
    ("where do I register a new scheduled job", ("xxl-job",), "en-zh"),
    ("do we still use redux", ("zustand",), "en-zh"),
    ("where are the proto files", ("grpc",), "en-zh"),
    # -- Chinese questions about English memories (new and recall_set's)
    ("前端要用哪个版本的 node", ("en-node",), "zh-en"),
    ("node 版本在哪锁定的", ("en-node",), "zh-en"),
    ("一个 PR 最多改多少行", ("en-pr-size",), "zh-en"),
    ("链路追踪用什么", ("en-tracing",), "zh-en"),
    ("线上 trace 采样率是多少", ("en-tracing",), "zh-en"),
    ("公共组件的文档在哪看", ("en-storybook",), "zh-en"),
    ("安卓最低支持到哪个版本", ("en-android-min",), "zh-en"),
    ("通知任务失败了去哪找", ("en-rabbit",), "zh-en"),
    ("提 PR 要不要挂工单", ("en-jira",), "zh-en"),
    ("建表用什么 charset", ("en-mysql-utf8",), "zh-en"),
    ("PgBouncer 用的什么模式", ("en-pgbouncer",), "zh-en"),
    ("老的 admin 后台还在用 webpack 吗", ("en-webpack",), "zh-en"),
    ("加索引要 DBA 看吗", ("en-sql-review",), "zh-en"),
    ("没做完的功能怎么先关掉上线", ("en-unleash",), "zh-en"),
    # -- the user's preferences
    ("我用命令行还是图形界面操作 git", ("pref-git-cli",), "pref"),
    ("do I use a GUI git client", ("pref-git-cli",), "pref"),
    ("变量名能缩写吗", ("pref-naming",), "pref"),
    ("改完代码给我看整个文件还是 diff", ("en-pref-diff",), "pref"),
    ("should you show me the full file after editing", ("en-pref-diff",), "pref"),
    ("写 Python 的时候缩进用几格", ("pref-spaces",), "pref"),
    ("改表之前要不要先问我", ("pref-confirm",), "pref"),
    ("专业名词要翻译成中文吗", ("pref-chinese",), "pref"),
    ("is it ok to put emoji in code comments", ("pref-no-emoji",), "pref"),
    ("你回答的时候先说结论还是先说过程", ("pref-brief",), "pref"),
    # -- about the user
    ("我带了几个人", ("me-team",), "me"),
    ("how big is my team", ("me-team",), "me"),
    ("我多久和组员做一次 1:1", ("me-team",), "me"),
    ("我考过什么证", ("me-cka",), "me"),
    ("am I familiar with Kubernetes", ("me-cka",), "me"),
    ("我用 Windows 还是 Mac", ("me-mac",), "me"),
    ("我对 Rust 熟不熟", ("me-rust",), "me"),
    ("what are my working hours", ("me-city",), "me"),
    ("我之前搞过大数据吗", ("en-data-bg",), "me"),
    ("do I know Go", ("me-backend",), "me"),
)

KINDS = {kind: sum(1 for *_, k in QUESTIONS if k == kind) for kind in ("zh", "en-zh", "zh-en", "pref", "me")}
assert len(MEMORIES) == 25, len(MEMORIES)
assert all(scope in ("project", "global") and 1 <= len(near) <= 3 for _, scope, near in MEMORIES.values())
assert len(QUESTIONS) >= 80 and len({q for q, _, _ in QUESTIONS}) == len(QUESTIONS)
assert sum(KINDS.values()) == len(QUESTIONS), KINDS
assert KINDS["zh"] >= 40 and KINDS["en-zh"] >= 12 and KINDS["zh-en"] >= 10, KINDS
assert KINDS["pref"] >= 6 and KINDS["me"] >= 6, KINDS
