"""What llama-cpp-python's server does, on the wire, with no adapter in between. The adapter's
``llama.cpp`` profile works around each of these; if a new server version stops doing one of
them, its test fails here and the profile can be relaxed."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.local_model.wire_cases import CASES, WireCase

pytestmark = pytest.mark.local_model
BY_NAME = {case.name: case for case in CASES}


def post(url: str, case: WireCase) -> httpx.Response:
    with httpx.Client(timeout=50) as client:
        return client.post(f"{url}/chat/completions", json=case.body)


def sse_chunks(body: str) -> list[dict[str, Any]]:
    data = [line.removeprefix("data: ") for line in body.splitlines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_status_and_body_kind(plain_url: str, case: WireCase) -> None:
    response = post(plain_url, case)
    assert response.status_code == case.status
    if case.empty_body:
        assert response.content == b""
    elif case.streamed:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert sse_chunks(response.text)
    else:
        assert response.headers["content-type"] == "application/json"
        data = response.json()
        assert ("error" in data) == (case.status == 500)


def test_streamed_tool_call_chunks_repeat_id_and_name(plain_url: str) -> None:
    response = post(plain_url, BY_NAME["stream-named-tool-repeated-id-name"])
    calls = [
        call
        for chunk in sse_chunks(response.text)
        for call in chunk["choices"][0]["delta"].get("tool_calls") or []
    ]
    assert len(calls) > 1
    assert {c["index"] for c in calls} == {0}
    # Every fragment carries the same id and the full name: concatenating them (as the OpenAI
    # SDK does for deltas) would give "lookup_contactlookup_contact...".
    assert {c["id"] for c in calls} == {calls[0]["id"]}
    assert {c["function"]["name"] for c in calls} == {"lookup_contact"}
    arguments = "".join(c["function"]["arguments"] for c in calls)
    assert isinstance(json.loads(arguments), dict)


def test_stream_text_sends_no_usage_even_when_asked(plain_url: str) -> None:
    chunks = sse_chunks(post(plain_url, BY_NAME["stream-text"]).text)
    assert all("usage" not in c or c["usage"] is None for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")


def test_error_bodies_are_openai_shaped_500s(plain_url: str) -> None:
    for name in ("error-500-json-schema-rejected", "error-500-assistant-content-null"):
        error = post(plain_url, BY_NAME[name]).json()["error"]
        assert error["type"] == "internal_server_error"
        assert "validation error" in error["message"]
    assert (
        post(plain_url, BY_NAME["error-500-tool-choice-required"]).json()["error"]["message"] == ""
    )


def _two_requests_on_one_connection(url: str, first: WireCase) -> tuple[str, int | str]:
    """Sends ``first`` then ``text`` over one kept-alive connection (http.client reuses it as
    the server's ``connection: keep-alive`` promises, without httpx's liveness check)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=50)
    headers = {"content-type": "application/json"}
    try:
        conn.request("POST", f"{parts.path}/chat/completions", json.dumps(first.body), headers)
        response = conn.getresponse()
        response.read()
        promised = response.getheader("connection", "")
        conn.request(
            "POST", f"{parts.path}/chat/completions", json.dumps(BY_NAME["text"].body), headers
        )
        try:
            second: int | str = conn.getresponse().status
        except (http.client.RemoteDisconnected, ConnectionError) as exc:
            second = type(exc).__name__
    finally:
        conn.close()
    return promised, second


def test_kept_alive_connection_is_dead_after_an_empty_stream(plain_url: str) -> None:
    """The empty 200 says ``connection: keep-alive``, then the server closes the connection: a
    request sent on it gets no answer. After an ordinary reply the same connection works."""
    promised, second = _two_requests_on_one_connection(
        plain_url, BY_NAME["stream-tool-choice-required-empty"]
    )
    assert promised == "keep-alive"
    assert second != 200
    assert _two_requests_on_one_connection(plain_url, BY_NAME["text"])[1] == 200
