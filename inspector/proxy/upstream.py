"""Where a proxied call goes and with which headers: the client's own, minus hop-by-hop headers
and the proxy's grouping header, plus the upstream's key only when the client sent none.

Keys are only ever placed in the outgoing headers; what is recorded goes through the
providers' ``redact_headers`` / ``redact_url`` (and the store redacts again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from inspector.core.errors import ProviderError
from inspector.providers.http import resolve_api_key
from inspector.proxy.normalize import Api

__all__ = [
    "ANTHROPIC_UPSTREAM",
    "KEY_ENV",
    "OPENAI_UPSTREAM",
    "RUN_HEADER",
    "Upstreams",
    "api_of",
    "request_headers",
    "response_headers",
]

OPENAI_UPSTREAM = "https://api.openai.com/v1"
ANTHROPIC_UPSTREAM = "https://api.anthropic.com/v1"
RUN_HEADER = "x-agent-inspector-run"
KEY_ENV: dict[Api, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_AUTH: dict[Api, str] = {"openai": "authorization", "anthropic": "x-api-key"}
_CLIENT_KEYS = frozenset({"authorization", "x-api-key", "api-key"})
# Hop-by-hop (RFC 9110 §7.6.1) and what the HTTP client sets itself for the new connection.
_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length",
})  # fmt: skip
# The reply reaches the client decoded (the proxy reads it to record it), so these go too.
_REPLY_DROP = _HOP | {"content-encoding"}


@dataclass(frozen=True)
class Upstreams:
    """The base URLs the proxy's ``/v1`` maps to, and the keys used when a client sends none
    (looked up once, at start: the OS keyring may block)."""

    openai: str = OPENAI_UPSTREAM
    anthropic: str = ANTHROPIC_UPSTREAM
    keys: Mapping[Api, str] | None = None

    def base(self, api: Api) -> str:
        return (self.openai if api == "openai" else self.anthropic).rstrip("/")

    def url(self, api: Api, path: str, query: str) -> str:
        """``/v1/chat/completions`` → ``{base}/chat/completions`` (a path outside ``/v1`` is
        appended as it is)."""
        rest = path.removeprefix("/v1") if path == "/v1" or path.startswith("/v1/") else path
        return self.base(api) + rest + (f"?{query}" if query else "")

    @classmethod
    def with_keys(cls, openai: str, anthropic: str) -> Upstreams:
        keys: dict[Api, str] = {}
        for api, env in KEY_ENV.items():
            try:
                key = resolve_api_key(env)
            except ProviderError:
                key = None
            if key:
                keys[api] = key
        return cls(openai, anthropic, keys)


def api_of(path: str, headers: Mapping[str, str]) -> Api:
    """Anthropic for ``/v1/messages`` and any call an Anthropic client makes (it always sends
    ``anthropic-version``); OpenAI-compatible otherwise."""
    if path.startswith("/v1/messages") or "anthropic-version" in headers:
        return "anthropic"
    return "openai"


def request_headers(
    api: Api, headers: Iterable[tuple[str, str]], upstreams: Upstreams
) -> list[tuple[str, str]]:
    out = [(k, v) for k, v in headers if k.lower() not in _HOP and k.lower() != RUN_HEADER]
    if not any(k.lower() in _CLIENT_KEYS for k, _ in out):
        key = (upstreams.keys or {}).get(api)
        if key:
            out.append((_AUTH[api], f"Bearer {key}" if api == "openai" else key))
    return out


def response_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k.lower() not in _REPLY_DROP]
