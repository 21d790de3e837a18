"""Pushing exported spans to a collector over OTLP/HTTP (``export --otlp-endpoint URL``).

The spans are the very ones ``otel_export`` writes to a file: the OTLP/JSON document is turned
into the OpenTelemetry SDK's ``ReadableSpan``s and handed to the SDK's own OTLP/HTTP (protobuf)
exporter, so the collector sees what any instrumented program would send. Headers (Langfuse
wants ``Authorization=Basic ...``) go on the request only: never printed, logged or stored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from inspector.core.errors import InspectorError, ScenarioError
from inspector.formats.otlp_json import (
    SPAN_KIND_CLIENT,
    STATUS_ERROR,
    STATUS_OK,
    decode_attributes,
    spans,
)

TRACES_PATH = "/v1/traces"
DEFAULT_TIMEOUT_S = 10.0


def traces_url(endpoint: str) -> str:
    """The URL spans are posted to: ``endpoint`` as given when it names a path, else with
    ``/v1/traces`` appended (the OTLP exporter's rule for a base endpoint)."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ScenarioError(f"--otlp-endpoint: {endpoint!r} is not an http(s) URL")
    if parts.path in ("", "/"):
        return endpoint.rstrip("/") + TRACES_PATH
    return endpoint


def parse_headers(items: list[str]) -> dict[str, str]:
    """``K=V`` pairs; a bad one is a one-line error that does not echo the value."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError("--header: expected NAME=VALUE (a header without a name or '=')")
        out[key.strip()] = value
    return out


def readable_spans(document: dict[str, Any]) -> list[Any]:
    """The SDK's ``ReadableSpan``s of an OTLP/JSON document (``otel_export.run_to_otlp``)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def context(trace_id: str, span_id: str) -> SpanContext:
        return SpanContext(
            trace_id=int(trace_id, 16),
            span_id=int(span_id, 16),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )

    out = []
    for resource, scope, span_list in _groups(document):
        res = Resource(decode_attributes(resource.get("attributes")))
        ins = InstrumentationScope(str(scope.get("name", "")), scope.get("version"))
        for span in spans({"resourceSpans": [{"scopeSpans": [{"spans": span_list}]}]}):
            code = {STATUS_OK: StatusCode.OK, STATUS_ERROR: StatusCode.ERROR}.get(
                span.status_code, StatusCode.UNSET
            )
            out.append(
                ReadableSpan(
                    name=span.name,
                    context=context(span.trace_id, span.span_id),
                    parent=context(span.trace_id, span.parent_id) if span.parent_id else None,
                    resource=res,
                    attributes=span.attributes,
                    events=[Event(n, attrs, timestamp=t) for n, t, attrs in span.events],
                    kind=SpanKind.CLIENT if span.kind == SPAN_KIND_CLIENT else SpanKind.INTERNAL,
                    status=Status(code, span.status_message or None)
                    if code is StatusCode.ERROR
                    else Status(code),
                    start_time=span.start_ns,
                    end_time=span.end_ns,
                    instrumentation_scope=ins,
                )
            )
    return out


def push(
    document: dict[str, Any],
    endpoint: str,
    headers: Mapping[str, str],
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> int:
    """Sends the spans; returns how many. ``InspectorError`` (one line, no header values) when
    the collector refuses them or cannot be reached."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    url = traces_url(endpoint)
    batch = readable_spans(document)
    exporter = OTLPSpanExporter(endpoint=url, headers=dict(headers), timeout=timeout_s)
    try:
        with _exporter_log() as failures:
            result = exporter.export(batch)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
    if result is not SpanExportResult.SUCCESS:
        if any(line.startswith("Transient error") for line in failures):
            detail = ": cannot reach it (retried until the timeout)"
        else:
            detail = f": {failures[-1]}" if failures else ""
        raise InspectorError(f"export: {url} did not accept the spans{detail}")
    return len(batch)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage().splitlines()[0][:200])


@contextmanager
def _exporter_log() -> Iterator[list[str]]:
    """The SDK exporter reports failures through logging: collected here (and not printed) so
    the command says one line of its own."""
    logger = logging.getLogger("opentelemetry.exporter.otlp.proto.http")
    handler = _Collect()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _groups(document: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], list[Any]]]:
    for rs in document.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            yield rs.get("resource") or {}, ss.get("scope") or {}, ss.get("spans", [])
