"""Defensive redaction for exports: nothing that looks like an API key leaves in a file.

What is a credential is decided in one place, ``inspector.core.credentials`` (headers, params,
URLs, scenario headers unless declared safe, credential-named fields), exactly as for the store
and the logs. Exports add a second line for whatever slipped into free text: key-shaped tokens
(``sk-…``, ``Bearer …``) and ``Name: value`` credential headers written out inside a string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from inspector.core import credentials
from inspector.core.credentials import REDACTED
from inspector.core.shared_list import SharedPrefix

__all__ = [
    "REDACTED",
    "header_line_spans",
    "json_value_spans",
    "may_hold_secrets",
    "redact",
    "redact_text",
    "scrub_keys",
    "token_spans",
]

# OpenAI (sk-…, sk-proj-…) and Anthropic (sk-ant-…) keys, and bearer tokens. These patterns only
# consume characters that JSON and HTML leave as they are, so they can also scrub rendered text.
_TOKEN = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}"
    r"|(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}",
    re.IGNORECASE,
)
# "Authorization: …" / "x-api-key=…" written out inside a string (a raw header dump, a log line):
# a name the credentials module calls a credential field, then its value, bare or quoted
# (``password = "…"`` as TOML and a ``--set`` override write it, ``password='…'``).
_HEADER_LINE = re.compile(
    r"\b([A-Za-z][A-Za-z0-9_.-]*)(\s*[:=]\s*[\"']?)(?!\[redacted\])"
    r"([^\s,;\"'}]+(?:\s+[^\s,;\"'}:=]+(?=[\s,;\"'}]|$))?)"
)
# (A second word, "Bearer <token>"'s, is one that does not name the next pair: "k1 password:".)


def _secret_header_lines(text: str) -> list[re.Match[str]]:
    """The ``Name: value`` pairs of ``text`` whose name is a credential field's. A pair of
    another name is passed over from its separator on, not its value: in "config: password=x"
    the value of ``config`` is not read as "password=x" whole."""
    found = []
    at = 0
    while (match := _HEADER_LINE.search(text, at)) is not None:
        if credentials.is_secret_field(match.group(1)):
            found.append(match)
            at = match.end()
        else:
            at = match.end(1)
    return found


# Names after which ``core.credentials`` may redact a value: the endings of a credential field
# (``is_secret_field``), the mappings it redacts by their own rules (``headers``, ``params``,
# ``query``) and the URL fields whose password or query it redacts (``url``, ``base_url``,
# ``endpoint``). Over-matching only costs the slow path.
_NEEDLES = (
    "authorization",
    "apikey",
    "api_key",
    "api-key",
    "cookie",
    "password",
    "passwd",
    "secret",
    "access_token",
    "access-token",
    "refresh_token",
    "refresh-token",
    "auth_token",
    "auth-token",
    "session_token",
    "session-token",
    "bearer",
    "headers",
    "params",
    "query",
    "url",
    "endpoint",
)

# What ``redact`` or ``scrub_keys`` could change shows in a value's JSON text (lower-cased) as
# one of those names followed by ``:``/``=`` (a key, or a ``Name: value`` header in a string),
# ``sk-`` after a non-word character, or ``bearer ``. JSON escapes none of these characters; a
# character before or between them that it does escape (``\n``, ``\"``, ``\u0001``) is
# allowed for explicitly. Over-matching only costs the slow path.
_ESCAPE = r'(?:\\[nrtbf"\\/]|\\u[0-9a-f]{4})'
_AFTER_NAME = re.compile(rf'(?:\s|"|{_ESCAPE})*[:=]')
_ESCAPE_BEFORE = re.compile(rf"{_ESCAPE}$")
# A key that names a secret, a mapping or a URL but holds nothing (``"base_url":null``,
# ``"headers":{}``: every scenario's model section) leaves nothing to redact. The quote is
# unescaped, so it ends a key (a string value is never followed by ``:``); the text is compact.
_NOTHING_AFTER = ('":null', '":{}', '":[]')


# Each name contains one of these words: a text without the word cannot hold its names, and a
# word is one C-level ``in`` test (most texts hold none of them; they are not searched name by
# name).
_WORDS = (
    "auth",
    "key",
    "pass",
    "token",
    "cookie",
    "secret",
    "headers",
    "params",
    "query",
    "url",
    "endpoint",
)
_BY_WORD = tuple(
    (word, tuple(n for n in _NEEDLES if word in n and not any(w in n for w in _WORDS[:i])))
    for i, word in enumerate(_WORDS)
)
assert {n for _, names in _BY_WORD for n in names} | {"bearer"} == set(_NEEDLES)
# Per word, one search for its names followed by ``:``/``=`` and not by nothing
# (``_AFTER_NAME``, ``_NOTHING_AFTER``), every place each name occurs, in one C call. The
# search looks for the word itself (a literal the regex engine finds fast, where an alternation
# of names is tried at every character), then for the rest of a name and, behind it, the name.
_NOTHING = "|".join(re.escape(n) for n in _NOTHING_AFTER)


def _announcing(word: str, names: tuple[str, ...]) -> re.Pattern[str]:
    rests = [f"{re.escape(n[n.index(word) + len(word) :])}(?<={re.escape(n)})" for n in names]
    after = f"(?!{_NOTHING}){_AFTER_NAME.pattern}"
    return re.compile(f"{re.escape(word)}(?:{'|'.join(rests)}){after}")


_ANNOUNCED = tuple((word, _announcing(word, names)) for word, names in _BY_WORD)


# A JSON object's key (a string followed by ``:``) inside a string.
_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*')
_DECODER = json.JSONDecoder()
_BARE_VALUE = re.compile(r"[^\s,;}\]]*")
_QUOTED_REDACTED = json.dumps(REDACTED)


def may_hold_secrets(text: str) -> bool:
    """False when ``text`` (compact JSON) surely holds nothing ``redact`` or ``scrub_keys``
    would change; True when it may."""
    low = text.lower()
    if "bearer" in low:  # a "Bearer <token>" value, whatever whitespace follows
        return True
    if "://" in low and "@" in low and _URL_USERINFO.search(low):
        return True
    for word, announced in _ANNOUNCED:  # ``in`` first: the fastest search of an absent word
        if word in low and announced.search(low):
            return True
    if "sk-" not in low:
        return False
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
    if not may_hold_secrets(text):
        return text
    return scrub_keys(json.dumps(redact(value), ensure_ascii=False, separators=(",", ":")))


def redacted(value: Any) -> Any:
    """``redact(value)``, or ``value`` itself when its JSON text shows nothing to redact (a C
    pass instead of a Python walk of every string)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return redact(value) if may_hold_secrets(text) else value


def scrub_keys(text: str) -> str:
    """Replaces key-shaped tokens in rendered text (JSON or HTML) without breaking its syntax."""
    return _TOKEN.sub(REDACTED, text)


# A URL's user-info in free text (an error's ``https://bob:pw@proxy:8080``): what
# ``credentials.redact_url`` redacts of a URL field, the password, or a lone user name whole
# (often the token itself: ``https://ghp_…@github.com``).
_URL_USERINFO = re.compile(r"\b[a-z][a-z0-9+.-]*://([^\s/?#@\"'<>\\]+)@", re.IGNORECASE)


def url_userinfo_spans(text: str) -> list[tuple[int, int]]:
    """Where ``redact_text`` replaces a URL's password (or lone user name) in ``text``."""
    if "://" not in text or "@" not in text:
        return []
    spans = []
    for match in _URL_USERINFO.finditer(text):
        start, end = match.span(1)
        user, colon, _ = match.group(1).partition(":")
        if colon:
            start += len(user) + 1
        if start < end:
            spans.append((start, end))
    return spans


def token_spans(text: str) -> list[tuple[int, int]]:
    """Where ``scrub_keys`` replaces a key-shaped token in ``text``."""
    return [match.span() for match in _TOKEN.finditer(text)]


def header_line_spans(text: str) -> list[tuple[int, int]]:
    """Where ``redact_text`` replaces the value of a ``Name: value`` credential header."""
    if ":" not in text and "=" not in text:
        return []
    return [match.span(3) for match in _secret_header_lines(text)]


def json_value_spans(text: str) -> list[tuple[int, int]]:
    """Where a JSON text inside ``text`` (a tool call's arguments as the wire sends them, a
    logged body) holds the value of a field named like a credential (``core.credentials``), as
    far as the text goes (one cut short ends inside it). Redacted as ``"[redacted]"``: what the
    message's own arguments show, and the JSON stays JSON."""
    if '"' not in text:
        return []
    found = []
    for match in _json_keys(text):
        try:
            key = json.loads(f'"{match.group(1)}"')
        except ValueError:
            key = match.group(1)
        if not credentials.is_secret_field(key):
            continue
        start = match.end()
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:  # a string cut short runs to the end; prose, to its next break
            cut_short = text.startswith('"', start)
            value, end = ..., len(text) if cut_short else _bare_end(text, start)
        except RecursionError:  # nested deeper than the decoder goes: redacted to the end
            value, end = ..., len(text)
        if value not in (None, "", REDACTED) and end > start:
            found.append((start, end))
    return found


def _json_keys(text: str) -> Iterator[re.Match[str]]:
    """``_JSON_KEY``'s matches in ``text``, tried only at quotes no backslash escapes.

    Tried at every quote (``finditer``), the pattern scanned from each escaped quote of a
    string to the string's end: quadratic in a long string of escaped quotes (a tool call
    writing code: 144 kB of arguments took a minute). A match from an escaped quote could only
    pair it with the string's closing quote, never a credential's name."""
    at = 0
    quote = text.find('"')
    while quote != -1:
        if quote >= at and _unescaped(text, quote):
            match = _JSON_KEY.match(text, quote)
            if match is not None:
                yield match
                at = match.end()
        quote = text.find('"', quote + 1)


def _unescaped(text: str, quote: int) -> bool:
    """Whether the quote at ``quote`` follows an even number of backslashes."""
    before = quote
    while before > 0 and text[before - 1] == "\\":
        before -= 1
    return (quote - before) % 2 == 0


def _bare_end(text: str, start: int) -> int:
    match = _BARE_VALUE.match(text, start)
    return start if match is None else match.end()


def _json_values_redacted(text: str) -> str:
    spans = json_value_spans(text)
    if not spans:
        return text
    parts = []
    at = 0
    for start, end in spans:
        if start < at:  # inside the previous value (a JSON text nested in a string)
            continue
        parts += [text[at:start], _QUOTED_REDACTED]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def redact_text(text: str) -> str:
    """A string with keys, ``Name: value`` credential headers and credential-named JSON fields
    inside it redacted."""
    text = _json_values_redacted(text)
    text = _replaced(text, header_line_spans(text))  # none without ":" or "="
    return scrub_keys(_replaced(text, url_userinfo_spans(text)))


def _replaced(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` (in order, none overlapping) replaced by ``REDACTED``,
    in one join (one slice per span of the whole text was quadratic in a long log)."""
    if not spans:
        return text
    pieces, at = [], 0
    for start, end in spans:
        pieces += [text[at:start], REDACTED]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with credentials (``core.credentials``) and key-shaped
    strings redacted."""
    return _text(credentials.redact(value))


# What a scenario's source restates of the turn: the script's answers (tool calls' arguments, a
# structured ``final``) and the prompt's messages. The store keeps them as the user wrote them
# (``credentials.redact_scenario_source``); an export redacts their credential-named fields as
# it does the steps' messages that repeat them. Schemas (``tools``, ``output``) stay.
_SOURCE_TURN = ("script", "prompt")


def _source(source: Any) -> Any:
    if not isinstance(source, dict):
        return source
    return {k: credentials.redact(v) if k in _SOURCE_TURN else v for k, v in source.items()}


def _text(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _text(_source(v) if k == "scenario_source" else v) for k, v in value.items()}
    if isinstance(value, list | tuple | SharedPrefix):
        return [_text(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
