"""The HTTP layer shared by the real providers: one lazily built ``httpx.AsyncClient``, timeouts,
retries with backoff, error mapping, API keys and redaction.

Everything that leaves this module is the project's own ``ProviderError``; httpx exceptions never
escape. Keys are read at request time and only ever placed in request headers: the recorded
request goes through ``redact_headers`` / ``redact_url`` first, which apply the one rule of
``inspector.core.credentials`` (the scenario's own headers are secret unless declared safe).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import certifi
import httpx
from pydantic import BaseModel, ConfigDict

from inspector.core import credentials
from inspector.core.credentials import REDACTED
from inspector.core.errors import ProviderError
from inspector.core.scenario import ModelConfig

Sleep = Callable[[float], Awaitable[None]]
KeyringGet = Callable[[str, str], "str | None"]

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 529})
KEYRING_SERVICE = "agent-inspector"
_MAX_MESSAGE = 500


class RetryPolicy(BaseModel):
    """Exponential backoff with full jitter; ``retry-after`` from the server wins when present."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    # A server's ``retry-after`` is honoured as given up to this; asking for longer ends the call
    # with the wait in the message (retrying sooner would only earn another 429).
    max_retry_after_s: float = 120.0

    def delay(self, retry: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after_s is not None:
            return max(retry_after_s, 0.0)
        ceiling = min(self.base_delay_s * (2**retry), self.max_delay_s)
        return rng.uniform(ceiling / 2, ceiling)  # jitter, but never a zero wait


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (delta seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def redact_headers(
    headers: Mapping[str, str], scenario_secret: frozenset[str] = frozenset()
) -> dict[str, str]:
    """The headers as they may be recorded: credential values replaced (``scenario_secret``: the
    scenario's own headers not declared safe, ``credentials.secret_headers``)."""
    return credentials.redact_headers(headers, scenario_secret)


def redact_url(url: str | httpx.URL) -> str:
    """The URL as it may be recorded: the user-info password and credential-named query
    values replaced."""
    return credentials.redact_url(str(url))


def _keyring_get(service: str, name: str) -> str | None:
    import keyring  # lazily: its backend discovery is slow and not needed without a key
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(service, name)
    except KeyringError:
        return None
    except Exception:  # a broken backend (dbus, locked wallet) must not crash a run
        return None


def resolve_api_key(
    env_name: str | None,
    *,
    environ: Mapping[str, str] | None = None,
    keyring_get: KeyringGet | None = None,
) -> str | None:
    """The key named by ``api_key_env``: the environment variable, else the OS keyring entry
    ``("agent-inspector", env_name)``. None when no key is configured; ``ProviderError`` when one
    is configured but found nowhere (the message names where to put it, never a value)."""
    if not env_name:
        return None
    env = os.environ if environ is None else environ
    if value := env.get(env_name):
        return value
    value = (keyring_get or _keyring_get)(KEYRING_SERVICE, env_name)
    if value:
        return value
    raise ProviderError(
        f"no API key: set the environment variable {env_name} or store it with "
        f"`keyring set {KEYRING_SERVICE} {env_name}`",
        kind="MissingApiKey",
    )


def timeout_for(model: ModelConfig) -> httpx.Timeout:
    """``timeout_s`` bounds connecting and each read (the gap between streamed bytes)."""
    return httpx.Timeout(model.timeout_s, connect=min(model.timeout_s, 10.0))


def one_line(text: str, limit: int = _MAX_MESSAGE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def provider_message(body: bytes | str | Any) -> str:
    """The provider's own error message from an error body, as-is (OpenAI, Anthropic, OpenRouter,
    llama.cpp and FastAPI envelopes), else the body text."""
    data: Any = body
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            data = json.loads(text)
        except ValueError:
            return one_line(text)
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            message = err.get("message") or err.get("detail")
            raw = (
                err.get("metadata", {}).get("raw")
                if isinstance(err.get("metadata"), dict)
                else None
            )
            if isinstance(message, str) and message:
                return one_line(f"{message}: {raw}" if isinstance(raw, str) and raw else message)
        elif isinstance(err, str) and err:
            return one_line(err)
        if "detail" in data:
            return one_line(json.dumps(data["detail"], ensure_ascii=False))
    return one_line(json.dumps(data, ensure_ascii=False) if not isinstance(data, str) else data)


def status_error(status: int, body: bytes | str | Any, *, provider: str) -> ProviderError:
    """An HTTP error status as a ``ProviderError`` carrying the provider's message."""
    message = provider_message(body) or httpx.codes.get_reason_phrase(status)
    return ProviderError(
        f"{provider}: HTTP {status}: {message}",
        status=status,
        retryable=status in RETRYABLE_STATUSES,
        kind="HTTPStatusError",
    )


def transport_error(exc: Exception, *, provider: str, partial_text: str = "") -> ProviderError:
    """An httpx transport failure as a ``ProviderError``. Failures before any byte of a response
    (connect errors, timeouts waiting for headers) are retryable; ``partial_text`` is what a
    stream had delivered when it broke off."""
    if isinstance(exc, httpx.ConnectTimeout):
        what, kind = "connect timeout", "ConnectTimeout"
    elif isinstance(exc, httpx.ReadTimeout):
        what, kind = "read timeout (no data within timeout_s)", "ReadTimeout"
    elif isinstance(exc, httpx.TimeoutException):
        what, kind = "timeout", "Timeout"
    elif isinstance(exc, httpx.ConnectError):
        what, kind = "cannot connect", "ConnectError"
    elif isinstance(exc, httpx.RemoteProtocolError):
        what, kind = "connection closed by the server mid-response", "StreamCutOff"
    elif isinstance(exc, httpx.ReadError | httpx.WriteError):
        what, kind = "connection reset", "ConnectionReset"
    else:
        what, kind = type(exc).__name__, "TransportError"
    detail = one_line(str(exc), 200)
    message = f"{provider}: {what}" + (f" ({detail})" if detail and detail != what else "")
    if partial_text:
        message += f"; {len(partial_text)} characters of text had arrived"
    error = ProviderError(message, retryable=not partial_text, kind=kind)
    error.partial_text = partial_text
    return error


def secrets_of(request: httpx.Request, scenario_secret: frozenset[str] = frozenset()) -> list[str]:
    """The credential values a request carries (secret headers, secret-named query values, a
    URL password), so they can be scrubbed from anything that echoes them back."""
    values = credentials.secret_values(
        dict(request.headers),
        request.url.params.multi_items(),
        str(request.url),
        scenario_secret,
    )
    found = {part for v in values for part in (v, v.split(" ", 1)[-1]) if len(part) >= 8}
    return sorted(found, key=len, reverse=True)


def scrubbed(error: ProviderError, secrets: list[str]) -> ProviderError:
    """``error`` with any secret its message echoes (a server quoting the key) replaced."""
    message = str(error)
    if not any(secret in message for secret in secrets):
        return error
    for secret in secrets:
        message = message.replace(secret, REDACTED)
    clean = ProviderError(message, status=error.status, retryable=error.retryable, kind=error.kind)
    clean.transport_retries = error.transport_retries
    clean.partial_text = error.partial_text
    return clean


@dataclass
class Opened:
    """A request that got a 2xx answer: the streaming response and the retries it took."""

    response: httpx.Response
    retries: int
    request_url: str  # redacted
    request_headers: dict[str, str]  # redacted


def verify_for(environ: Mapping[str, str] = os.environ) -> ssl.SSLContext | bool:
    """TLS verification: httpx reads ``SSL_CERT_FILE``/``SSL_CERT_DIR`` itself, but a variable
    naming a file that is gone (common in frozen apps and stale shells) makes every call fail
    with FileNotFoundError; then certifi's bundle is used instead."""
    cafile = environ.get("SSL_CERT_FILE")
    if cafile and not os.path.isfile(cafile):
        return ssl.create_default_context(cafile=certifi.where())
    return True


class HttpSession:
    """One provider's HTTP plumbing. ``client`` is injectable (tests pass a ``MockTransport``
    client); otherwise one is built on first use and reused. ``sleep`` and ``rng`` drive the
    backoff so tests need not wait. With ``reuse_after_error=False`` an owned client is dropped
    after any failed exchange (servers like llama.cpp leave the kept-alive connection dead)."""

    def __init__(
        self,
        model: ModelConfig,
        *,
        provider: str,
        default_base_url: str,
        client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        retry: RetryPolicy | None = None,
        reuse_after_error: bool = True,
        keyring_get: KeyringGet | None = None,
        retry_statuses: frozenset[int] = RETRYABLE_STATUSES,
    ) -> None:
        self.model = model
        self.provider = provider
        # The scenario's headers whose values are recorded as [redacted] (not declared safe).
        self.secret_headers = credentials.secret_headers(model.headers, model.safe_headers)
        self.base_url = (model.base_url or default_base_url).rstrip("/")
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.retry = retry or RetryPolicy()
        self.reuse_after_error = reuse_after_error
        self._keyring_get = keyring_get
        self.retry_statuses = retry_statuses
        self._client = client
        self._owns_client = client is None
        self._prepared = False  # prepare() ran: the key below is the one to use
        self._key: str | None = None
        self._key_error: ProviderError | None = None

    def prepare(self) -> None:
        """Does the blocking set-up now, on the caller's (worker) thread: builds the client
        (SSL context) and looks the key up (the OS keyring may block on D-Bus). A missing key
        is kept and raised by the first request, so the run records it as before."""
        _ = self.client
        try:
            self._key = resolve_api_key(self.model.api_key_env, keyring_get=self._keyring_get)
        except ProviderError as exc:
            self._key_error = exc
        self._prepared = True

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=timeout_for(self.model), verify=verify_for())
        return self._client

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def api_key(self) -> str | None:
        if self._prepared:
            if self._key_error is not None:
                raise self._key_error
            return self._key
        return resolve_api_key(self.model.api_key_env, keyring_get=self._keyring_get)

    def build_request(
        self, path: str, body: Any, *, auth_headers: Mapping[str, str] | None = None
    ) -> httpx.Request:
        """A POST of ``body`` as JSON to ``base_url/path`` with the scenario's extra headers and
        query params (the scenario's headers win over ours except for auth)."""
        headers = {"content-type": "application/json", "accept": "application/json"}
        headers.update(self.model.headers)
        headers.update(auth_headers or {})
        content = json.dumps(body, ensure_ascii=False).encode()
        return self.client.build_request(
            "POST",
            self.url(path),
            content=content,
            headers=headers,
            params=self.model.params or None,
            timeout=timeout_for(self.model),
        )

    async def _drop_connection(self) -> None:
        if not self.reuse_after_error:
            await self.aclose()

    @asynccontextmanager
    async def open(self, request: httpx.Request) -> AsyncIterator[Opened]:
        """Sends ``request`` (streaming), retrying retryable statuses and pre-response transport
        failures; yields the 2xx response, closed on exit (also on cancellation, which closes
        the connection at once). Any failure, inside the block too, leaves as ``ProviderError``
        with ``transport_retries`` set."""
        retries = 0
        recorded_url = redact_url(request.url)
        recorded_headers = redact_headers(dict(request.headers), self.secret_headers)
        secrets = secrets_of(request, self.secret_headers)
        while True:
            response: httpx.Response | None = None
            error: ProviderError
            retry_after: float | None = None
            try:
                response = await self.client.send(request, stream=True)
                if response.is_success:
                    break
                body = await response.aread()
                await response.aclose()
                error = status_error(response.status_code, body, provider=self.provider)
                error.retryable = response.status_code in self.retry_statuses
                retry_after = parse_retry_after(response.headers)
            except httpx.HTTPError as exc:
                if response is not None:
                    await response.aclose()
                error = transport_error(exc, provider=self.provider)
            await self._drop_connection()
            if retry_after is not None and retry_after > self.retry.max_retry_after_s:
                error = ProviderError(
                    f"{error} (the server asks to retry after {retry_after:g} s; not waiting that "
                    "long)",
                    status=error.status,
                    kind=error.kind,
                )
            if not error.retryable or retries >= self.retry.max_retries:
                error.transport_retries = retries
                raise scrubbed(error, secrets)
            await self.sleep(self.retry.delay(retries, retry_after, self.rng))
            retries += 1  # the same Request object goes out again (on a new client if dropped)
        try:
            yield Opened(response, retries, recorded_url, recorded_headers)
        except ProviderError as exc:
            exc.transport_retries = retries
            await self._drop_connection_after(response)
            clean = scrubbed(exc, secrets)
            if clean is exc:
                raise
            raise clean from None
        except httpx.HTTPError as exc:
            await self._drop_connection_after(response)
            error = transport_error(exc, provider=self.provider)
            error.retryable = False  # bytes were consumed: the caller decides, not us
            error.transport_retries = retries
            raise scrubbed(error, secrets) from exc
        finally:
            await response.aclose()

    async def _drop_connection_after(self, response: httpx.Response) -> None:
        await response.aclose()
        await self._drop_connection()


def host_of(url: str) -> str:
    return urlsplit(url).netloc
