"""Finding and starting the browser server (paicli issue 40): the chrome-devtools MCP server
(npm ``chrome-devtools-mcp``) run by Node, driving a Chromium or Chrome found on the machine.

``PAICLI_BROWSER`` (a user setting: the environment or ``config.json``, never a project's
``.env``) is ``off`` (the default), ``isolated`` or ``shared``:

- isolated: a headless browser on a throwaway profile under ``$PAICLI_HOME/browser/profiles/``
  (made for this process, removed when it ends; left-overs of a killed process are swept at the
  next start), never the user's own profile;
- shared: the same at start, and the user may hand the agent their own running Chrome
  (``/browser connect [port]``, or ``browser_connect`` after a typed ``y``); disconnecting
  returns to isolated.

Nothing is downloaded: the server must be installed (``npm install -g chrome-devtools-mcp``, or
``PAICLI_BROWSER_MCP`` naming its entry point) and the browser too (``PAICLI_BROWSER_EXECUTABLE``,
else ``chromium``, ``google-chrome``… on PATH). What is missing is one line (``problem``) that
``/browser`` prints; nothing else changes. As root, Chromium needs ``--no-sandbox``; the
background-networking flags keep it from calling out at start (it is told to stay quiet).
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from paicli.tools.browser.names import CHROME_DEVTOOLS
from paicli.tools.mcp.config import McpSetup, ServerConfig, digest

MODES = ("off", "isolated", "shared")
SERVER_ENTRY = Path("chrome-devtools-mcp") / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
MAC_BROWSERS = ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
                "/Applications/Chromium.app/Contents/MacOS/Chromium")
# Chromium's quiet start (the env skill's flags for a closed network) and no first-run UI.
CHROME_ARGS = ("--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
               "--disable-quic", "--disable-gpu", "--disable-default-apps")
# The server's own calls out (usage statistics, CrUX) are off; the categories whose tools the
# exposure rules never show are left out, so their schemas never reach a request.
SERVER_ARGS = ("--no-usage-statistics", "--no-performance-crux", "--no-category-performance",
               "--no-category-emulation", "--no-category-memory")
# Where a running Chrome says which port it debugs on (the server's --autoConnect looks there too).
USER_DATA_DIRS = (".config/google-chrome", ".config/chromium", ".config/google-chrome-beta",
                  "Library/Application Support/Google/Chrome", "Library/Application Support/Chromium",
                  "AppData/Local/Google/Chrome/User Data")


@dataclass(frozen=True)
class BrowserOptions:
    mode: str = "off"  # PAICLI_BROWSER
    executable: str = ""  # the Chromium / Chrome the isolated browser runs
    node: str = ""
    server: str = ""  # chrome-devtools-mcp's entry point (a .js file Node runs)
    home: Path | None = None  # $PAICLI_HOME/browser: profiles/, sensitive_patterns.txt
    profile: Path | None = None  # this process's throwaway profile
    problem: str = ""  # why the browser cannot run here: the one line /browser prints
    search_dirs: tuple[Path, ...] = field(default=(), compare=False)  # DevToolsActivePort, for connect

    @property
    def enabled(self) -> bool:
        return self.mode != "off" and not self.problem

    @property
    def shared_allowed(self) -> bool:
        return self.mode == "shared"


def browser_options(user: dict[str, str], home: Path, environ: dict[str, str] | None = None) -> BrowserOptions:
    """From the user's own settings (``user``: environment over config.json); the programs are
    looked up on PATH only when the browser is on. Raises ValueError for a bad mode."""
    env = os.environ if environ is None else environ
    mode = (user.get("PAICLI_BROWSER") or "off").strip().lower()
    if mode not in MODES:
        raise ValueError(f"PAICLI_BROWSER 只能是 {'、'.join(MODES)} 之一，当前为 '{mode}'")
    if mode == "off":
        return BrowserOptions()
    base = home / "browser"
    user_home = Path(env.get("HOME") or Path.home())
    dirs = tuple(user_home / d for d in USER_DATA_DIRS)
    node = shutil.which("node", path=env.get("PATH")) or ""
    executable = find_browser(user.get("PAICLI_BROWSER_EXECUTABLE"), env)
    server = find_server(user.get("PAICLI_BROWSER_MCP"), base, node, env)
    problem = ""
    if not executable:
        problem = "未找到 Chromium 或 Chrome（安装 chromium，或用 PAICLI_BROWSER_EXECUTABLE 指定浏览器程序）"
    elif not node:
        problem = "未找到 Node.js（chrome-devtools-mcp 需要 Node 20.19 或更新版本）"
    elif not server:
        problem = ("未找到 chrome-devtools-mcp（npm install -g chrome-devtools-mcp，"
                   "或用 PAICLI_BROWSER_MCP 指定它的入口文件）")
    profile = base / "profiles" / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    return BrowserOptions(mode, executable, node, server, base, profile, problem, dirs)


def find_browser(explicit: str | None, env: dict[str, str]) -> str:
    if explicit:
        path = shutil.which(explicit, path=env.get("PATH")) or explicit
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else ""
    for name in BROWSERS:
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            return found
    return next((p for p in MAC_BROWSERS if sys.platform == "darwin" and os.access(p, os.X_OK)), "")


def find_server(explicit: str | None, base: Path, node: str, env: dict[str, str]) -> str:
    """The server's entry point: ``PAICLI_BROWSER_MCP`` (its .js, its bin link, or the folder it
    was npm-installed into), the ``chrome-devtools-mcp`` command on PATH, an install under
    ``$PAICLI_HOME/browser``, or npm's global folder next to Node."""
    candidates: list[Path] = []
    if explicit:
        given = Path(explicit).expanduser()
        candidates += [given, given / "node_modules" / SERVER_ENTRY, given / SERVER_ENTRY.relative_to("chrome-devtools-mcp")]
    else:
        command = shutil.which("chrome-devtools-mcp", path=env.get("PATH"))
        candidates += [Path(command)] if command else []
        candidates.append(base / "node_modules" / SERVER_ENTRY)
        if node:
            prefix = Path(os.path.realpath(node)).parent.parent
            candidates += [prefix / "lib" / "node_modules" / SERVER_ENTRY, prefix / "node_modules" / SERVER_ENTRY]
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if real.is_file():
            return str(real)
    return ""


def isolated_config(options: BrowserOptions) -> ServerConfig:
    chrome = [*CHROME_ARGS, *(["--no-sandbox"] if _is_root() else [])]
    args = (options.server, "--headless", f"--executablePath={options.executable}",
            f"--userDataDir={options.profile}", *SERVER_ARGS, *(f"--chromeArg={a}" for a in chrome))
    return _config(options, args)


def shared_config(options: BrowserOptions, endpoint: str) -> ServerConfig:
    """``endpoint``: ``http://127.0.0.1:<port>`` (a debugging port) or ``ws://…`` (DevToolsActivePort)."""
    flag = "--wsEndpoint" if endpoint.startswith("ws") else "--browserUrl"
    return _config(options, (options.server, f"{flag}={endpoint}", *SERVER_ARGS))


def _config(options: BrowserOptions, args: tuple[str, ...]) -> ServerConfig:
    entry = {"command": options.node, "args": list(args)}
    return ServerConfig(name=CHROME_DEVTOOLS, source="paicli", transport="stdio", command=options.node,
                        args=args, digest=digest(entry))


def with_browser(setup: McpSetup, options: BrowserOptions) -> McpSetup:
    """The MCP setup with paicli's browser server in it, when the browser is on and can run: a
    configured server of the same name gives way, with one line saying so."""
    if not options.enabled:
        return setup
    kept = tuple(s for s in setup.servers if s.name != CHROME_DEVTOOLS)
    notes = (f"⚠️ MCP server {CHROME_DEVTOOLS} 由 PAICLI_BROWSER 管理，配置文件中的同名 server 已忽略"
             "（PAICLI_BROWSER=off 时使用它）",) if len(kept) != len(setup.servers) else ()
    return replace(setup, servers=(*kept, isolated_config(options)), problems=(*setup.problems, *notes))


def sweep_profiles(options: BrowserOptions) -> None:
    """Remove the throwaway profiles of processes that are gone (killed before they could)."""
    folder = options.profile.parent if options.profile else None
    if folder is None or not folder.is_dir():
        return
    for entry in folder.iterdir():
        pid = entry.name.partition("-")[0]
        if entry != options.profile and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def remove_profile(options: BrowserOptions) -> None:
    if options.profile is not None:
        shutil.rmtree(options.profile, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
