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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from inspector import __version__
from inspector.core.messages import Message
from inspector.core.records import RunRecord, Step
from inspector.formats import genai as g
from inspector.formats.otlp_json import (
    SPAN_KIND_CLIENT,
    SPAN_KIND_INTERNAL,
    STATUS_ERROR,
    STATUS_OK,
    STATUS_UNSET,
    Verbatim,
    attributes,
    stable_id,
)
from inspector.reports.redact import redact

SCOPE = "agent-inspector"
SERVICE = "agent-inspector"
_FAILED_RUN = ("error", "failed", "interrupted")


class _MessageJson:
    """Each message's redacted GenAI JSON, made once: a step re-sends the whole history, and the
    record shares one object per distinct message between the steps that send it."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[Message, str]] = {}

    def array(self, messages: Sequence[Message]) -> Verbatim:
        parts = []
        for m in messages:
            hit = self._done.get(id(m))
            if hit is None:
                text = json.dumps(redact(g.to_genai(m)), ensure_ascii=False, separators=(",", ":"))
                hit = self._done[id(m)] = (m, text)  # the message kept: its id stays unique
            parts.append(hit[1])
        return Verbatim("[" + ",".join(parts) + "]")


def run_to_otlp(record: RunRecord, *, content: bool = True) -> dict[str, Any]:
    """The ``ExportTraceServiceRequest`` of one run, as OTLP/JSON."""
    cache = _MessageJson()
    trace_id = stable_id(f"trace:{record.run_id}", 16)
    root_id = stable_id(f"run:{record.run_id}", 8)
    start = _iso_to_ns(record.started_at)
    spans: list[dict[str, Any]] = []
    t = start
    for step in record.steps:
        end = t + _ms_to_ns(step.latency_ms)
        spans.append(_chat_span(record, step, trace_id, root_id, t, end, content, cache))
        spans.extend(_tool_spans(record, step, trace_id, root_id, end, content))
        t = end
    run_end = max(t, start + _ms_to_ns(record.duration_ms))
    spans.insert(0, _run_span(record, trace_id, root_id, start, run_end, content))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attributes({"service.name": SERVICE})},
                "scopeSpans": [{"scope": {"name": SCOPE, "version": __version__}, "spans": spans}],
            }
        ]
    }


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
        g.TOOL_DEFINITIONS: [
            {"type": "function", **t.model_dump(mode="json")} for t in request.tools
        ],
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
        attrs[g.INPUT_MESSAGES] = cache.array(request.messages)
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
