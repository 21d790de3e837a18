"""The recording proxy (``agent-inspector proxy``, docs/proxy.md): OpenAI- and
Anthropic-compatible clients point their base URL here; every call is forwarded unchanged and
recorded as a step of an ordinary run.

Knows core, providers (their wire readers), store, httpx and aiohttp; never Qt or the app.
"""

from __future__ import annotations

from inspector.proxy.server import RecordingProxy
from inspector.proxy.upstream import RUN_HEADER, Upstreams
from inspector.proxy.verdicts import ValidatorFile, load_validators

__all__ = ["RUN_HEADER", "RecordingProxy", "Upstreams", "ValidatorFile", "load_validators"]
