"""Defensive redaction for exports: nothing that looks like an API key leaves in a file.

What is a credential is decided in one place, ``inspector.core.credentials`` (headers, params,
URLs, scenario headers unless declared safe, credential-named fields), exactly as for the store
and the logs. Exports add a second line for whatever slipped into free text: key-shaped tokens
(``sk-…``, ``Bearer …``) and ``Name: value`` credential headers written out inside a string.
"""

from __future__ import annotations

import re
from typing import Any

from inspector.core import credentials
from inspector.core.credentials import REDACTED

__all__ = ["REDACTED", "redact", "redact_text", "scrub_keys"]

# OpenAI (sk-…, sk-proj-…) and Anthropic (sk-ant-…) keys, and bearer tokens. These patterns only
# consume characters that JSON and HTML leave as they are, so they can also scrub rendered text.
_TOKEN = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}"
    r"|(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}",
    re.IGNORECASE,
)
# "Authorization: …" / "x-api-key=…" written out inside a string (a raw header dump, a log line):
# a name the credentials module calls a credential field, then its value.
_HEADER_LINE = re.compile(
    r"\b([A-Za-z][A-Za-z0-9_.-]*)(\s*[:=]\s*)(?!\[redacted\])([^\s,;\"'}]+(?:\s+[^\s,;\"'}]+)?)"
)


def scrub_keys(text: str) -> str:
    """Replaces key-shaped tokens in rendered text (JSON or HTML) without breaking its syntax."""
    return _TOKEN.sub(REDACTED, text)


def _header_line(match: re.Match[str]) -> str:
    name, sep, _ = match.groups()
    if credentials.is_secret_field(name):
        return f"{name}{sep}{REDACTED}"
    return match.group(0)


def redact_text(text: str) -> str:
    """A string with keys and ``Name: value`` credential headers inside it redacted."""
    if ":" in text or "=" in text:
        text = _HEADER_LINE.sub(_header_line, text)
    return scrub_keys(text)


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with credentials (``core.credentials``) and key-shaped
    strings redacted."""
    return _text(credentials.redact(value))


def _text(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_text(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
