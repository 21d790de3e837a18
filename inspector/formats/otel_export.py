"""A run as OpenTelemetry GenAI spans, in OTLP/JSON (``export --format otel``).

One trace per run: an ``invoke_agent {scenario}`` span for the turn; under it a ``chat {model}``
span per model call and an ``execute_tool {name}`` span per tool result. Verdicts are
``gen_ai.evaluation.result`` events on the chat span whose output they judged. What the
conventions have no name for (attempt, cleared, feedback, forced markers, termination, policy)
is under ``agent_inspector.``; docs/formats.md has the whole table.

Times: the run starts at ``started_at``; each call starts where the previous one ended (the
record keeps latencies, not start offsets), tools run at the end of their call.

Every string value passes ``reports.redact`` first: no key-shaped text leaves in an export.
``content=False`` leaves out message content, tool arguments and results, outputs, the
transcript and feedback text (token counts, verdicts and shapes stay).

Long runs: every step re-sends the whole history, so a chat span carrying all of it makes the
export grow with steps x history (a 2,000-step run: 665 MB, 2 GB of memory). A chat span carries
at most ``input_messages`` of its request's messages, the last ones (the conventions let an
instrumentation truncate ``gen_ai.input.messages``, in the order sent); the ``k`` left out are
the first ``k`` input messages of the previous chat span, which ``agent_inspector.step.
input_messages_skipped = k`` says and the importer puts back. Only such a shared prefix is left
out. ``otlp_json_chunks`` writes the document span by span, so memory stays one span's worth.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from inspector import __version__
from inspector.core.messages import Message
from inspector.core.records import RunRecord, Step, ToolSpec
from inspector.core.shared_list import common_prefix
from inspector.formats import genai as g
from inspector.formats.otlp_json import (
    SPAN_KIND_CLIENT,
    SPAN_KIND_INTERNAL,
    STATUS_ERROR,
    STATUS_OK,
    STATUS_UNSET,
    Verbatim,
    attributes,
    document_chunks,
    stable_id,
)
from inspector.reports.redact import redact

SCOPE = "agent-inspector"
SERVICE = "agent-inspector"
_FAILED_RUN = ("error", "failed", "interrupted")
INPUT_MESSAGES = 100  # the default cap of input messages per chat span (None: every one)


class _MessageJson:
    """Each message's (and tool definition's) redacted GenAI JSON, made once: a step re-sends
    the whole history and the same tools, and the record shares one object per distinct message
    (and tool) between the steps that send it."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[object, str]] = {}

    def array(self, messages: Sequence[Message]) -> Verbatim:
        return Verbatim("[" + ",".join(self._once(m, _message_json) for m in messages) + "]")

    def tools(self, tools: Sequence[ToolSpec]) -> Verbatim | list[Any]:
        if not tools:
            return []  # an empty array value, as before
        return Verbatim("[" + ",".join(self._once(t, _tool_json) for t in tools) + "]")

    def _once(self, obj: Any, make: Callable[[Any], str]) -> str:
        hit = self._done.get(id(obj))
        if hit is None:
            hit = self._done[id(obj)] = (obj, make(obj))  # the object kept: its id stays unique
        return hit[1]


def _compact(value: Any) -> str:
    return json.dumps(redact(value), ensure_ascii=False, separators=(",", ":"))


def _message_json(message: Message) -> str:
    return _compact(g.to_genai(message))


def _tool_json(tool: ToolSpec) -> str:
    return _compact({"type": "function", **tool.model_dump(mode="json")})


def run_to_otlp(
    record: RunRecord, *, content: bool = True, input_messages: int | None = INPUT_MESSAGES
) -> dict[str, Any]:
    """The ``ExportTraceServiceRequest`` of one run, as OTLP/JSON."""
    resource, scope = _resource_and_scope()
    spans = list(_spans(record, content, input_messages))
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{**scope, "spans": spans}]}]}


def otlp_json_chunks(
    record: RunRecord, *, content: bool = True, input_messages: int | None = INPUT_MESSAGES
) -> Iterator[str]:
    """The text of ``run_to_otlp(...)`` in pieces, one span (a line) at a time: the whole
    document is never in memory."""
    resource, scope = _resource_and_scope()
    return document_chunks(resource, scope, _spans(record, content, input_messages))


def _resource_and_scope() -> tuple[dict[str, Any], dict[str, Any]]:
    resource = {"attributes": attributes({"service.name": SERVICE})}
    return resource, {"scope": {"name": SCOPE, "version": __version__}}


def _spans(record: RunRecord, content: bool, cap: int | None) -> Iterator[dict[str, Any]]:
    cache = _MessageJson()
    trace_id = stable_id(f"trace:{record.run_id}", 16)
    root_id = stable_id(f"run:{record.run_id}", 8)
    start = _iso_to_ns(record.started_at)
    t = start + sum(_ms_to_ns(step.latency_ms) for step in record.steps)
    run_end = max(t, start + _ms_to_ns(record.duration_ms))
    yield _run_span(record, trace_id, root_id, start, run_end, content)
    t = start
    previous: Sequence[Message] = ()
    for step in record.steps:
        end = t + _ms_to_ns(step.latency_ms)
        messages = step.request.messages
        skipped = _skipped(previous, messages, cap) if content else 0
        yield _chat_span(record, step, trace_id, root_id, t, end, content, cache, skipped)
        yield from _tool_spans(record, step, trace_id, root_id, end, content)
        previous, t = messages, end


def _skipped(previous: Sequence[Message], messages: Sequence[Message], cap: int | None) -> int:
    """How many leading messages a chat span leaves out: at most what it shares with the
    previous chat span's request, and only so many that ``cap`` are left."""
    if cap is None or len(messages) <= cap or not previous:
        return 0
    return min(len(messages) - cap, common_prefix(previous, messages))


def _span(
    name: str,
    trace_id: str,
    span_id: str,
    parent_id: str,
    start: int,
    end: int,
    kind: int,
    attrs: dict[str, Any],
    status: tuple[int, str] = (STATUS_UNSET, ""),
    events: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "parentSpanId": parent_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": attributes(_redacted(attrs)),
        "status": {"code": status[0], **({"message": redact(status[1])} if status[1] else {})},
    }
    if events:
        span["events"] = events
    return span


def _run_span(
    record: RunRecord, trace_id: str, span_id: str, start: int, end: int, content: bool
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        g.OPERATION: g.INVOKE_AGENT,
        g.AGENT_NAME: record.scenario,
        g.CONVERSATION_ID: record.run_id,
        g.PROVIDER: record.provider or None,
        g.REQUEST_MODEL: record.model or None,
        g.INPUT_TOKENS: record.usage.input_tokens,
        g.OUTPUT_TOKENS: record.usage.output_tokens,
        g.ns("run_id"): record.run_id,
        g.ns("record_version"): record.version,
        g.ns("started_at"): record.started_at,
        g.ns("duration_ms"): float(record.duration_ms),
        g.ns("status"): record.status,
        g.ns("termination"): record.termination,
        g.ns("fallback_trigger"): record.fallback_trigger,
        g.ns("replay_of"): record.replay_of,
        g.ns("policy"): record.policy.model_dump(mode="json"),
        g.ns("budgets"): record.budgets.model_dump(mode="json"),
        g.ns("scenario_origin"): record.scenario_origin or None,
        g.ns("scenario_dir"): record.scenario_dir or None,
        g.ns("overrides"): record.overrides or None,
        g.ns("content"): content,
    }
    if record.error is not None:
        attrs[g.ns("error.type")] = record.error.type
        attrs[g.ns("error.message")] = record.error.message
    if record.fidelity is not None:
        attrs[g.ns("fidelity")] = record.fidelity.model_dump(mode="json")
    if content:
        attrs[g.ns("output")] = {"value": record.output}
        attrs[g.ns("transcript")] = [m.model_dump(mode="json") for m in record.transcript]
        attrs[g.ns("scenario_source")] = record.scenario_source or None
    status = (
        (STATUS_ERROR, record.error.message if record.error else record.status)
        if record.status in _FAILED_RUN
        else (STATUS_OK, "")
    )
    name = f"{g.INVOKE_AGENT} {record.scenario}"
    return _span(name, trace_id, span_id, "", start, end, SPAN_KIND_INTERNAL, attrs, status)


def _chat_span(
    record: RunRecord,
    step: Step,
    trace_id: str,
    parent: str,
    start: int,
    end: int,
    content: bool,
    cache: _MessageJson,
    skipped: int = 0,
) -> dict[str, Any]:
    request, response = step.request, step.response
    attrs: dict[str, Any] = {
        g.OPERATION: g.CHAT,
        g.PROVIDER: record.provider or None,
        g.REQUEST_MODEL: record.model or None,
        g.OUTPUT_TYPE: "json" if request.response_format else "text",
        g.ns("step.index"): step.index,
        g.ns("step.attempt"): step.attempt,
        g.ns("step.status"): step.status,
        g.ns("step.cleared"): step.cleared,
        g.ns("step.internal_tool"): step.internal_tool,
        g.ns("step.forced"): step.forced.model_dump(mode="json") if step.forced else None,
        g.ns("step.tool_choice"): {"value": request.tool_choice},
        g.ns("step.response_format"): request.response_format,
        g.ns("step.latency_ms"): step.latency_ms,
        g.ns("step.ttft_ms"): step.ttft_ms,
        g.ns("step.error"): step.error,
        # The tools offered: names and schemas are definitions, not content.
        g.TOOL_DEFINITIONS: cache.tools(request.tools),
    }
    if step.ttft_ms is not None:
        attrs[g.TTFC] = step.ttft_ms / 1000
    if response is not None:
        attrs[g.INPUT_TOKENS] = response.usage.input_tokens
        attrs[g.OUTPUT_TOKENS] = response.usage.output_tokens
        attrs[g.ns("step.has_response")] = True
        if response.finish_reason is not None:
            attrs[g.FINISH_REASONS] = [response.finish_reason]
    if content:
        attrs[g.SYSTEM_INSTRUCTIONS] = [{"type": "text", "content": request.system}]
        attrs[g.INPUT_MESSAGES] = cache.array(request.messages[skipped:])
        if skipped:
            attrs[g.ns("step.input_messages_skipped")] = skipped
        attrs[g.ns("step.feedback")] = [m.model_dump(mode="json") for m in step.feedback]
        if response is not None:
            attrs[g.OUTPUT_MESSAGES] = [_output_message(step)]
            attrs[g.ns("step.refusal")] = response.refusal
    status = (STATUS_ERROR, step.error or step.status) if step.status == "error" else (0, "")
    events = [_verdict_event(v.model_dump(mode="json"), end) for v in step.verdicts]
    span_id = stable_id(f"step:{record.run_id}:{step.index}", 8)
    name = f"{g.CHAT} {record.model}" if record.model else g.CHAT
    return _span(
        name, trace_id, span_id, parent, start, end, SPAN_KIND_CLIENT, attrs, status, events
    )


def _redacted(attrs: dict[str, Any]) -> dict[str, Any]:
    """Every value through ``redact``, but text made from redacted parts (``Verbatim``)."""
    return {k: v if isinstance(v, Verbatim) else redact(v) for k, v in attrs.items()}


def _output_message(step: Step) -> dict[str, Any]:
    response = step.response
    assert response is not None
    parts: list[dict[str, Any]] = []
    if response.reasoning is not None:
        parts.append({"type": "reasoning", "content": response.reasoning})
    parts.append({"type": "text", "content": response.text})
    for call in response.tool_calls:
        parts.append(
            {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
        )
    out: dict[str, Any] = {"role": "assistant", "parts": parts}
    if response.finish_reason is not None:
        out["finish_reason"] = response.finish_reason
    return out


def _verdict_event(verdict: dict[str, Any], at: int) -> dict[str, Any]:
    attrs = {
        g.EVALUATION_NAME: verdict["validator"],
        g.EVALUATION_LABEL: verdict["status"],
        g.EVALUATION_SCORE: 1.0 if verdict["ok"] else 0.0,
        g.EVALUATION_EXPLANATION: verdict["reason"],
        g.ns("verdict.feedback"): verdict["feedback"],
        g.ns("verdict.location"): verdict.get("location"),
    }
    return {
        "timeUnixNano": str(at),
        "name": g.EVALUATION_EVENT,
        "attributes": attributes(redact(attrs)),
    }


def _tool_spans(
    record: RunRecord, step: Step, trace_id: str, parent: str, at: int, content: bool
) -> list[dict[str, Any]]:
    calls = {c.id: c for c in (step.response.tool_calls if step.response else [])}
    out = []
    for pos, result in enumerate(step.tool_results):
        attrs: dict[str, Any] = {
            g.OPERATION: g.EXECUTE_TOOL,
            g.TOOL_NAME: result.name,
            g.TOOL_TYPE: "function",
            g.TOOL_CALL_ID: result.tool_call_id,
            g.ns("step.index"): step.index,
            g.ns("tool.error"): result.error,
            g.ns("tool.replayed"): result.replayed,
        }
        if content:
            call = calls.get(result.tool_call_id)
            if call is not None:
                attrs[g.TOOL_CALL_ARGUMENTS] = call.arguments
            attrs[g.TOOL_CALL_RESULT] = result.content
        status = (STATUS_ERROR, result.error) if result.error else (STATUS_UNSET, "")
        span_id = stable_id(f"tool:{record.run_id}:{step.index}:{pos}", 8)
        name = f"{g.EXECUTE_TOOL} {result.name}"
        out.append(
            _span(name, trace_id, span_id, parent, at, at, SPAN_KIND_INTERNAL, attrs, status)
        )
    return out


def _iso_to_ns(text: str) -> int:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return 0
    return int(moment.timestamp() * 1_000_000) * 1000


def _ms_to_ns(ms: float | None) -> int:
    return round((ms or 0.0) * 1_000_000)
