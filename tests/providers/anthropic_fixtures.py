"""Helpers for the Anthropic adapter tests: the recorded wire fixtures, the engine-side inputs a
recorded request stands for, and a ``MockTransport`` client that serves one recording."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from inspector.core.messages import Message
from inspector.core.records import StepRequest, ToolSpec
from inspector.core.scenario import ModelConfig
from tests.providers.fixture_paths import WIRE, wire_folder

FIXTURES = WIRE / "anthropic-messages"

TEST_KEY = "sk-ant-test-0123456789-NEVER-RECORD-ME"

# Request fields a scenario cannot express (the engine has no setting for them); the comparison
# of built and recorded requests leaves them out, and says so here.
INEXPRESSIBLE = ("thinking", "stop_sequences")


def require_fixtures() -> Path:
    return wire_folder("anthropic-messages")


def names() -> list[str]:
    """Every recording: the part of each ``*.request.json`` file name before ``.request``."""
    folder = wire_folder("anthropic-messages")  # an empty parametrization would pass silently
    return sorted(p.name.removesuffix(".request.json") for p in folder.glob("*.request.json"))


def recorded_request(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((require_fixtures() / f"{name}.request.json").read_text())
    return data


def response_file(name: str) -> Path:
    folder = require_fixtures()
    for suffix in (".response.sse", ".response.json"):
        if (folder / f"{name}{suffix}").exists():
            return folder / f"{name}{suffix}"
    raise FileNotFoundError(f"no response recorded for {name}")


def status_of(name: str) -> int:
    """Error fixtures carry their status in the name (``error-404-...``); the rest were 200."""
    parts = name.split("-")
    return int(parts[1]) if parts[0] == "error" else 200


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block["text"] for block in content if block["type"] == "text")


def engine_inputs(recorded: dict[str, Any]) -> tuple[StepRequest, ModelConfig]:
    """What the engine would hand the adapter for the recorded request (written independently of
    the adapter's own mapping: recorded wire → engine records)."""
    messages = [
        Message(role=m["role"], content=_text_of(m["content"])) for m in recorded["messages"]
    ]
    tools = [
        ToolSpec(name=t["name"], description=t.get("description", ""), parameters=t["input_schema"])
        for t in recorded.get("tools", [])
    ]
    choice: Any = None
    if "tool_choice" in recorded:
        wire = recorded["tool_choice"]
        choice = {"any": "required", "auto": "auto", "none": "none"}.get(wire["type"])
        if wire["type"] == "tool":
            choice = {"type": "function", "name": wire["name"]}
    response_format = None
    fmt = recorded.get("output_config", {}).get("format")
    if fmt is not None:
        spec = {"name": "final_answer", "schema": fmt["schema"]}
        response_format = {"type": "json_schema", "json_schema": spec}
    request = StepRequest(
        system=recorded.get("system", ""),
        messages=messages,
        tools=tools,
        tool_choice=choice,
        response_format=response_format,
    )
    model = ModelConfig(
        provider="anthropic",
        name=recorded["model"],
        max_tokens=recorded["max_tokens"],
        temperature=recorded.get("temperature"),
        stream=recorded.get("stream", False),
    )
    return request, model


def comparable(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with what may legitimately differ normalised: string content as one text
    block, an absent ``stream`` as false, inexpressible fields and ``output_config.effort``
    left out."""
    out = {k: v for k, v in body.items() if k not in INEXPRESSIBLE}
    out.setdefault("stream", False)
    out["messages"] = [
        {
            "role": m["role"],
            "content": [{"type": "text", "text": m["content"]}]
            if isinstance(m["content"], str)
            else m["content"],
        }
        for m in body["messages"]
    ]
    if "output_config" in out:
        config = {k: v for k, v in out["output_config"].items() if k != "effort"}
        if config:
            out["output_config"] = config
        else:
            del out["output_config"]
    return out


@dataclass
class Served:
    """What a ``MockTransport`` serving recordings saw."""

    requests: list[httpx.Request] = field(default_factory=list)

    def body(self, i: int = -1) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.requests[i].content)
        return data


def reply_for(name: str) -> httpx.Response:
    path = response_file(name)
    content_type = "text/event-stream" if path.suffix == ".sse" else "application/json"
    return httpx.Response(
        status_of(name), content=path.read_bytes(), headers={"content-type": content_type}
    )


def mock_client(
    replies: list[httpx.Response] | Callable[[httpx.Request], httpx.Response],
) -> tuple[httpx.AsyncClient, Served]:
    """A client whose transport answers with ``replies`` in order (or calls the function)."""
    served = Served()
    queue = list(replies) if isinstance(replies, list) else None

    def handle(request: httpx.Request) -> httpx.Response:
        served.requests.append(request)
        if queue is None:
            assert callable(replies)
            return replies(request)
        return queue.pop(0)

    return httpx.AsyncClient(transport=httpx.MockTransport(handle)), served
