"""Helpers for the OpenAI adapter tests: the shared recorded wire fixtures (``openai-chat/`` and
``openai-compatible-local/``) and ``MockTransport`` clients that serve them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.providers.fixture_paths import WIRE, wire_folder

ROOT = WIRE
FOLDERS = ("openai-chat", "openai-compatible-local")
TEST_KEY = "sk-test-0123456789-NEVER-RECORD-ME"


def require_fixtures() -> Path:
    for folder in FOLDERS:
        wire_folder(folder)
    return ROOT


def recordings() -> list[str]:
    """Every OpenAI-format recording as ``folder/name`` (response files define a recording:
    some have no recorded request)."""
    for folder in FOLDERS:
        wire_folder(folder)  # an empty parametrization would pass silently
    found = {
        f"{folder}/{p.name.split('.response.')[0]}"
        for folder in FOLDERS
        for p in (ROOT / folder).glob("*.response.*")
    }
    return sorted(found)


def request_path(name: str) -> Path:
    return require_fixtures() / f"{name}.request.json"


def recorded_request(name: str) -> dict[str, Any] | None:
    path = request_path(name)
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def response_path(name: str) -> Path:
    root = require_fixtures()
    for suffix in (".response.sse", ".response.json"):
        if (root / f"{name}{suffix}").exists():
            return root / f"{name}{suffix}"
    raise FileNotFoundError(f"no response recorded for {name}")


def response_bytes(name: str) -> bytes:
    return response_path(name).read_bytes()


def recorded_status(name: str) -> int:
    """The HTTP status of a recording: error fixtures carry it in their name."""
    stem = name.split("/")[-1]
    if stem.startswith("error-"):
        return int(stem.split("-")[1])
    return 200


def is_sse(name: str) -> bool:
    return response_path(name).suffix == ".sse"


def replying(
    status: int,
    body: bytes,
    *,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
    seen: list[httpx.Request] | None = None,
) -> Callable[[httpx.Request], httpx.Response]:
    """A ``MockTransport`` handler answering every request with one recorded body."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(
            status, content=body, headers={"content-type": content_type, **(headers or {})}
        )

    return handler


def fixture_client(name: str, seen: list[httpx.Request] | None = None) -> httpx.AsyncClient:
    """A client whose every request gets the recording ``name`` as its reply."""
    content_type = "text/event-stream" if is_sse(name) else "application/json"
    handler = replying(
        recorded_status(name), response_bytes(name), content_type=content_type, seen=seen
    )
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))
