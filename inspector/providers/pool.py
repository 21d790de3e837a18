"""What many providers share (a sweep's concurrent runs): one HTTP client — one connection pool
sized to the concurrency, one SSL context — instead of a client per run, and each API key looked
up in the OS keyring once, not on every request."""

from __future__ import annotations

import functools

import httpx

from inspector.core.scenario import ModelConfig
from inspector.providers.http import KeyringGet, _keyring_get, timeout_for, verify_for


def shared_client(model: ModelConfig, connections: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(timeout=timeout_for(model), verify=verify_for(), limits=limits)


def shared_keyring() -> KeyringGet:
    """A keyring lookup remembered per (service, name) for the providers given it."""
    return functools.cache(_keyring_get)
