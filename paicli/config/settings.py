"""The one place that reads the environment, `.env` and `$PAICLI_HOME/config.json`.

Precedence, highest first: process environment, the project's `.env`, `$PAICLI_HOME/config.json`,
the provider preset. One exception keeps the user's key safe (``paicli.config.credentials``): a project's
`.env` may pick the endpoint only together with its own key. Everything else in paicli receives a
frozen ``Settings``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from paicli.config.credentials import CONFIG, DOTENV, ENVIRONMENT, Sources, endpoint_refusal, guard_refusal, key_variable, secret_variables
from paicli.config.catalog import DEFAULT_WINDOW, Catalog, CatalogError, ModelInfo, ProviderInfo, load_catalog
from paicli.config.prices import Price, price_problem
from paicli.config.search_settings import SEARCH_KEYS, search_service
from paicli.nodes.core.options import BudgetOptions, CompactionOptions
from paicli.tools.skills.limits import DEFAULT_BUDGET as DEFAULT_SKILL_BUDGET
from paicli.config.feature_settings import (ConfigError, Get, MemorySettings, WebSettings, budget_options, compaction_options, memory_settings,
                          number, snapshot_options, web_settings)
from paicli.config.feature_settings import code_index_options  # issue 37
from paicli.codeindex.options import CodeIndexOptions
from paicli.tools.snapshots.options import SnapshotOptions
from paicli.tools.mcp.config import DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_WAIT, McpSetup, merge, parse_document
from paicli.tools.sandbox.command import MODES as SANDBOX_MODES, SandboxOptions
from paicli.tools.browser.launch import BrowserOptions, browser_options, with_browser
from paicli.tools.lsp.options import MODES as LSP_MODES, LspOptions


# The providers and models paicli knows are the catalog's (paicli/data/models.json, paicli.config.catalog);
# config.json's "providers" adds or overrides entries.
DEFAULT_PROVIDER = "glm"
DEFAULT_CONTEXT_WINDOW = DEFAULT_WINDOW  # reference (b): window when nothing else is known

# config.json keys are the variable names without the PAICLI_ prefix, lower-cased.
_CONFIG_KEYS = ("provider", "api_key", "base_url", "model", "context_window", "light_model", "memory_dir",
                "searxng_url", "web_allow_hosts", "studio_origins", "command_sandbox", "sandbox_network",
                "sandbox_writable", "sandbox_readable", "database_url", "hitl", "auto_classifier_model", "status_bar",
                "browser", "browser_executable", "browser_mcp",
                "show_thinking", "search_provider", "serpapi_key", "serpapi_url", "zhipu_search_url",
                # the code index (issue 37)
                "embedding_url", "embedding_model", "embedding_api_key", "embedding_input_type",
                "code_index_max_file_bytes", "code_index_auto_max_files",
                # language servers (issue 38): lsp, lsp_<language>, lsp_wait_seconds, lsp_idle_seconds
                "lsp", "lsp_python", "lsp_typescript", "lsp_go", "lsp_rust", "lsp_c", "lsp_java", "lsp_wait_seconds",
                "lsp_idle_seconds",
                "user")  # PAICLI_USER (issue 35)
# reference v.1: /hitl's two levels as PAICLI_HITL values, and the approval level each means
HITL_LEVELS = {"on": "ask", "default": "auto"}
DEFAULT = "default"  # the origin of a setting nobody set


@dataclass(frozen=True)
class Settings:
    provider: str  # preset name, or "custom" when only PAICLI_BASE_URL is given
    api_key: str | None  # None until the user sets one; `require_key()` names the fix
    base_url: str  # OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1
    model: str  # chat model id sent to the endpoint
    context_window: int  # tokens; drives the compaction thresholds
    light_model: str  # model for fact extraction and other side calls
    home: Path  # PAICLI_HOME: ledger, memory, input history, config.json
    memory_dir: Path  # PAICLI_MEMORY_DIR: long_term_memory.json lives here
    project_root: Path  # --project DIR or the current directory (resolved)
    compaction: CompactionOptions = CompactionOptions()
    budget: BudgetOptions = BudgetOptions()
    memory: MemorySettings = MemorySettings()
    web: WebSettings = WebSettings()
    skill_budget: int = DEFAULT_SKILL_BUDGET  # PAICLI_SKILL_BODY_BUDGET: characters of skill bodies in context (s.6)
    session_wait: int = 120  # PAICLI_SESSION_WAIT: seconds a turn waits for another process's turn on its session
    plan_max_replans: int = 2  # PAICLI_PLAN_MAX_REPLANS: re-plans a failing plan may use (reference s.4)
    # Environment variables commands must not see: the key variables and any holding the key.
    secret_env: frozenset[str] = frozenset()
    mcp: McpSetup = McpSetup()  # $PAICLI_HOME/mcp.json and <project>/.mcp.json (paicli.tools.mcp.config)
    # PAICLI_HITL: the approval level a session starts at, "auto" (`default`, the reference's
    # startup level) or "ask" (`on`); `--yes` makes it "yes" (reference v.1).
    approval: str = "auto"
    review_model: str = ""  # PAICLI_AUTO_CLASSIFIER_MODEL; "": the session's model (reference v.2)
    status_bar: bool = True  # PAICLI_STATUS_BAR=off hides the REPL's status bar (reference u.4)
    prices: dict[str, Price] = field(default_factory=dict)  # CNY / M tokens, by model: the catalog's, then config.json's
    # Where each variable's value came from: the environment, .env, config.json or default (/config).
    origins: dict[str, str] = field(default_factory=dict)
    # PAICLI_STUDIO_ORIGINS: web origins `paicli studio` serves besides its own and Studio's
    # (environment or config.json only: a guard setting, see paicli.config.credentials).
    studio_origins: tuple[str, ...] = ()
    snapshots: SnapshotOptions = SnapshotOptions()  # PAICLI_SNAPSHOT_*, PAICLI_ALLOW_REVERT (paicli.tools.snapshots)
    # PAICLI_COMMAND_SANDBOX, PAICLI_SANDBOX_NETWORK, PAICLI_SANDBOX_WRITABLE (issue 24): the user's
    # environment and config.json only, never a project's .env (a repository must not loosen it).
    sandbox: SandboxOptions = SandboxOptions()
    # PAICLI_DATABASE_URL: sessions and long-term memory in this PostgreSQL database (issue 28;
    # paicli.run.database). None: the ledger files and long_term_memory.json. A guard setting.
    database_url: str | None = None
    # PAICLI_BROWSER off | isolated | shared, PAICLI_BROWSER_EXECUTABLE, PAICLI_BROWSER_MCP (issue 40):
    # the user's environment and config.json only (paicli.tools.browser.launch).
    browser: BrowserOptions = BrowserOptions()
    # issue 39: the provider and model catalog (paicli.config.catalog), what the window came from (False:
    # the model is not in it and got the default), whether PAICLI_LIGHT_MODEL named the light
    # model, the key variables' values (a /model switch to another provider reads its key there),
    # and how reasoning is shown (PAICLI_SHOW_THINKING: off | on | folded).
    catalog: Catalog = field(default_factory=load_catalog)
    window_known: bool = True
    light_explicit: bool = False
    keys: dict[str, str] = field(default_factory=dict, repr=False)
    show_thinking: str = "folded"
    # PAICLI_EMBEDDING_URL / _MODEL / _API_KEY / _INPUT_TYPE, PAICLI_CODE_INDEX_MAX_FILE_BYTES,
    # PAICLI_CODE_INDEX_AUTO_MAX_FILES (issue 37): the code index's vectors and limits (paicli.codeindex.options).
    code_index: CodeIndexOptions = CodeIndexOptions()
    # PAICLI_LSP, PAICLI_LSP_<LANGUAGE>, PAICLI_LSP_WAIT_SECONDS, PAICLI_LSP_IDLE_SECONDS (issue 38):
    # the user's environment and config.json only, never a project's .env (it would pick the
    # program paicli starts for the project's files).
    lsp: LspOptions = LspOptions()

    @property
    def cache_dir(self) -> Path:
        """Caches we may rebuild (jieba's dictionary), kept out of a shared /tmp."""
        return self.home / "cache"

    def require_key(self) -> str:
        if not self.api_key:
            preset = self.catalog.get(self.provider)
            hint = preset.key_env if preset else "PAICLI_API_KEY"
            other = f"（或 {hint}）" if hint != "PAICLI_API_KEY" else ""  # issue 26: the setting named once
            raise ConfigError(
                f"没有 {self.provider} 的 API key：在环境变量、.env 或 {self.home / 'config.json'} 中设置 "
                f"PAICLI_API_KEY{other}"
            )
        return self.api_key

    @property
    def model_info(self) -> ModelInfo:
        return self.catalog.model_info(self.provider, self.model)

    @property
    def prompt_cache(self) -> str:
        """reference (b): the provider's prompt-cache mode, for display."""
        preset = self.catalog.get(self.provider)
        return preset.prompt_cache if preset else "none"

    def price(self, model: str | None = None) -> Price | None:
        return self.prices.get(model or self.model)


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE lines; `#` comments, `export ` prefixes and matching quotes are handled."""
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return values
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def _read_config(home: Path) -> dict[str, str]:
    path = home / "config.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path} 无法读取（{exc.strerror or exc}）") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} 不是合法的 JSON（{json_problem(exc)}）：请修正或删除它") from exc
    return _config_values(data, path)


def json_problem(exc: ValueError) -> str:
    """Where a JSON file goes wrong, in Chinese (the json module's own words are English)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"第 {exc.lineno} 行第 {exc.colno} 列有误"
    return "不是 UTF-8 文本" if isinstance(exc, UnicodeDecodeError) else str(exc)


def home_dir(environ: dict[str, str] | None = None) -> Path:
    """PAICLI_HOME, default ~/.paicli. Only the environment may move it: it holds config.json."""
    env = os.environ if environ is None else environ
    return Path(env.get("PAICLI_HOME") or Path.home() / ".paicli").expanduser()


def crash_log_dir(environ: dict[str, str] | None = None) -> Path:
    return home_dir(environ) / "logs"


def load_settings(project: str | os.PathLike | None = None, environ: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ if environ is None else environ)
    # PAICLI_PROJECT_ROOT: set by `paicli studio` for its server, whose working directory is not the project.
    root = Path(project or env.get("PAICLI_PROJECT_ROOT") or os.getcwd()).expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(f"项目目录不存在：{root}")
    home = home_dir(env)
    sources = Sources(env=env, dotenv=read_dotenv(root / ".env"), config=_read_config(home))
    catalog = _config_catalog(home)
    merged = {**sources.config, **sources.dotenv, **sources.env}

    def get(name: str) -> str | None:
        value = merged.get(name, "").strip()
        return value or None

    provider, preset, base_url, model, key_name, key = _endpoint(get, catalog, sources, root)
    info = catalog.model_info(provider, model)
    window_setting = get("PAICLI_CONTEXT_WINDOW")
    origins = {name: _source_of(sources, name) for name in (*_REPORTED, *([key_name] if key_name else []))}
    try:  # issue 40: a user setting, as the sandbox's
        browser = browser_options({**sources.config, **sources.env}, home, env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return Settings(
        provider=provider if preset else "custom",
        api_key=key,
        base_url=base_url or preset.base_url,  # type: ignore[union-attr]
        model=model,
        context_window=_window(window_setting, info),
        window_known=window_setting is not None or info.known,
        light_model=get("PAICLI_LIGHT_MODEL") or (preset.light_model if preset else None) or model,
        light_explicit=get("PAICLI_LIGHT_MODEL") is not None,
        home=home,
        memory_dir=Path(get("PAICLI_MEMORY_DIR") or home / "memory").expanduser(),
        project_root=root,
        compaction=compaction_options(get),
        budget=budget_options(get),
        memory=memory_settings(get, home / "cache"),
        web=_checked_web(replace(web_settings(get), search=search_service(get, catalog, provider, key))),
        secret_env=secret_variables(env, (*catalog.key_variables(), *SEARCH_KEYS), key),
        session_wait=max(0, number(get, "PAICLI_SESSION_WAIT", 120)),
        skill_budget=_positive(get, "PAICLI_SKILL_BODY_BUDGET", DEFAULT_SKILL_BUDGET),
        mcp=with_browser(_mcp_setup(home, root, get), browser),
        browser=browser,
        plan_max_replans=max_replans(get("PAICLI_PLAN_MAX_REPLANS")),
        studio_origins=studio_origins(get("PAICLI_STUDIO_ORIGINS")),
        snapshots=snapshot_options(get, lambda name: env.get(name)),
        sandbox=sandbox_options({**sources.config, **sources.env}, home,
                                (get("PAICLI_MEMORY_DIR") or "", get("PAICLI_AUDIT_DIR") or "")),
        database_url=get("PAICLI_DATABASE_URL"),
        code_index=code_index_options(get, base_url or preset.base_url, key),  # type: ignore[union-attr]
        lsp=lsp_options({**sources.config, **sources.env}),
        approval=_hitl(get("PAICLI_HITL")),
        review_model=get("PAICLI_AUTO_CLASSIFIER_MODEL") or "",
        status_bar=(get("PAICLI_STATUS_BAR") or "on").lower() not in ("off", "false", "0", "no"),
        prices={**catalog.prices(), **_config_prices(home)},
        origins=origins,
        catalog=catalog,
        keys={name: value for name in ("PAICLI_API_KEY", *catalog.key_variables()) if (value := get(name))},
        show_thinking=_show_thinking(get("PAICLI_SHOW_THINKING")),
    )


def _endpoint(get: Get, catalog: Catalog, sources: Sources,
              root: Path) -> tuple[str, ProviderInfo | None, str | None, str, str | None, str | None]:
    """Which provider, preset, base URL, model and key (its variable, its value): a base URL alone
    means a custom endpoint, not the default preset's; a project's ``.env`` may not move the
    user's key to another endpoint (``paicli.config.credentials``)."""
    base_url = _checked_url("PAICLI_BASE_URL", get("PAICLI_BASE_URL"))
    provider = (get("PAICLI_PROVIDER") or ("custom" if base_url else DEFAULT_PROVIDER)).lower()
    if catalog.get(provider) is None and not base_url:
        raise ConfigError(f"未知的 PAICLI_PROVIDER '{provider}'：请用 {'、'.join(catalog.providers)} 之一，或设置 PAICLI_BASE_URL")
    preset = catalog.get(provider)
    model = get("PAICLI_MODEL") or (preset.model if preset else None)
    if not model:
        raise ConfigError("自定义端点没有默认模型：请设置 PAICLI_MODEL")
    key_name = key_variable(get, preset.key_env if preset else None)
    if refusal := endpoint_refusal(sources, key_name, root / ".env") or guard_refusal(sources, root / ".env"):
        raise ConfigError(refusal)
    key = get(key_name) if key_name else (preset.api_key if preset else None)
    return provider, preset, base_url, model, key_name, key


# The variables /config reports with their origin (the key variable is added when there is one).
_REPORTED = ("PAICLI_PROVIDER", "PAICLI_BASE_URL", "PAICLI_MODEL", "PAICLI_CONTEXT_WINDOW", "PAICLI_LIGHT_MODEL",
             "PAICLI_MEMORY_DIR", "PAICLI_HITL", "PAICLI_AUTO_CLASSIFIER_MODEL", "PAICLI_STATUS_BAR",
             "PAICLI_MEMORY_AUTO_EXTRACT_ENABLED", "PAICLI_SESSION_WAIT",
             "PAICLI_PLAN_MAX_REPLANS", "PAICLI_SHOW_THINKING", "PAICLI_SEARCH_PROVIDER")


def _source_of(sources: Sources, name: str) -> str:
    for origin, values in ((ENVIRONMENT, sources.env), (DOTENV, sources.dotenv), (CONFIG, sources.config)):
        if (values.get(name) or "").strip():
            return origin
    return DEFAULT


def _hitl(raw: str | None) -> str:
    if raw is None:
        return "auto"
    level = HITL_LEVELS.get(raw.strip().lower())
    if level is None:
        raise ConfigError(f"PAICLI_HITL 只能是 on 或 default，当前为 '{raw}'")
    return level


SHOW_THINKING = ("off", "on", "folded")  # issue 39: PAICLI_SHOW_THINKING


def _show_thinking(raw: str | None) -> str:
    word = (raw or "folded").strip().lower()
    if word not in SHOW_THINKING:
        raise ConfigError(f"PAICLI_SHOW_THINKING 只能是 {'、'.join(SHOW_THINKING)} 之一，当前为 '{raw}'")
    return word


def _config_catalog(home: Path) -> Catalog:
    """The model catalog with config.json's "providers" over it (``paicli.config.catalog``)."""
    path = home / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    try:
        return load_catalog(data.get("providers") if isinstance(data, dict) else None)
    except CatalogError as exc:
        raise ConfigError(f"{path} 中 {exc}") from None


def _config_prices(home: Path) -> dict[str, Price]:
    """config.json's "prices" (``paicli.config.prices``); the file parsed already in ``_read_config``."""
    path = home / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    table = data.get("prices") if isinstance(data, dict) else None
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path} 中的 \"prices\" 必须是以模型名为键的对象，例如 "
                          f"{{\"glm-5.1\": {{\"input\": 4, \"output\": 16}}}}")
    prices = {}
    for model, value in table.items():
        if (problem := price_problem(value)) is not None:
            raise ConfigError(f"{path} 中的 \"prices\".\"{model}\" {problem}")
        prices[model] = Price(float(value["input"]), float(value["output"]),
                              None if value.get("cached") is None else float(value["cached"]))
    return prices


def sandbox_options(user: dict[str, str], home: Path | None = None, data_dirs: tuple[str, ...] = ()) -> SandboxOptions:
    """From the user's own settings (environment over config.json). Paths are separated by
    ``os.pathsep`` as in PATH (config.json may give a list). ``home``: $PAICLI_HOME, and
    ``data_dirs`` (the memory and audit folders): what commands find empty (issue 34)."""
    mode = (user.get("PAICLI_COMMAND_SANDBOX") or "auto").strip().lower()
    if mode not in SANDBOX_MODES:
        raise ConfigError(f"PAICLI_COMMAND_SANDBOX 只能是 {'、'.join(SANDBOX_MODES)} 之一，当前为 '{mode}'")
    network = (user.get("PAICLI_SANDBOX_NETWORK") or "off").strip().lower()
    if network not in ("on", "off"):
        raise ConfigError(f"PAICLI_SANDBOX_NETWORK 只能是 on 或 off，当前为 '{network}'")
    writable = tuple(p.strip() for p in (user.get("PAICLI_SANDBOX_WRITABLE") or "").split(os.pathsep) if p.strip())
    relative = [p for p in writable if not os.path.isabs(os.path.expanduser(p))]
    if relative:
        raise ConfigError(f"PAICLI_SANDBOX_WRITABLE 需要绝对路径（或 ~/...），当前为 '{relative[0]}'")
    # issue 34: PAICLI_SANDBOX_READABLE, a credential store a command may read on purpose (user settings only).
    readable = tuple(p.strip() for p in (user.get("PAICLI_SANDBOX_READABLE") or "").split(os.pathsep) if p.strip())
    if relative := [p for p in readable if not os.path.isabs(os.path.expanduser(p))]:
        raise ConfigError(f"PAICLI_SANDBOX_READABLE 需要绝对路径（或 ~/...），当前为 '{relative[0]}'")
    hidden = tuple(str(p) for p in (home, *data_dirs) if p)
    return SandboxOptions(mode=mode, network=network == "on", writable=writable, readable=readable, hidden=hidden,
                          data=str(home / "sandbox") if home else "")


def lsp_options(user: dict[str, str]) -> LspOptions:
    """Language servers (issue 38), from the user's own settings (environment over config.json)."""
    import shlex

    from paicli.tools.lsp.languages import BY_KEY

    mode = (user.get("PAICLI_LSP") or "auto").strip().lower()
    if mode not in LSP_MODES:
        raise ConfigError(f"PAICLI_LSP 只能是 {'、'.join(LSP_MODES)} 之一，当前为 '{mode}'")
    commands = {}
    for key in BY_KEY:
        raw = (user.get(f"PAICLI_LSP_{key.upper()}") or "").strip()
        if raw:
            try:
                commands[key] = () if raw.lower() == "off" else tuple(shlex.split(raw))
            except ValueError as exc:
                raise ConfigError(f"PAICLI_LSP_{key.upper()} 不是可执行的命令（{exc}），当前为 '{raw}'") from None
    return LspOptions(mode=mode, commands=commands, wait=_seconds(user, "PAICLI_LSP_WAIT_SECONDS", 3.0, 60.0),
                      idle=_seconds(user, "PAICLI_LSP_IDLE_SECONDS", 600.0, 86_400.0))


def _seconds(user: dict[str, str], name: str, default: float, most: float) -> float:
    raw = (user.get(name) or "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise ConfigError(f"{name} 必须是秒数，当前为 '{raw}'") from None
    if not 0 < value <= most:
        raise ConfigError(f"{name} 必须在 0 到 {most:g} 秒之间，当前为 {raw}")
    return value


DEFAULT_MAX_REPLANS = 2


def max_replans(raw: str | None) -> int:
    """reference (s.4): default 2, negative values become 0, unparseable values use the default."""
    try:
        return max(0, int(raw.strip())) if raw is not None else DEFAULT_MAX_REPLANS
    except ValueError:
        return DEFAULT_MAX_REPLANS


def _mcp_setup(home: Path, root: Path, get) -> McpSetup:
    """The user's servers (trusted) and the project's (started only once trusted); a bad file or
    entry is one line in ``problems``, never an error: the other servers still start."""
    user, user_problems = _mcp_file(home / "mcp.json", "user")
    project, project_problems = _mcp_file(root / ".mcp.json", "project")
    servers, clashes = merge(user, project)
    return McpSetup(servers=tuple(servers), problems=tuple(user_problems + project_problems + clashes),
                    startup_wait=max(0.0, float(number(get, "PAICLI_MCP_STARTUP_WAIT_SECONDS", DEFAULT_STARTUP_WAIT))),
                    call_timeout=max(1.0, float(number(get, "PAICLI_MCP_TOOL_TIMEOUT_SECONDS", DEFAULT_CALL_TIMEOUT))),
                    state_dir=home / "mcp")


def _mcp_file(path: Path, source: str) -> tuple[list, list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"⚠️ MCP 配置 {path} 无法读取: {exc.strerror or exc}"]
    except UnicodeDecodeError as exc:  # a file in another encoding is one line too, not a traceback
        return [], [f"⚠️ MCP 配置 {path} 不是合法 JSON: {json_problem(exc)}"]
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [], [f"⚠️ MCP 配置 {path} 不是合法 JSON: {json_problem(exc)}"]
    return parse_document(data, source, path)


def studio_environ(settings: Settings) -> dict[str, str]:
    """The environment of the ``langgraph dev`` server ``paicli studio`` starts: this process's,
    with the project root and the resolved homes passed on (the server loads these settings again,
    for its graph, checkpointer and store; passing the resolved paths keeps them equal even if a
    file changes meanwhile), and everything that would call out
    switched off (notes §0: analytics, version check, LangSmith tracing)."""
    # CORS_CONFIG / CORS_ALLOW_ORIGINS would replace the exact origins of the config (paicli/studio/gate.py).
    dropped = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "CORS_CONFIG", "CORS_ALLOW_ORIGINS")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(PAICLI_PROJECT_ROOT=str(settings.project_root), PAICLI_HOME=str(settings.home),
               PAICLI_MEMORY_DIR=str(settings.memory_dir), LANGGRAPH_CLI_NO_ANALYTICS="1",
               **({"PAICLI_DATABASE_URL": settings.database_url} if settings.database_url else {}),
               LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false",
               LANGSMITH_TRACING_V2="false", LANGCHAIN_TRACING="false")
    env.setdefault("LOG_LEVEL", "WARNING")  # the server's info logs drown the URLs; run errors still show
    return env


def _positive(get: Get, name: str, default: int) -> int:
    value = number(get, name, default)
    if value <= 0:
        raise ConfigError(f"{name} 必须是正整数，当前为 {value}")
    return value


def _window(raw: str | None, info: ModelInfo) -> int:
    if raw is None:
        return info.window
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise ConfigError(f"PAICLI_CONTEXT_WINDOW 必须是整数（token 数），当前为 '{raw}'") from None
    if value <= 0:
        raise ConfigError(f"PAICLI_CONTEXT_WINDOW 必须是正数，当前为 {value}")
    return value


# --- shapes the loader refuses: one line naming the setting, exit 2 -----------------------

_JSON_TYPES = {dict: "对象", list: "列表", bool: "true/false", float: "数字", type(None): "null"}


def _config_values(data: object, path: Path) -> dict[str, str]:
    """config.json as settings lookups; unknown keys are ignored, known ones must be text
    (``context_window`` may be a whole number, ``web_allow_hosts`` a list of host names,
    ``studio_origins`` a list of origins)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{path} 必须是一个 JSON 对象，例如 {{\"model\": \"glm-5.1\"}}，"
                          f"而不是{_JSON_TYPES.get(type(data), '文本')}：请修正或删除它")
    return {f"PAICLI_{key.upper()}": _config_text(key, data[key], path)
            for key in _CONFIG_KEYS if data.get(key) is not None}


def _config_text(key: str, value: object, path: Path) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and key == "context_window":
        return str(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key.startswith("lsp_") and key.endswith("_seconds"):
        return str(value)
    listed = key in ("web_allow_hosts", "studio_origins")
    if listed and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    if key in ("sandbox_writable", "sandbox_readable") and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return os.pathsep.join(value)
    raise ConfigError(f"{path} 中的 \"{key}\" 必须是字符串，而不是{_JSON_TYPES.get(type(value), '数字')}")


def _checked_url(name: str, raw: str | None) -> str | None:
    """An endpoint URL the HTTP client can use, or a ConfigError naming ``name``."""
    if raw is None:
        return None
    problem = _url_problem(raw)
    if problem:
        raise ConfigError(f"{name} {problem}，当前为 '{raw}'")
    return raw


def _url_problem(raw: str) -> str | None:
    if any(c.isspace() or not c.isprintable() for c in raw):
        return "不能含空格或控制字符"
    try:
        parts = urlsplit(raw)
    except ValueError:
        return "不是有效的 URL"
    if parts.scheme not in ("http", "https"):
        return "必须以 http:// 或 https:// 开头"
    if not parts.hostname:
        return "缺少主机名"
    try:
        port = parts.port  # raises for a port out of range or not a number
    except ValueError:
        port = 0
    return "端口无效（应为 1-65535）" if port == 0 else None


def studio_origins(raw: str | None) -> tuple[str, ...]:
    """PAICLI_STUDIO_ORIGINS, comma-separated, each as a browser writes an ``Origin`` header
    (``https://host[:port]``: lower case, no default port, no path); never ``*``."""
    origins = []
    for item in (raw or "").split(","):
        if item.strip():
            origin = _origin(item.strip())
            if origin is None:
                raise ConfigError(f"PAICLI_STUDIO_ORIGINS 只接受精确的网页来源，例如 https://studio.example.com"
                                  f"（只含协议、主机和端口），当前为 '{item.strip()}'")
            origins.append(origin)
    return tuple(dict.fromkeys(origins))


def _origin(raw: str) -> str | None:
    if _url_problem(raw) is not None:
        return None
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return None
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None
            or parts.path not in ("", "/") or parts.query or parts.fragment or "*" in raw):
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def _checked_web(web: WebSettings) -> WebSettings:
    _checked_url("PAICLI_SEARXNG_URL", web.searxng_url)
    if web.search is not None and web.search.kind != "searxng":
        _checked_url("PAICLI_SERPAPI_URL" if web.search.kind == "serpapi" else "PAICLI_ZHIPU_SEARCH_URL", web.search.url)
    return web
