"""Defensive redaction for exports: nothing that looks like an API key leaves in a file.

Keys are redacted at capture already (the providers strip auth headers from raw bodies); this is
the second line, for whatever slipped through — a key pasted into a prompt, a header set in the
scenario's ``[model] headers``, a provider that echoed one back.
"""

from __future__ import annotations

import json
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


# What ``redact`` or ``scrub_keys`` could change shows in a value's JSON text (lower-cased) as
# a credential name followed by ``:``/``=`` (a key, or a ``Name: value`` header in a string),
# ``sk-`` after a non-word character, or ``bearer ``. JSON escapes none of these characters; a
# character before or between them that it does escape (``\n``, ``\"``, ``\u0001``) is
# allowed for explicitly. Over-matching only costs the slow path.
_ESCAPE = r'(?:\\[nrtbf"\\/]|\\u[0-9a-f]{4})'
_AFTER_NAME = re.compile(rf'(?:\s|"|{_ESCAPE})*[:=]')
_ESCAPE_BEFORE = re.compile(rf"{_ESCAPE}$")


def _may_hold_secrets(text: str) -> bool:
    low = text.lower()
    if "bearer " in low:
        return True
    for name in SECRET_NAMES:
        at = low.find(name)
        while at != -1:
            if _AFTER_NAME.match(low, at + len(name)):
                return True
            at = low.find(name, at + 1)
    at = low.find("sk-")
    while at != -1:
        before = low[max(at - 6, 0) : at]
        if not before or not (before[-1].isalnum() or before[-1] == "_"):
            return True
        if _ESCAPE_BEFORE.search(before):
            return True
        at = low.find("sk-", at + 1)
    return False


def redacted_json(value: Any) -> str:
    """Compact JSON of ``value`` as ``scrub_keys(dumps(redact(value)))`` would write it, without
    walking the value when its text holds nothing to redact (the usual case: a long run's
    export walked every message of every line in Python)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if not _may_hold_secrets(text):
        return text
    return scrub_keys(json.dumps(redact(value), ensure_ascii=False, separators=(",", ":")))


def redacted(value: Any) -> Any:
    """``redact(value)``, or ``value`` itself when its JSON text shows nothing to redact (a C
    pass instead of a Python walk of every string)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return redact(value) if _may_hold_secrets(text) else value


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
