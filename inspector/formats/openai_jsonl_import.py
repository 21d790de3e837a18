"""OpenAI chat-completions request/response JSON Lines → runs (``import --format openai-jsonl``).

Each line is one call, in one of these shapes:

- ``{"request": BODY, "response": COMPLETION}`` — a proxy or gateway log (``"error"`` instead of
  ``"response"`` for a failed call);
- a Batch API input line ``{"custom_id", "body": BODY, ...}`` and its output line
  ``{"custom_id", "response": {"status_code", "body": COMPLETION}, "error"}`` — in one file, in
  either order, matched by ``custom_id`` (or merged on one line).

Calls are grouped into turns by conversation continuity: a call whose messages start with an
earlier call's messages and answer (or, when failed attempts were dropped, its messages) belongs
to that call's turn; anything else starts a new turn. Request bodies are complete, so tools,
``tool_choice`` and sampling settings are known; a log has no latencies.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from inspector.core.errors import ProviderError
from inspector.core.messages import Message
from inspector.core.records import RunRecord
from inspector.formats import MALFORMED, why
from inspector.formats.assemble import ImportedCall, RunSource, build_run, continues
from inspector.providers.openai_wire import completion_from_wire, request_from_wire

SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "frequency_penalty",
    "presence_penalty",
    "n",
)


# A malformed value, or a response body the wire parser refuses (an error body, not an object).
_BAD_LINE: tuple[type[Exception], ...] = (*MALFORMED, ProviderError)


class LogError(ValueError):
    """A line that is not a chat-completions call; the message names the line."""


def runs_from_jsonl(text: str, file: str, new_id: Callable[[], str]) -> list[RunRecord]:
    calls: list[tuple[int, ImportedCall, str]] = []  # (line, call, model)
    pending: dict[str, tuple[int, dict[str, Any]]] = {}  # custom_id → half a batch pair
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LogError(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
            pair = _pair(entry, pending, number)
            if pair is not None:
                body, response, error = pair
                calls.append((number, _call(body, response, error), str(body.get("model", ""))))
        except LogError as exc:
            raise LogError(f"line {number}: {exc}") from None
        except _BAD_LINE as exc:
            raise LogError(f"line {number}: {why(exc)}") from None
    if pending:
        number, _ = min(pending.values(), key=lambda v: v[0])
        raise LogError(f"line {number}: batch line with no matching request or response")
    if not calls:
        raise LogError("no chat-completions calls in the file")
    calls.sort(key=lambda c: c[0])
    records = []
    for group in group_turns([c for _, c, _ in calls]):
        first_model = next(m for _, c, m in calls if c is group[0])
        source = RunSource(
            format="openai-jsonl",
            file=file,
            run_id=new_id(),
            scenario=f"imported {file}",
            started_at="",
            provider="openai",
            model=first_model,
        )
        records.append(build_run(source, group))
    return records


def group_turns(calls: list[ImportedCall]) -> list[list[ImportedCall]]:
    """Calls → turns, in order: each call joins the latest turn it continues."""
    turns: list[list[ImportedCall]] = []
    for call in calls:
        home = next((t for t in reversed(turns) if _continues(t[-1], call)), None)
        if home is None:
            turns.append([call])
        else:
            home.append(call)
    return turns


def _continues(before: ImportedCall, after: ImportedCall) -> bool:
    if before.system != after.system or before.response is None:
        return False
    answer = Message(
        role="assistant",
        content=before.response.text
        if before.response.text or not before.response.tool_calls
        else None,
        tool_calls=tuple(before.response.tool_calls) or None,
    )
    with_answer = continues([*before.messages, answer], after.messages)
    if with_answer is not None:
        return with_answer < len(after.messages)
    kept = continues(before.messages, after.messages)
    return kept is not None and kept < len(after.messages)


def _pair(
    entry: Any, pending: dict[str, tuple[int, dict[str, Any]]], number: int
) -> tuple[dict[str, Any], Any, str | None] | None:
    """(request body, completion or None, error or None) once both halves are known."""
    if not isinstance(entry, dict):
        raise LogError("a line must be a JSON object")
    if "request" in entry:
        body = entry["request"]
        if isinstance(body, dict) and isinstance(body.get("body"), dict):
            body = body["body"]  # a recorded exchange wrapping the body
        return _body(body), entry.get("response"), _error(entry.get("error"))
    custom_id = entry.get("custom_id")
    has_body = isinstance(entry.get("body"), dict)
    has_output = "response" in entry or "error" in entry
    if has_body and has_output:
        return _body(entry["body"]), _batch_body(entry), _batch_error(entry)
    if not isinstance(custom_id, str) or not (has_body or has_output):
        raise LogError('expected {"request", "response"} or a Batch API line with custom_id')
    other = pending.pop(custom_id, None)
    if other is None:
        pending[custom_id] = (number, entry)
        return None
    first, second = other[1], entry
    request_line, output_line = (first, second) if "body" in first else (second, first)
    if "body" not in request_line or not ("response" in output_line or "error" in output_line):
        raise LogError(f"two lines with custom_id {custom_id!r} of the same kind")
    return _body(request_line["body"]), _batch_body(output_line), _batch_error(output_line)


def _batch_body(entry: dict[str, Any]) -> Any:
    response = entry.get("response")
    return response.get("body") if isinstance(response, dict) else None


def _batch_error(entry: dict[str, Any]) -> str | None:
    response = entry.get("response")
    if isinstance(response, dict) and int(response.get("status_code", 200)) >= 400:
        return _error(response.get("body")) or f"HTTP {response.get('status_code')}"
    return _error(entry.get("error"))


def _error(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):
        inner = value.get("error", value)
        if isinstance(inner, dict):
            return str(inner.get("message") or json.dumps(inner))
        return str(inner)
    return str(value)


def _body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise LogError("the request has no messages list")
    messages = [_flat(m) for m in body["messages"]]
    return dict(body, messages=messages)


def _flat(message: Any) -> dict[str, Any]:
    """A message whose content is a list of parts, as its text (what this project records)."""
    if not isinstance(message, dict) or "role" not in message:
        raise LogError("a message needs a role")
    content = message.get("content")
    if isinstance(content, list):
        text = "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
        return dict(message, content=text)
    return message


def _named_tool_messages(messages: Sequence[Message]) -> list[Message]:
    """Tool messages carry the name of the call they answer, as this project's requests do (the
    log's body may leave it out): a replay's request then matches the recorded one."""
    names = {c.id: c.name for m in messages for c in m.tool_calls or ()}
    return [
        m.model_copy(update={"name": names[m.tool_call_id]})
        if m.role == "tool" and m.name is None and m.tool_call_id in names
        else m
        for m in messages
    ]


def _call(body: dict[str, Any], completion: Any, error: str | None) -> ImportedCall:
    request = request_from_wire(body)
    response = None
    if error is None:
        if completion is None:
            raise LogError("the call has neither a response nor an error")
        response = completion_from_wire(completion)
    system_given = bool(body["messages"]) and body["messages"][0].get("role") in (
        "system",
        "developer",
    )
    return ImportedCall(
        system=request.system if system_given else "",
        messages=_named_tool_messages(request.messages),
        response=response,
        tools=request.tools,
        # Left out, the API's default applies: "auto" when tools are offered (what this
        # project's requests say explicitly, so a replay's request matches).
        tool_choice=request.tool_choice or ("auto" if request.tools else None),
        tool_choice_known=True,
        response_format=request.response_format,
        sampling={k: body[k] for k in SAMPLING_KEYS if k in body},
        error=error,
    )
