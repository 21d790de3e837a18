"""What is a credential: the one decision the store, the exports and the logs share
(docs/store.md "What is stored, and what is not").

Three places hold credentials, and each has its rule:

- **Headers.** A header is secret when its name looks like a credential (``is_secret_name``:
  ``Authorization``, ``X-Api-Key``, ``Ocp-Apim-Subscription-Key``, ``PRIVATE-TOKEN``,
  ``X-Custom-Auth``...) — and every header a scenario sets in ``[model] headers`` is secret unless
  it is a protocol header (``SAFE_HEADERS``: ``anthropic-version``...) or the scenario declares
  it safe (``[model] safe_headers = ["X-Build"]``): a header value the scenario writes is there
  because the server needs it, and most such values authenticate.
- **Query parameters and ``[model] params``**: secret when the name looks like a credential
  (``key``, ``api-key``, ``token``, ``sig``...).
- **URLs**: the password of ``user:PASS@host``, and secret-named query values.

Elsewhere — messages, tool arguments, schemas, response bodies — only fields named exactly like a
credential (``is_secret_field``: ``api_key``, ``password``, ``client_secret``...) and whole
``Bearer <token>`` strings are secret; anything broader would rewrite the run itself (a tool's
``session_id`` argument) and break replays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from inspector.core.shared_list import SharedPrefix

REDACTED = "[redacted]"

# Protocol headers whose values never authenticate (lower case).
SAFE_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "anthropic-beta",
        "anthropic-version",
        "connection",
        "content-length",
        "content-type",
        "host",
        "http-referer",
        "openai-beta",
        "user-agent",
        "x-title",
    }
)
# A name made of these words (split at "-", "_", "." and case changes) is a credential's.
_SECRET_WORDS = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "key",
        "passwd",
        "password",
        "pwd",
        "secret",
        "session",
        "sig",
        "signature",
        "token",
    }
)
# JSON fields named exactly like a credential (the whole name, any case).
_SECRET_FIELD = re.compile(
    r"(^|[-_.])(authorization|proxy-authorization|api[-_]?key|x-api-key|cookie|set-cookie"
    r"|password|passwd|secret|client[-_]secret|access[-_]token|refresh[-_]token|auth[-_]token"
    r"|session[-_]token|bearer)$",
    re.IGNORECASE,
)
# An Authorization-style value under any name (a whole "Bearer <token>" string, nothing else).
_BEARER_VALUE = re.compile(r"^\s*bearer\s+[A-Za-z0-9._~+/=-]{8,}\s*$", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_URL_WITH_SECRET = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$", re.IGNORECASE)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("-", name).lower()) if w]


def is_secret_name(name: str) -> bool:
    """A header or query-parameter name that carries a credential (``X-Api-Key``,
    ``Ocp-Apim-Subscription-Key``, ``PRIVATE-TOKEN``, ``X-Custom-Auth``, ``key``, ``sig``)."""
    words = _words(name)
    if any(w in _SECRET_WORDS for w in words):
        return True
    joined = "".join(words)
    return "apikey" in joined or "accesstoken" in joined


def is_secret_field(name: str) -> bool:
    """A JSON field, anywhere in a body, named exactly like a credential."""
    return bool(_SECRET_FIELD.search(name))


def secret_headers(names: Iterable[str], safe: Iterable[str] = ()) -> frozenset[str]:
    """The lower-case names among a scenario's ``headers`` whose values are secret: all of them
    but the protocol headers and those declared ``safe``."""
    allowed = SAFE_HEADERS | {s.lower() for s in safe}
    return frozenset(n.lower() for n in names if n.lower() not in allowed or is_secret_name(n))


def header_is_secret(name: str, scenario_secret: frozenset[str] = frozenset()) -> bool:
    return _secret_name(name) or name.lower() in scenario_secret


def redact_headers(
    headers: Mapping[str, str], scenario_secret: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Headers as they may be recorded or shown."""
    return {
        k: (REDACTED if header_is_secret(k, scenario_secret) and v else v)
        for k, v in headers.items()
    }


def redact_url(url: str) -> str:
    """``url`` with the password of its user-info (a lone user name: all of it) and its
    secret-named query values redacted (the same string when there is nothing to redact)."""
    if not _URL_WITH_SECRET.match(url):
        return url
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        # user:PASS keeps the user name; a lone user name is often the token itself.
        shown = f"{user.split(':', 1)[0]}:{REDACTED}" if password else REDACTED
        netloc = f"{shown}@{host}" if user else netloc
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_name(k) and v for k, v in pairs):
            redacted = [(k, REDACTED if is_secret_name(k) and v else v) for k, v in pairs]
            query = urlencode(redacted, quote_via=quote, safe="[]")
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def secret_values(
    headers: Mapping[str, str],
    params: Iterable[tuple[str, str]],
    url: str = "",
    scenario_secret: frozenset[str] = frozenset(),
) -> list[str]:
    """The credential values a request carries, to scrub from error messages and logs."""
    values = [v for k, v in headers.items() if header_is_secret(k, scenario_secret)]
    values += [v for k, v in params if is_secret_name(k)]
    try:
        parts = urlsplit(url) if url else None
        values += [parts.password or parts.username or ""] if parts is not None else []
    except ValueError:
        pass
    return [v for v in values if v and v != REDACTED]


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` replaced (a server that echoed a key back)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


# Mappings whose keys are header / parameter names: the name rules apply inside them.
_HEADER_MAPPINGS = frozenset({"headers"})
_PARAM_MAPPINGS = frozenset({"params", "query"})
# Fields holding a URL, whose password and secret query values go.
_URL_FIELDS = frozenset({"base_url", "url", "endpoint"})


def redact(value: Any, *, by_name: bool = True) -> Any:
    """``value`` (JSON-like) with credentials redacted; the same object when nothing needed
    redacting (no copy on the hot path).

    Inside a ``headers`` mapping the header rule applies (its names, ``SAFE_HEADERS``), inside
    ``params`` / ``query`` the name rule, ``base_url`` / ``url`` fields lose their URL's
    secrets, whole ``Bearer ...`` strings go anywhere. ``by_name`` (bodies): fields named
    exactly like a credential go too.
    ``by_name=False`` (a scenario's source): only the places above, so the user's own schemas
    and arguments stay as they ran."""
    return _redact(value, by_name, None)


def redact_scenario_source(source: Any) -> Any:
    """A scenario's data as it may be stored or exported: its ``[model] headers`` secret unless
    safe (``safe_headers``), params by name, ``base_url`` without its password."""
    if not isinstance(source, dict):
        return redact(source, by_name=False)
    model = source.get("model")
    if not isinstance(model, dict):
        return redact(source, by_name=False)
    headers = model.get("headers")
    safe = model.get("safe_headers") or ()
    scenario_secret = (
        secret_headers(headers, safe if isinstance(safe, list) else ())
        if isinstance(headers, dict)
        else frozenset()
    )
    redacted_model = _redact(model, False, None, scenario_secret)
    rest = _redact(source, False, None)
    if redacted_model is model and rest is source:
        return source
    out = dict(rest) if rest is not source else dict(source)
    out["model"] = redacted_model
    return out


def redact_override(text: str) -> str:
    """A ``--set FIELD=VALUE`` override as a run may record it: VALUE redacted when the field it
    sets is one ``redact_scenario_source`` redacts in the scenario (any ``model.headers`` entry
    but a protocol header's, a credential-named param, a whole ``headers`` / ``params`` table),
    or is named exactly like a credential; a URL field loses its password. A run keeps its
    overrides to show them (``runs``, ``compare``, exports), not to run them again."""
    field, eq, value = text.partition("=")
    if not eq:
        return text
    path = [part.strip().lower() for part in field.strip().split(".")]
    name = path[-1]
    table = path[-2] if len(path) > 1 else ""
    if name in _URL_FIELDS:
        bare = value.strip()
        quote_ = bare[:1] if bare[:1] in ("'", '"') and bare[-1:] == bare[:1] else ""
        url = bare[1:-1] if quote_ else bare
        return f"{field}={quote_}{redact_url(url)}{quote_}"
    secret = (
        is_secret_field(name)
        or name in _HEADER_MAPPINGS | _PARAM_MAPPINGS
        or (table in _HEADER_MAPPINGS and name not in SAFE_HEADERS)
        or (table in _PARAM_MAPPINGS and _secret_name(name))
        or bool(_BEARER_VALUE.match(value.strip().strip("'\"")))
    )
    return f"{field}={REDACTED}" if secret and value.strip() else text


# What a scenario's source must hold, as compact JSON lower-cased, for its redaction to change
# anything: a key the walk treats specially, or the word of a bearer token.
_SOURCE_CLUES = (
    *(f'"{key}":' for key in sorted(_HEADER_MAPPINGS | _PARAM_MAPPINGS | _URL_FIELDS)),
    '"scenario_source":',
    "bearer",
)


def source_may_redact(text: str) -> bool:
    """Whether ``redact_scenario_source`` may change the value whose compact JSON (keys as they
    are, ``":"`` after each) is ``text``. False: it returns the value itself, so a long script
    need not be walked (a scripted turn of 1,000 steps: ~19 ms). Conservative: True may still
    change nothing."""
    low = text.lower()
    return any(clue in low for clue in _SOURCE_CLUES)


# What a key means to the walk, decided once per distinct key (keys repeat in every message).
_PLAIN, _FIELD_SECRET, _URL, _SOURCE, _HEADERS, _PARAMS = range(6)


@lru_cache(maxsize=4096)
def _role(key: str) -> int:
    lowered = key.lower()
    if lowered in _HEADER_MAPPINGS:
        return _HEADERS
    if lowered in _PARAM_MAPPINGS:
        return _PARAMS
    if lowered in _URL_FIELDS:
        return _URL
    if key == "scenario_source":
        return _SOURCE
    return _FIELD_SECRET if is_secret_field(key) else _PLAIN


def _schemas(item: Any) -> bool:
    """Whether ``item`` is a JSON schema's ``properties``: a non-empty mapping of names to
    schemas (each a mapping). A tool's ``password`` parameter is a name there, not a value."""
    return isinstance(item, dict) and bool(item) and all(isinstance(v, dict) for v in item.values())


def _redact_schemas(properties: dict[Any, Any], by_name: bool) -> dict[Any, Any]:
    """``properties`` with each schema walked (its defaults, examples...), its names kept: a
    tool's schema exported whole, so that the run imported back replays as recorded."""
    out = {name: _redact(schema, by_name, None) for name, schema in properties.items()}
    same = all(out[name] is schema for name, schema in properties.items())
    return properties if same else out


def _redact(
    value: Any,
    by_name: bool,
    mapping: str | None,
    scenario_secret: frozenset[str] = frozenset(),
) -> Any:
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new: Any = item
            if not isinstance(key, str):
                new = _redact(item, by_name, None)
            elif key == "properties" and _schemas(item):  # a JSON schema's: names, not values
                new = _redact_schemas(item, by_name)
            elif mapping is not None:  # a header or parameter name
                secret = (
                    header_is_secret(key, scenario_secret)
                    if mapping == "headers"
                    else _secret_name(key)
                )
                if secret and item not in (None, "", REDACTED):
                    new = REDACTED
                else:
                    new = _redact(item, by_name, None)
            else:
                role = _role(key)
                if role == _FIELD_SECRET and by_name and item not in (None, "", REDACTED):
                    new = REDACTED
                elif role == _URL and isinstance(item, str):
                    new = redact_url(item)
                elif role == _SOURCE:
                    new = redact_scenario_source(item)
                elif role == _HEADERS:
                    new = _redact(item, by_name, "headers", scenario_secret)
                elif role == _PARAMS:
                    new = _redact(item, by_name, "params")
                elif isinstance(item, dict | list | SharedPrefix | str):
                    new = _redact(item, by_name, None)
            changed = changed or new is not item
            out[key] = new
        return out if changed else value
    if isinstance(value, list | SharedPrefix):  # a view: a loaded run's raw wire messages
        items = [_redact(item, by_name, mapping, scenario_secret) for item in value]
        changed = any(a is not b for a, b in zip(items, value, strict=True))
        return items if changed else value
    if isinstance(value, str) and _BEARER_VALUE.match(value):
        return REDACTED
    return value


@lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    return is_secret_name(name)
