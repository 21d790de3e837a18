"""Request fingerprints for replay: when is a model request "the same" as a recorded one?

A fingerprint is the sha256 of a canonical JSON document (sorted keys, no white space, UTF-8)
holding everything that decides what a model answers: the system prompt, the messages and the
tools (each as the sha256 of its own canonical JSON), ``tool_choice``, the response format, the
model name and its sampling settings. Two requests with the same fingerprint are byte-identical
on those parts, whichever process or store built them.

``first_difference`` says, in one line, why two requests do *not* match — what a replay's
divergence error shows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from inspector.core.messages import Message
from inspector.core.records import StepRequest
from inspector.core.scenario import ModelConfig

__all__ = [
    "Fingerprinter",
    "ModelSettings",
    "canonical_json",
    "first_difference",
    "model_settings",
    "request_fingerprint",
]

EXCERPT_CHARS = 48  # per side of a difference in the one-line explanation


class ModelSettings(BaseModel):
    """The parts of ``[model]`` that change what a model answers (not where or how it is asked:
    base URL, headers, timeout and streaming are left out)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    params: dict[str, str] = Field(default_factory=dict)


def model_settings(model: ModelConfig) -> ModelSettings:
    return ModelSettings(
        name=model.name,
        temperature=model.temperature,
        max_tokens=model.max_tokens,
        params=dict(model.params),
    )


def canonical_json(value: Any) -> str:
    """Stable JSON: sorted keys, no white space, non-ASCII kept (hashed as UTF-8)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class Fingerprinter:
    """Computes request fingerprints, hashing each message once.

    A turn's requests repeat the whole history, so hashing every message of every request
    would cost quadratic time in the turn's length. A request's document holds each message's
    own digest instead, and digests are cached per message object: messages are frozen and the
    loop shares them between requests, so each is hashed once per turn."""

    def __init__(self) -> None:
        # id(obj) -> (obj, digest); holding obj keeps its id from being reused while cached.
        self._digests: dict[int, tuple[object, str]] = {}

    def _cached(self, obj: BaseModel) -> str:
        hit = self._digests.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        digest = _digest(obj.model_dump(mode="json"))
        self._digests[id(obj)] = (obj, digest)
        return digest

    def __call__(self, request: StepRequest, settings: ModelSettings) -> str:
        """The sha256 (hex) of the canonical request plus the model settings."""
        document = {
            "system": request.system,
            "messages": [self._cached(m) for m in request.messages],
            "tools": [self._cached(t) for t in request.tools],
            "tool_choice": request.tool_choice,
            "response_format": request.response_format,
            "model": settings.model_dump(mode="json"),
        }
        return _digest(document)


def request_fingerprint(request: StepRequest, settings: ModelSettings) -> str:
    """The sha256 (hex) of the canonical request plus the model settings (see ``Fingerprinter``
    to fingerprint many requests of one turn)."""
    return Fingerprinter()(request, settings)


# ---- why two requests differ -------------------------------------------------------------------


def _excerpt(text: str, at: int) -> str:
    """Up to ``EXCERPT_CHARS`` characters of ``text`` from a little before position ``at``,
    repr-quoted so new lines stay on one line."""
    start = max(0, at - 8)
    piece = text[start : start + EXCERPT_CHARS]
    prefix = "…" if start else ""
    suffix = "…" if start + EXCERPT_CHARS < len(text) else ""
    return f"{prefix}{piece!r}{suffix}"


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _text_pair(recorded: str, now: str) -> str:
    at = _common_prefix(recorded, now)
    return f"recorded {_excerpt(recorded, at)}, now {_excerpt(now, at)}"


def _message_text(message: Message) -> str:
    """A message as one string: its content, then its tool calls (name and arguments)."""
    text = message.content or ""
    for call in message.tool_calls or ():
        text += f" [{call.name}({call.arguments_json()})]"
    if message.tool_call_id is not None:
        text = f"(result of {message.tool_call_id}) {text}"
    return text


def _describe(message: Message) -> str:
    return f"{message.role} {_excerpt(_message_text(message), 0)}"


def _messages_difference(recorded: Sequence[Message], now: Sequence[Message]) -> str | None:
    for i, (old, new) in enumerate(zip(recorded, now, strict=False)):
        if old == new:
            continue
        if old.role != new.role:
            return f"messages[{i}] differs: recorded {_describe(old)}, now {_describe(new)}"
        old_text, new_text = _message_text(old), _message_text(new)
        if old_text == new_text:  # e.g. a tool call id or a message name
            dumped = old.model_dump(), new.model_dump()
            return f"messages[{i}] ({old.role}) differs: {_json_pair(*dumped)}"
        return f"messages[{i}] ({old.role}) differs: {_text_pair(old_text, new_text)}"
    if len(recorded) > len(now):
        i = len(now)
        return (
            f"the request has {len(now)} messages, the recording {len(recorded)}: "
            f"messages[{i}] missing (recorded {_describe(recorded[i])})"
        )
    if len(now) > len(recorded):
        i = len(recorded)
        return (
            f"the request has {len(now)} messages, the recording {len(recorded)}: "
            f"messages[{i}] is new ({_describe(now[i])})"
        )
    return None


def _json_pair(recorded: Any, now: Any) -> str:
    return _text_pair(canonical_json(recorded), canonical_json(now))


def first_difference(
    recorded: StepRequest,
    now: StepRequest,
    recorded_settings: ModelSettings | None = None,
    now_settings: ModelSettings | None = None,
) -> str:
    """One line naming the first part of ``now`` that differs from ``recorded``: the model
    settings, the system prompt, the first differing message (index, role, an excerpt of both
    around the first differing character), then the tools, tool_choice and response format.
    ``"identical"`` when nothing differs."""
    if recorded_settings is not None and now_settings is not None:
        for key in ModelSettings.model_fields:
            old, new = getattr(recorded_settings, key), getattr(now_settings, key)
            if old != new:
                return f"model.{key} differs: recorded {old!r}, now {new!r}"
    if recorded.system != now.system:
        return f"system prompt differs: {_text_pair(recorded.system, now.system)}"
    found = _messages_difference(recorded.messages, now.messages)
    if found is not None:
        return found
    if recorded.tools != now.tools:
        old_names = [t.name for t in recorded.tools]
        new_names = [t.name for t in now.tools]
        if old_names != new_names:
            return f"tools differ: recorded {old_names}, now {new_names}"
        for old_tool, new_tool in zip(recorded.tools, now.tools, strict=True):
            if old_tool != new_tool:
                dumped = old_tool.model_dump(), new_tool.model_dump()
                return f"tool {old_tool.name!r} differs: {_json_pair(*dumped)}"
    if recorded.tool_choice != now.tool_choice:
        return f"tool_choice differs: recorded {recorded.tool_choice!r}, now {now.tool_choice!r}"
    if recorded.response_format != now.response_format:
        pair = _json_pair(recorded.response_format, now.response_format)
        return f"response_format differs: {pair}"
    return "identical"
