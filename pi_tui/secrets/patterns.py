"""Built-in patterns for tokens whose shape gives them away, each switchable off by name
(settings ``secrets.disabledPatterns``). Shapes are the vendors' published formats."""

from __future__ import annotations

BUILTIN_PATTERNS: dict[str, str] = {
    "aws-access-key": r"A(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}(?![0-9A-Za-z])",
    "github-token": r"g(?:h[pousr]_[A-Za-z0-9]{36,255}|ithub_pat_[A-Za-z0-9_]{22,255})(?![0-9A-Za-z_])",
    "gitlab-token": r"glpat-[A-Za-z0-9_\-]{20,}",
    "slack-token": r"xox[abposr]-[A-Za-z0-9-]{10,}",
    "sk-key": r"sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}",
    "jwt": r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    "private-key": (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    ),
}
"""Name -> regex source. Each match is a secret in ``obfuscate`` mode, when it starts a word
(checked after the match: a leading ``\\b`` would cost the regex engine its fast scan for the
literal prefix every pattern starts with)."""
