"""Sensitive pages (paicli issue 40, item 3): banking, payment, password managers, mail and admin
consoles. In shared mode (the user's own Chrome, logged in) such a page is read-only for the
agent, and what shows it (a screenshot, a snapshot) reaches the model only after the person's
``y`` (``paicli.tools.browser.rules``).

A page is matched by its URL against glob patterns (PaiCLI's defaults, with mail and password
managers added) and by its title against a few words. ``$PAICLI_HOME/browser/sensitive_patterns.txt``
adds patterns of the user's own, one a line (``#`` comments); it can add, never remove.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# PaiCLI's SensitivePagePolicy defaults, then mail, password managers and browser settings.
DEFAULT_PATTERNS = (
    "*://*.bank.*/*", "*://*bank*.com/*", "*://*bank*.cn/*", "*://*.alipay.com/*", "*://*.paypal.com/*",
    "*://paypal.com/*", "*://*.stripe.com/*", "*://pay.weixin.qq.com/*", "*://*.pay.*/*",
    "*://github.com/settings/*", "*://*.github.com/settings/*", "*://github.com/*/settings/*",
    "*://*.github.com/*/settings/*", "*://*.feishu.cn/admin/*", "*://*.larksuite.com/admin/*",
    "*://*.console.cloud.google.com/*", "*://console.cloud.google.com/*", "*://*.console.aws.amazon.com/*",
    "*://console.aws.amazon.com/*", "*://*.portal.azure.com/*", "*://portal.azure.com/*", "*://*/admin/*",
    "*://*/wp-admin/*", "*://mail.*/*", "*://*.mail.*/*", "*://outlook.live.com/*", "*://outlook.office.com/*",
    "*://*.1password.com/*", "*://vault.bitwarden.com/*", "*://*.lastpass.com/*", "*://passwords.google.com/*",
    "chrome://settings/*", "chrome://password-manager/*",
)
TITLE_WORDS = re.compile(
    r"(?i)网上银行|网银|手机银行|银行|支付|付款|收银台|密码管理|收件箱|邮箱|管理后台|管理控制台|控制台"
    r"|\bbank(?:ing)?\b|\bpayment|\bcheckout\b|password manager|\binbox\b|\bwebmail\b|admin console|\bdashboard\b.*\badmin\b")


@dataclass(frozen=True)
class Match:
    rule: str  # the pattern or title word that matched, for the notice


class SensitivePages:
    def __init__(self, user_file: Path | None = None):
        patterns = list(DEFAULT_PATTERNS)
        if user_file is not None:
            try:
                lines = user_file.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                lines = []  # a missing or unreadable file keeps the defaults
            patterns += [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
        self.rules = [(p, re.compile(_glob(p.lower()))) for p in patterns]

    def match(self, url: str | None, title: str | None = None) -> Match | None:
        text = (url or "").strip().lower()
        if text:
            with_path = text if re.match(r"^[a-z-]+://[^/]*/", text) else text + "/"
            for pattern, regex in self.rules:
                if regex.match(with_path):
                    return Match(pattern)
        found = TITLE_WORDS.search(title or "")
        return Match(f"标题含“{found.group(0)}”") if found else None


def _glob(glob: str) -> str:
    return "^" + "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob) + "$"
