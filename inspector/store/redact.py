"""Defensive redaction at capture: providers already redact what they record, and the store
redacts again, so a key can reach the file only through a field no one could recognise.

Only where credentials live is redacted by name: inside ``headers`` / ``params`` / ``query``
mappings (the scenario's ``[model]`` and the raw request). Everything else — tool schemas,
arguments, messages, a ``password`` parameter of a user's tool — is the run itself and stays as
it was, or replay and re-validation would judge a different scenario than the one that ran."""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[redacted]"
# Names (headers, query parameters, JSON keys) whose values are credentials. Matched on the whole
# name, so body fields such as ``max_tokens`` are left alone.
_SECRET_NAME = re.compile(
    r"(^|[-_.])(authorization|proxy-authorization|api[-_]?key|x-api-key|cookie|set-cookie"
    r"|password|passwd|secret|client[-_]secret|access[-_]token|refresh[-_]token|auth[-_]token"
    r"|session[-_]token|bearer)$",
    re.IGNORECASE,
)
# An Authorization-style value under any name (a whole "Bearer <token>" string, nothing else).
_SECRET_VALUE = re.compile(r"^\s*bearer\s+[A-Za-z0-9._~+/=-]{8,}\s*$", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


_CREDENTIAL_MAPPINGS = frozenset({"headers", "params", "query"})


def redact(value: Any, *, by_name: bool = True) -> Any:
    """``value`` with credential-named fields and every whole ``Bearer ...`` string replaced;
    the same object when nothing needed redacting (no copy on the hot path).

    ``by_name=False`` (the scenario source): names count only inside ``headers`` / ``params`` /
    ``query`` mappings, so the user's own schemas and arguments stay exactly as they ran."""
    return _redact(value, by_name, by_name)


def _redact(value: Any, by_name: bool, here: bool) -> Any:
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            named = isinstance(key, str)
            if here and named and is_secret_name(key) and item not in (None, "", REDACTED):
                new: Any = REDACTED
            else:
                inner = by_name or (named and key.lower() in _CREDENTIAL_MAPPINGS)
                new = _redact(item, by_name, inner)
            changed = changed or new is not item
            out[key] = new
        return out if changed else value
    if isinstance(value, list):
        items = [_redact(item, by_name, here) for item in value]
        changed = any(a is not b for a, b in zip(items, value, strict=True))
        return items if changed else value
    if isinstance(value, str) and _SECRET_VALUE.match(value):
        return REDACTED
    return value
