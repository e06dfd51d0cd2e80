"""What no command sees: variables named like secrets, credentials inside URLs, the variables that
point at a session's sockets, and the files where credentials are kept (paicli issue 34, items 2, 7).

``is_secret_name`` is reference (t)'s rule widened by issue 34; ``command_environment`` is every
command's environment, sandboxed or not; ``CREDENTIAL_PATHS`` are the stores a sandboxed command
finds empty (``PAICLI_SANDBOX_READABLE``, a user setting, opens one on purpose).
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# reference (t): names ending so, containing so, or equal to these.
SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_ACCESS_TOKEN", "_REFRESH_TOKEN", "_SECRET", "_PASSWORD")
SECRET_PARTS = ("PRIVATE_KEY", "SECRET_ACCESS_KEY", "CLIENT_SECRET")
SECRET_NAMES = frozenset({"ANTHROPIC_AUTH_TOKEN", "AUTHORIZATION"})
# issue 34 item 7: *TOKEN*, *SECRET*, *PASSWORD*, *PASSWD*, *_KEY, *CREDENTIAL* (any letter case).
WIDE_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
WIDE_SUFFIXES = ("_KEY",)
# The database URL carries its password; KRB5CCNAME names the Kerberos ticket cache.
DROPPED_NAMES = frozenset({"PAICLI_DATABASE_URL", "DATABASE_URL", "KRB5CCNAME", "PGPASSFILE", "PGSERVICEFILE"})
# issue 34 item 2: what points a command at the session's terminal multiplexer, display, desktop
# bus, agents or editor: each is a socket that runs things outside on request.
SESSION_NAMES = frozenset({
    "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "STY", "WINDOW", "DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET",
    "XAUTHORITY", "ICEAUTHORITY", "SESSION_MANAGER", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
    "XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GNOME_KEYRING_CONTROL",
    "DOCKER_HOST", "CONTAINER_HOST", "PODMAN_HOST", "PULSE_SERVER", "PIPEWIRE_REMOTE", "NVIM",
    "NVIM_LISTEN_ADDRESS", "KITTY_LISTEN_ON", "KITTY_WINDOW_ID", "WEZTERM_UNIX_SOCKET", "ZELLIJ",
    "ZELLIJ_SESSION_NAME", "I3SOCK", "SWAYSOCK", "HYPRLAND_INSTANCE_SIGNATURE", "VSCODE_IPC_HOOK",
    "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "VSCODE_GIT_ASKPASS_NODE", "VSCODE_GIT_ASKPASS_MAIN",
    "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "WINDOWID", "JUPYTER_RUNTIME_DIR", "EMACS_SOCKET_NAME",
})
_SESSION_SUFFIXES = ("_SOCK", "_SOCKET", "_IPC_HOOK", "_IPC_HANDLE")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SECRET_QUERY = re.compile(r"pass|pwd|token|secret|key|sig|auth|credential", re.IGNORECASE)

# issue 34 item 7: credential stores under HOME, empty inside the sandbox (files as /dev/null,
# directories as an empty tmpfs). Keyrings and browser profiles hold passwords and cookies.
CREDENTIAL_PATHS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub", ".kube", ".docker",
    ".netrc", ".git-credentials", ".config/git/credentials", ".git-credential-cache", ".pgpass", ".npmrc",
    ".yarnrc", ".yarnrc.yml", ".pypirc", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml", ".m2/settings-security.xml",
    ".gradle/gradle.properties", ".config/containers/auth.json", ".terraform.d/credentials.tfrc.json",
    ".vault-token", ".cache/huggingface/token", ".huggingface/token", ".config/huggingface",
    ".local/share/keyrings", ".local/share/kwalletd", ".password-store", ".config/op", ".config/1Password",
    ".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".config/microsoft-edge", ".config/vivaldi", ".config/opera", ".pki", ".codex", ".claude",
    ".claude.json", ".config/anthropic", ".config/openai", ".pulumi/credentials.json", ".oci",
    ".config/doctl", ".fly", ".netlify", ".config/netlify", ".config/configstore", ".wrangler",
    ".config/rclone", ".s3cfg", ".boto", ".dbt/profiles.yml", ".my.cnf", ".config/sops", "Library/Keychains", "Library/Cookies",
    "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
)
# Outside HOME: what uid 0 can read even without capabilities (the files are root's own).
SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private",
                  "/etc/krb5.keytab", "/var/lib/sss/secrets", "/run/secrets", "/var/run/secrets")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return (upper in SECRET_NAMES or upper.endswith(SECRET_SUFFIXES) or any(p in upper for p in SECRET_PARTS)
            or any(p in upper for p in WIDE_PARTS) or upper.endswith(WIDE_SUFFIXES))


def is_session_name(name: str) -> bool:
    upper = name.upper()
    return upper in SESSION_NAMES or upper.endswith(_SESSION_SUFFIXES)


def without_credentials(value: str) -> str:
    """A URL-valued variable without its user:password and without query parameters named like
    secrets (``?password=``, ``?access_token=``); any other value as it is."""
    if not _URL.match(value.strip()):
        return value
    try:
        parts = urlsplit(value.strip())
        host = parts.hostname or ""
    except ValueError:
        return ""  # unparseable with a scheme: nothing of it is kept
    netloc = parts.netloc.rsplit("@", 1)[-1] if "@" in parts.netloc else parts.netloc
    query = parts.query
    if query:
        kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if not _SECRET_QUERY.search(k)]
        query = urlencode(kept)
    if netloc == parts.netloc and query == parts.query:
        return value
    return urlunsplit((parts.scheme, netloc if host or netloc else "", parts.path, query, parts.fragment))


def command_environment(base: Mapping[str, str], hidden: Iterable[str] = ()) -> dict[str, str]:
    """A command's environment: ``base`` without the hidden variables (the ones holding paicli's
    key), without paicli's own settings, any variable named like a secret or pointing at a
    session socket, and with credentials taken out of URL-valued ones."""
    hidden = frozenset(hidden)
    env = {}
    for name, value in base.items():
        upper = name.upper()
        if (name in hidden or upper in DROPPED_NAMES or upper.startswith("PAICLI_") or is_secret_name(name)
                or is_session_name(name)):
            continue
        env[name] = without_credentials(value)
    return env
