"""Defensive redaction for exports: nothing that looks like an API key leaves in a file.

Keys are redacted at capture already (the providers strip auth headers from raw bodies); this is
the second line, for whatever slipped through — a key pasted into a prompt, a header set in the
scenario's ``[model] headers``, a provider that echoed one back.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[redacted]"

# Header and field names whose values are credentials, compared case-insensitively.
SECRET_NAMES = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "api_key",
        "apikey",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "access_token",
        "client_secret",
        "password",
    }
)

# OpenAI (sk-…, sk-proj-…) and Anthropic (sk-ant-…) keys, and bearer tokens. These patterns only
# consume characters that JSON and HTML leave as they are, so they can also scrub rendered text.
_TOKEN = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}"
    r"|(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}",
    re.IGNORECASE,
)
# "Authorization: …" / "x-api-key=…" written out inside a string (a raw header dump, a log line).
_HEADER_LINE = re.compile(
    r"\b(" + "|".join(re.escape(n) for n in sorted(SECRET_NAMES, key=len, reverse=True)) + r")"
    r"(\s*[:=]\s*)(?!\[redacted\])[^\s,;\"'}]+(?:\s+[^\s,;\"'}]+)?",
    re.IGNORECASE,
)


def scrub_keys(text: str) -> str:
    """Replaces key-shaped tokens in rendered text (JSON or HTML) without breaking its syntax."""
    return _TOKEN.sub(REDACTED, text)


def redact_text(text: str) -> str:
    """A string with keys and ``Name: value`` credential headers inside it redacted."""
    return scrub_keys(_HEADER_LINE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text))


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with credential fields and key-shaped strings redacted."""
    if isinstance(value, dict):
        return {
            k: (REDACTED if _is_secret_name(k) and v not in (None, "") else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def _is_secret_name(key: object) -> bool:
    return isinstance(key, str) and key.lower() in SECRET_NAMES
