"""One HTTP client shared by many providers (a sweep's concurrent runs): one connection pool
sized to the concurrency, one SSL context, instead of a client per run."""

from __future__ import annotations

import httpx

from inspector.core.scenario import ModelConfig
from inspector.providers.http import timeout_for, verify_for


def shared_client(model: ModelConfig, connections: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(timeout=timeout_for(model), verify=verify_for(), limits=limits)
