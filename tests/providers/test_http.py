"""The shared HTTP layer: retries, error mapping, keys, redaction; against a loopback server."""

from __future__ import annotations

import random
import socket
import ssl
from pathlib import Path

import httpx
import pytest

from inspector.core.errors import ProviderError
from inspector.core.scenario import ModelConfig
from inspector.providers.http import (
    REDACTED,
    HttpSession,
    RetryPolicy,
    parse_retry_after,
    provider_message,
    redact_headers,
    redact_url,
    resolve_api_key,
    status_error,
    transport_error,
)
from tests.providers.conftest import RecordingSleep
from tests.providers.loopback import LoopbackServer, json_reply, sse_reply

SECRET = "sk-test-DO-NOT-LEAK-1234567890"


def session(server: LoopbackServer, sleep: RecordingSleep, **model: object) -> HttpSession:
    config = ModelConfig.model_validate(
        {"provider": "openai", "name": "m", "base_url": server.base_url, **model}
    )
    return HttpSession(
        config, provider="test", default_base_url="http://unused", sleep=sleep,
        rng=random.Random(7),
    )  # fmt: skip


# --- pure pieces -----------------------------------------------------------------------------


def test_backoff_grows_with_jitter_and_retry_after_wins() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(1)
    delays = [policy.delay(n, None, rng) for n in range(5)]
    for n, delay in enumerate(delays):
        ceiling = min(2**n, 8.0)
        assert ceiling / 2 <= delay <= ceiling
    assert policy.delay(0, 3.5, rng) == 3.5
    assert policy.delay(0, 60, rng) == 60  # the server's wait is honoured, not capped


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480) == 10
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_redaction_of_headers_and_url() -> None:
    headers = redact_headers(
        {"Authorization": f"Bearer {SECRET}", "x-api-key": SECRET, "content-type": "a/b"}
    )
    assert headers == {"Authorization": REDACTED, "x-api-key": REDACTED, "content-type": "a/b"}
    url = redact_url(f"https://u:{SECRET}@h/v1/x?api-version=1&key={SECRET}")
    assert SECRET not in url
    assert "api-version=1" in url


def test_api_key_from_env_then_keyring_then_clear_error() -> None:
    asked: list[tuple[str, str]] = []

    def keyring_get(service: str, name: str) -> str | None:
        asked.append((service, name))
        return "from-keyring" if name == "IN_RING" else None

    assert resolve_api_key(None, environ={}, keyring_get=keyring_get) is None
    assert resolve_api_key("K", environ={"K": "from-env"}, keyring_get=keyring_get) == "from-env"
    assert resolve_api_key("IN_RING", environ={}, keyring_get=keyring_get) == "from-keyring"
    assert asked == [("agent-inspector", "IN_RING")]
    with pytest.raises(ProviderError, match="MISSING_KEY") as info:
        resolve_api_key("MISSING_KEY", environ={}, keyring_get=keyring_get)
    assert info.value.kind == "MissingApiKey"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": {"message": "Bad\\nthing", "type": "x"}}', "Bad thing"),
        (b'{"type":"error","error":{"type":"overloaded_error","message":"Busy"}}', "Busy"),
        (b'{"error":{"code":429,"message":"Provider error","metadata":{"raw":"slow down"}}}',
         "Provider error: slow down"),
        (b'{"detail": "Not Found"}', "Not Found"),
        (b"<html>\n gateway  timeout </html>", "<html> gateway timeout </html>"),
    ],
)  # fmt: skip
def test_provider_message_is_shown_as_is_on_one_line(body: bytes, expected: str) -> None:
    assert provider_message(body) == expected


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retryable(status: int) -> None:
    error = status_error(status, b'{"error":{"message":"nope"}}', provider="openai")
    assert not error.retryable
    assert error.status == status
    assert str(error) == f"openai: HTTP {status}: nope"


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 529])
def test_overload_and_server_errors_are_retryable(status: int) -> None:
    assert status_error(status, b"", provider="openai").retryable


def test_transport_errors_name_what_happened() -> None:
    cut = transport_error(httpx.RemoteProtocolError("peer closed"), provider="p", partial_text="ab")
    assert cut.kind == "StreamCutOff"
    assert cut.partial_text == "ab"
    assert not cut.retryable
    assert transport_error(httpx.ConnectTimeout("x"), provider="p").retryable
    assert "read timeout" in str(transport_error(httpx.ReadTimeout("x"), provider="p"))


# --- against a real server -------------------------------------------------------------------


async def test_429_with_retry_after_then_success(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(
        json_reply({"error": {"message": "slow down"}}, status=429, headers={"retry-after": "2"}),
        json_reply({"error": {"message": "busy"}}, status=503),
        json_reply({"ok": True}),
    )
    http = session(loopback, no_sleep)
    async with http.open(http.build_request("chat", {"a": 1})) as opened:
        assert (await opened.response.aread()) == b'{"ok": true}'
    assert opened.retries == 2
    assert no_sleep.delays[0] == 2.0
    assert 0.25 <= no_sleep.delays[1] <= 1.0  # backoff for the second retry, jittered
    assert [r.json() for r in loopback.received] == [{"a": 1}] * 3
    await http.aclose()


async def test_a_retry_after_beyond_the_ceiling_ends_the_call_with_the_wait(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(
        json_reply({"error": {"message": "quota"}}, status=429, headers={"retry-after": "3600"})
    )
    http = session(loopback, no_sleep)
    with pytest.raises(ProviderError) as info:
        async with http.open(http.build_request("chat", {})):
            pass
    assert str(info.value) == (
        "test: HTTP 429: quota (the server asks to retry after 3600 s; not waiting that long)"
    )
    assert info.value.status == 429 and not info.value.retryable
    assert no_sleep.delays == [] and len(loopback.received) == 1
    await http.aclose()


async def test_400_is_not_retried_and_gives_the_message(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(json_reply({"error": {"message": "Unsupported value: 'x'"}}, status=400))
    http = session(loopback, no_sleep)
    with pytest.raises(ProviderError) as info:
        async with http.open(http.build_request("chat", {})):
            pass
    assert str(info.value) == "test: HTTP 400: Unsupported value: 'x'"
    assert info.value.transport_retries == 0
    assert len(loopback.received) == 1
    await http.aclose()


async def test_retries_give_up_and_count(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(*[json_reply({"error": {"message": "down"}}, status=502) for _ in range(4)])
    http = session(loopback, no_sleep)
    with pytest.raises(ProviderError, match="HTTP 502: down") as info:
        async with http.open(http.build_request("chat", {})):
            pass
    assert info.value.transport_retries == 3
    assert info.value.retryable
    assert len(loopback.received) == 4
    await http.aclose()


async def test_connection_refused_is_a_provider_error(no_sleep: RecordingSleep) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before use: nothing listens there
    config = ModelConfig(provider="openai", base_url=f"http://127.0.0.1:{port}/v1")
    http = HttpSession(config, provider="p", default_base_url="x", sleep=no_sleep)
    with pytest.raises(ProviderError, match="cannot connect") as info:
        async with http.open(http.build_request("chat", {})):
            pass
    assert info.value.kind == "ConnectError"
    assert info.value.transport_retries == 3
    await http.aclose()


async def test_cut_off_body_inside_the_block_becomes_provider_error(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(sse_reply(b"data: 1\n\n" * 10, chunk_size=9, cut_after=30))
    http = session(loopback, no_sleep)
    with pytest.raises(ProviderError) as info:
        async with http.open(http.build_request("chat", {})) as opened:
            async for _ in opened.response.aiter_bytes():
                pass
    assert info.value.kind == "StreamCutOff"
    await http.aclose()


async def test_headers_params_and_key_go_out_but_are_recorded_redacted(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(json_reply({}))
    http = session(
        loopback,
        no_sleep,
        headers={"X-Gateway": "g1"},
        params={"api-version": "2024", "key": SECRET},
    )
    request = http.build_request("chat", {}, auth_headers={"authorization": f"Bearer {SECRET}"})
    async with http.open(request) as opened:
        pass
    seen = loopback.received[0]
    assert seen.headers["x-gateway"] == "g1"
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    assert "api-version=2024" in seen.path
    assert SECRET not in repr((opened.request_url, opened.request_headers))
    assert opened.request_headers["authorization"] == REDACTED
    await http.aclose()


async def test_owned_client_is_dropped_after_error_when_asked(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(json_reply({"error": {"message": "bad"}}, status=400), json_reply({}))
    config = ModelConfig(provider="openai", base_url=loopback.base_url)
    http = HttpSession(
        config, provider="p", default_base_url="x", sleep=no_sleep, reuse_after_error=False
    )
    first = http.client
    with pytest.raises(ProviderError):
        async with http.open(http.build_request("chat", {})):
            pass
    assert http.client is not first
    async with http.open(http.build_request("chat", {})):
        pass
    await http.aclose()


async def test_a_server_echoing_the_key_never_gets_it_into_the_error(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    loopback.queue(
        json_reply({"error": {"message": f"Incorrect API key provided: {SECRET}."}}, status=401)
    )
    http = session(loopback, no_sleep)
    request = http.build_request("chat", {}, auth_headers={"authorization": f"Bearer {SECRET}"})
    with pytest.raises(ProviderError) as info:
        async with http.open(request):
            pass
    assert str(info.value) == f"test: HTTP 401: Incorrect API key provided: {REDACTED}."
    assert info.value.status == 401 and not info.value.retryable
    await http.aclose()


def test_a_missing_ssl_cert_file_falls_back_to_certifi(tmp_path: Path) -> None:
    from inspector.providers.http import verify_for

    assert verify_for({}) is True  # httpx's own defaults
    assert verify_for({"SSL_CERT_FILE": __file__}) is True  # an existing file is httpx's to use
    context = verify_for({"SSL_CERT_FILE": str(tmp_path / "gone.pem")})
    assert isinstance(context, ssl.SSLContext)
    assert context.cert_store_stats()["x509_ca"] > 0  # certifi's roots are loaded


async def test_prepare_builds_the_client_and_looks_the_key_up_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PREPARED_KEY", raising=False)
    monkeypatch.delenv("ABSENT_KEY", raising=False)
    lookups: list[str] = []

    def keyring_get(service: str, name: str) -> str | None:
        lookups.append(name)
        return "from-keyring" if name == "PREPARED_KEY" else None

    config = ModelConfig(provider="openai", api_key_env="PREPARED_KEY")
    http = HttpSession(config, provider="p", default_base_url="x", keyring_get=keyring_get)
    assert http._client is None
    http.prepare()
    assert http._client is not None and lookups == ["PREPARED_KEY"]
    assert http.api_key() == "from-keyring" and http.api_key() == "from-keyring"
    assert lookups == ["PREPARED_KEY"]  # cached: no keyring call at request time
    await http.aclose()

    missing = ModelConfig(provider="openai", api_key_env="ABSENT_KEY")
    http = HttpSession(missing, provider="p", default_base_url="x", keyring_get=keyring_get)
    http.prepare()  # a missing key is the first request's error, recorded in the run
    with pytest.raises(ProviderError, match="ABSENT_KEY"):
        http.api_key()
    assert lookups.count("ABSENT_KEY") == 1
    await http.aclose()
