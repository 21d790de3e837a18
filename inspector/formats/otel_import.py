"""OTLP/JSON GenAI spans → runs (``import --format otel``).

One run per trace. A trace this project exported (its ``invoke_agent`` span has
``agent_inspector.run_id``) is rebuilt field by field to an equal record. Any other trace goes
through ``assemble``: each chat span is a call, read in this order of preference —

- the current conventions: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
  ``gen_ai.system_instructions`` / ``gen_ai.tool.definitions`` (Pydantic AI / Logfire write these;
  Pydantic AI's ``model_request_parameters`` gives the tools too);
- the older flattened names still in the wild (OpenLLMetry, early OpenAI instrumentations):
  ``gen_ai.prompt.N.role|content|tool_call_id``, ``gen_ai.completion.N.content|finish_reason|
  tool_calls.M.id|name|arguments``, ``llm.request.functions.N.name|description|parameters``;
- span events ``gen_ai.{system,user,assistant,tool}.message`` and ``gen_ai.choice``.

Usage from ``gen_ai.usage.input_tokens`` (or the older ``prompt_tokens``/``completion_tokens``),
the provider from ``gen_ai.provider.name`` (or the older ``gen_ai.system``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from inspector.core.fidelity import Fidelity, FidelityGap
from inspector.core.messages import Message, ToolCall, content_text
from inspector.core.policy import Policy
from inspector.core.records import (
    Budgets,
    Forced,
    RunError,
    RunRecord,
    SourceLocation,
    Step,
    StepRequest,
    StepResponse,
    ToolResult,
    ToolSpec,
    Usage,
    Verdict,
)
from inspector.formats import MALFORMED, why
from inspector.formats import genai as g
from inspector.formats.assemble import ImportedCall, RunSource, build_run
from inspector.formats.fidelity import DETAIL
from inspector.formats.otlp_json import STATUS_ERROR, Span, spans

_T = TypeVar("_T")


class SpanError(ValueError):
    """A span whose content cannot be read; the message names the span."""


def runs_from_otlp(document: Any, file: str, new_id: Any) -> list[RunRecord]:
    """Every run in an OTLP/JSON document. ``new_id()`` gives a run id for a foreign trace."""
    traces: dict[str, list[Span]] = {}
    for span in spans(document):
        traces.setdefault(span.trace_id, []).append(span)
    records = []
    for trace in traces.values():
        try:
            own = [s for s in trace if g.ns("run_id") in s.attributes]
            if own:
                records.append(_own_run(own[0], trace, file))
            else:
                record = _foreign_run(trace, file, new_id())
                if record is not None:
                    records.append(record)
        except SpanError:
            raise
        except MALFORMED as exc:
            raise SpanError(why(exc)) from None
    if not records:
        raise SpanError("no GenAI chat spans found (no gen_ai.operation.name = chat)")
    return records


# ---- our own export -----------------------------------------------------------------------------


def _own_run(root: Span, trace: list[Span], file: str) -> RunRecord:
    a = root.attributes
    content = a.get(g.ns("content"), True)
    chats = sorted(
        (s for s in trace if s.attributes.get(g.OPERATION) == g.CHAT),
        key=lambda s: _at(s, "step.index"),
    )
    tools: dict[int, list[Span]] = {}
    for s in trace:
        if s.attributes.get(g.OPERATION) == g.EXECUTE_TOOL:
            tools.setdefault(_at(s, "step.index"), []).append(s)
    reader = g.MessageReader()
    steps = [_at_span(s, _own_step, s, tools.get(_at(s, "step.index"), []), reader) for s in chats]
    error = None
    if g.ns("error.type") in a:
        error = RunError(type=a[g.ns("error.type")], message=a.get(g.ns("error.message"), ""))
    output = _json(root, g.ns("output"), {"value": None})["value"]
    return RunRecord(
        version=a.get(g.ns("record_version"), 1),
        run_id=a[g.ns("run_id")],
        scenario=a.get(g.AGENT_NAME, ""),
        started_at=a.get(g.ns("started_at"), ""),
        duration_ms=a.get(g.ns("duration_ms"), 0.0),
        policy=Policy.model_validate(_json(root, g.ns("policy"), {})),
        status=a[g.ns("status")],
        termination=a.get(g.ns("termination")),
        budgets=Budgets.model_validate(_json(root, g.ns("budgets"), {})),
        output=output,
        error=error,
        usage=Usage(input_tokens=a.get(g.INPUT_TOKENS, 0), output_tokens=a.get(g.OUTPUT_TOKENS, 0)),
        replay_of=a.get(g.ns("replay_of")),
        steps=steps,
        transcript=[Message.model_validate(m) for m in _json(root, g.ns("transcript"), [])],
        provider=a.get(g.PROVIDER, ""),
        model=a.get(g.REQUEST_MODEL, ""),
        fallback_trigger=a.get(g.ns("fallback_trigger")),
        scenario_source=_json(root, g.ns("scenario_source"), {}) or {},
        scenario_dir=a.get(g.ns("scenario_dir"), ""),
        scenario_origin=a.get(g.ns("scenario_origin"), ""),
        overrides=list(a.get(g.ns("overrides"), [])),
        fidelity=(
            Fidelity.model_validate(_json(root, g.ns("fidelity"), {}))
            if g.ns("fidelity") in a
            else _own_fidelity(file, content, len(steps))
        ),
    )


def _own_fidelity(file: str, content: bool, steps: int) -> Fidelity:
    """An export of ours carries the whole record but the raw wire bodies (and, exported with
    ``--no-content``, the content)."""
    gaps = [FidelityGap(kind="raw", detail=DETAIL["raw"])]
    if not content:
        gaps.insert(0, FidelityGap(kind="content", detail=DETAIL["content"]))
    return Fidelity(format="otel", source=file, replayable=content, gaps=gaps)


def _own_step(span: Span, tool_spans: list[Span], reader: g.MessageReader) -> Step:
    a = span.attributes
    system_parts = _json(span, g.SYSTEM_INSTRUCTIONS, [])
    skipped = a.get(g.ns("step.input_messages_skipped"), 0)
    if not isinstance(skipped, int) or skipped < 0:
        raise ValueError(f"{span.label}: {g.ns('step.input_messages_skipped')} must be a count")
    messages = reader.read(_json(span, g.INPUT_MESSAGES, []), skipped)
    request = StepRequest(
        system="".join(content_text(p.get("content")) for p in system_parts),
        messages=[],  # the view put in below: read once, not validated again per request
        tools=[_tool_spec(t) for t in _json(span, g.TOOL_DEFINITIONS, [])],
        tool_choice=_json(span, g.ns("step.tool_choice"), {"value": None})["value"],
        response_format=_json(span, g.ns("step.response_format"), None),
    )
    response = None
    if a.get(g.ns("step.has_response")):
        outputs = _json(span, g.OUTPUT_MESSAGES, [])
        parts = outputs[0].get("parts", []) if outputs else []
        texts = [content_text(p.get("content")) for p in parts if p.get("type") == "text"]
        calls = [c for p in parts if p.get("type") == "tool_call" for c in _calls(p)]
        reasons = a.get(g.FINISH_REASONS) or [None]
        response = StepResponse(
            text="".join(texts),
            tool_calls=calls,
            finish_reason=reasons[0],
            usage=Usage(
                input_tokens=a.get(g.INPUT_TOKENS, 0), output_tokens=a.get(g.OUTPUT_TOKENS, 0)
            ),
            refusal=a.get(g.ns("step.refusal")),
            reasoning=g.reasoning_text(parts),
        )
    request.messages = messages
    forced = _json(span, g.ns("step.forced"), None)
    return Step(
        index=a[g.ns("step.index")],
        attempt=a[g.ns("step.attempt")],
        status=a[g.ns("step.status")],
        request=request,
        response=response,
        tool_results=[_own_tool_result(t) for t in tool_spans],
        verdicts=[_verdict(attrs) for name, _, attrs in span.events if name == g.EVALUATION_EVENT],
        feedback=[Message.model_validate(m) for m in _json(span, g.ns("step.feedback"), [])],
        forced=Forced.model_validate(forced) if forced is not None else None,
        cleared=a.get(g.ns("step.cleared"), False),
        internal_tool=a.get(g.ns("step.internal_tool"), False),
        latency_ms=a.get(g.ns("step.latency_ms")),
        ttft_ms=a.get(g.ns("step.ttft_ms")),
        error=a.get(g.ns("step.error")),
    )


def _own_tool_result(span: Span) -> ToolResult:
    a = span.attributes
    return ToolResult(
        tool_call_id=a.get(g.TOOL_CALL_ID, ""),
        name=a.get(g.TOOL_NAME, ""),
        content=content_text(a.get(g.TOOL_CALL_RESULT)),
        error=a.get(g.ns("tool.error")),
        replayed=a.get(g.ns("tool.replayed"), False),
    )


def _verdict(a: dict[str, Any]) -> Verdict:
    location = a.get(g.ns("verdict.location"))
    label = a.get(g.EVALUATION_LABEL, "fail")
    return Verdict(
        validator=a.get(g.EVALUATION_NAME, ""),
        ok=label == "pass",
        status=label,
        reason=a.get(g.EVALUATION_EXPLANATION, ""),
        feedback=a.get(g.ns("verdict.feedback")),
        location=SourceLocation.model_validate(json.loads(location)) if location else None,
    )


# ---- any other GenAI trace ----------------------------------------------------------------------


def _foreign_run(trace: list[Span], file: str, run_id: str) -> RunRecord | None:
    chats = sorted((s for s in trace if _is_chat(s)), key=lambda s: s.start_ns)
    if not chats:
        return None
    tool_spans = [s for s in trace if s.attributes.get(g.OPERATION) == g.EXECUTE_TOOL]
    reader = g.MessageReader()
    calls = [_at_span(s, _call, s, tool_spans, reader) for s in chats]
    root = next((s for s in trace if s.attributes.get(g.OPERATION) == g.INVOKE_AGENT), None)
    first = chats[0].attributes
    model = first.get(g.REQUEST_MODEL) or first.get(g.RESPONSE_MODEL) or ""
    start = min(s.start_ns for s in trace)
    end = max(s.end_ns for s in trace)
    name = (root.attributes.get(g.AGENT_NAME) if root else None) or first.get(g.AGENT_NAME)
    source = RunSource(
        format="otel",
        file=file,
        run_id=run_id,
        scenario=str(name or f"imported {chats[0].name}"),
        started_at=_iso(start),
        provider=str(first.get(g.PROVIDER) or first.get(g.SYSTEM_OLD) or ""),
        model=str(model),
        duration_ms=(end - start) / 1e6 if start and end >= start else None,
    )
    return build_run(source, calls)


def _is_chat(span: Span) -> bool:
    op = span.attributes.get(g.OPERATION)
    if op is not None:
        return op in ("chat", "text_completion", "generate_content")
    return g.INPUT_MESSAGES in span.attributes or "gen_ai.prompt.0.role" in span.attributes


def _call(span: Span, tool_spans: Sequence[Span], reader: g.MessageReader) -> ImportedCall:
    a = span.attributes
    system_parts = _json(span, g.SYSTEM_INSTRUCTIONS, None)
    system: str | None = (
        "".join(content_text(p.get("content")) for p in system_parts)
        if isinstance(system_parts, list)
        else None
    )
    messages, outputs = _messages(span, reader)
    systems = [m.content or "" for m in messages if m.role == "system"]
    if systems:
        system = "\n\n".join([*([system] if system else []), *systems])
        messages = [m for m in messages if m.role != "system"]
    content_known = bool(messages) or bool(outputs)
    response = None if span.status_code == STATUS_ERROR and not outputs else _response(a, outputs)
    ids = {c.id for c in (response.tool_calls if response else [])}
    results = [
        ToolResult(
            tool_call_id=t.attributes.get(g.TOOL_CALL_ID, ""),
            name=t.attributes.get(g.TOOL_NAME, ""),
            content=content_text(t.attributes.get(g.TOOL_CALL_RESULT)),
            error=t.status_message or None if t.status_code == STATUS_ERROR else None,
        )
        for t in tool_spans
        if t.attributes.get(g.TOOL_CALL_ID) in ids and g.TOOL_CALL_RESULT in t.attributes
    ]
    sampling = {k: a[k] for k in g.SAMPLING if k in a}
    return ImportedCall(
        system=system,
        messages=messages,
        response=response,
        tools=_tools(span),
        sampling=sampling or None,
        content_known=content_known,
        latency_ms=(span.end_ns - span.start_ns) / 1e6 if span.end_ns >= span.start_ns else None,
        error=(span.status_message or "the call failed") if response is None else None,
        tool_results=results,
    )


def _messages(span: Span, reader: g.MessageReader) -> tuple[list[Message], list[dict[str, Any]]]:
    """(input messages, output messages in the conventions' shape) from whichever form the span
    uses."""
    a = span.attributes
    if g.INPUT_MESSAGES in a or g.OUTPUT_MESSAGES in a:
        outputs = _json(span, g.OUTPUT_MESSAGES, [])
        if not isinstance(outputs, list):
            raise ValueError(f"{span.label}: {g.OUTPUT_MESSAGES} must be a list")
        return list(reader.read(_json(span, g.INPUT_MESSAGES, []))), outputs
    if "gen_ai.prompt.0.role" in a or "gen_ai.completion.0.role" in a:
        return _flattened(a)
    return _from_events(span)


def _flattened(a: dict[str, Any]) -> tuple[list[Message], list[dict[str, Any]]]:
    messages: list[Message] = []
    i = 0
    while f"gen_ai.prompt.{i}.role" in a:
        p = f"gen_ai.prompt.{i}."
        role = a[p + "role"]
        calls = _indexed_calls(a, p)
        messages.append(
            Message(
                role=role if role in ("system", "user", "assistant", "tool") else "user",
                content=a.get(p + "content"),
                tool_calls=tuple(calls) or None,
                tool_call_id=a.get(p + "tool_call_id"),
            )
        )
        i += 1
    outputs = []
    j = 0
    while f"gen_ai.completion.{j}.role" in a or f"gen_ai.completion.{j}.content" in a:
        p = f"gen_ai.completion.{j}."
        parts: list[dict[str, Any]] = [{"type": "text", "content": a.get(p + "content") or ""}]
        parts += [
            {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
            for c in _indexed_calls(a, p)
        ]
        outputs.append(
            {"role": "assistant", "parts": parts, "finish_reason": a.get(p + "finish_reason")}
        )
        j += 1
    return messages, outputs


def _indexed_calls(a: dict[str, Any], prefix: str) -> list[ToolCall]:
    calls = []
    k = 0
    while f"{prefix}tool_calls.{k}.name" in a:
        q = f"{prefix}tool_calls.{k}."
        part = {"id": a.get(q + "id"), "name": a[q + "name"], "arguments": a.get(q + "arguments")}
        calls.extend(_calls(part))
        k += 1
    return calls


def _from_events(span: Span) -> tuple[list[Message], list[dict[str, Any]]]:
    messages: list[Message] = []
    outputs: list[dict[str, Any]] = []
    for name, _, attrs in span.events:
        if name.startswith("gen_ai.") and name.endswith(".message"):
            role = name.removeprefix("gen_ai.").removesuffix(".message")
            data = {"role": attrs.get("role", role), "content": attrs.get("content")}
            if role == "tool":
                data = {
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool_call_response",
                            "id": attrs.get("id"),
                            "response": attrs.get("content"),
                        }
                    ],
                }
            messages.extend(g.from_genai(data))
        elif name == "gen_ai.choice":
            message = attrs.get("message")
            if isinstance(message, str):
                message = json.loads(message)
            text = content_text((message or {}).get("content"))
            outputs.append(
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": text}],
                    "finish_reason": attrs.get("finish_reason"),
                }
            )
    return messages, outputs


def _response(a: dict[str, Any], outputs: list[dict[str, Any]]) -> StepResponse:
    parts = outputs[0].get("parts", []) if outputs and isinstance(outputs[0], dict) else []
    texts = [content_text(p.get("content")) for p in parts if p.get("type") == "text"]
    calls = [c for p in parts if p.get("type") == "tool_call" for c in _calls(p)]
    reasons = a.get(g.FINISH_REASONS)
    finish = reasons[0] if isinstance(reasons, list) and reasons else None
    if finish is None and outputs and isinstance(outputs[0], dict):
        finish = outputs[0].get("finish_reason")
    usage = Usage(
        input_tokens=int(a.get(g.INPUT_TOKENS, a.get(g.PROMPT_TOKENS_OLD, 0)) or 0),
        output_tokens=int(a.get(g.OUTPUT_TOKENS, a.get(g.COMPLETION_TOKENS_OLD, 0)) or 0),
    )
    return StepResponse(
        text="".join(texts),
        tool_calls=calls,
        finish_reason=finish,
        usage=usage,
        reasoning=g.reasoning_text(parts),
    )


def _tools(span: Span) -> list[ToolSpec] | None:
    a = span.attributes
    if g.TOOL_DEFINITIONS in a:
        return [_tool_spec(t) for t in _json(span, g.TOOL_DEFINITIONS, [])]
    if "model_request_parameters" in a:  # Pydantic AI
        params = _json(span, "model_request_parameters", {})
        found = [*params.get("function_tools", []), *params.get("output_tools", [])]
        return [
            ToolSpec(
                name=t["name"],
                description=t.get("description") or "",
                parameters=t.get("parameters_json_schema") or {"type": "object", "properties": {}},
            )
            for t in found
        ]
    if "llm.request.functions.0.name" in a:
        out = []
        i = 0
        while f"llm.request.functions.{i}.name" in a:
            p = f"llm.request.functions.{i}."
            params = a.get(p + "parameters")
            out.append(
                ToolSpec(
                    name=a[p + "name"],
                    description=a.get(p + "description") or "",
                    parameters=json.loads(params) if isinstance(params, str) else params or {},
                )
            )
            i += 1
        return out
    return None


def _tool_spec(t: Any) -> ToolSpec:
    if not isinstance(t, dict) or not isinstance(t.get("name"), str):
        raise ValueError("a tool definition needs a name")
    return ToolSpec(
        name=t["name"],
        description=t.get("description") or "",
        parameters=t.get("parameters") or {"type": "object", "properties": {}},
    )


def _calls(part: dict[str, Any]) -> list[ToolCall]:
    message = g.from_genai({"role": "assistant", "parts": [dict(part, type="tool_call")]})[0]
    return list(message.tool_calls or ())


# ---- helpers ------------------------------------------------------------------------------------


def _at_span(span: Span, read: Callable[..., _T], *args: Any) -> _T:
    """``read(*args)``, a failure named after the span it read."""
    try:
        return read(*args)
    except SpanError:
        raise
    except MALFORMED as exc:
        text = why(exc)
        raise SpanError(text if text.startswith("span ") else f"{span.label}: {text}") from None


def _json(span: Span, key: str, default: Any) -> Any:
    """An attribute holding JSON text (or already a value); ``ValueError`` names the key."""
    if key not in span.attributes:
        return default
    v = span.attributes[key]
    if not isinstance(v, str):
        return v
    try:
        return json.loads(v)
    except ValueError:
        raise ValueError(f"{span.label}: {key} is not valid JSON") from None


def _at(span: Span, name: str) -> int:
    v = span.attributes.get(g.ns(name))
    if not isinstance(v, int):
        raise ValueError(f"{span.label}: {g.ns(name)} must be an integer")
    return v


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat().replace("+00:00", "Z")
