"""OTLP/JSON, the OpenTelemetry protocol's JSON encoding, as plain dicts.

The encoding's rules (opentelemetry-proto ``docs/specification.md``, "JSON Protobuf Encoding"):
camelCase field names, trace and span ids as lowercase hex (not base64), 64-bit integers as
decimal strings, enums as integers. ``from_protobuf_dict`` turns protobuf's own JSON mapping
(``google.protobuf.json_format.MessageToDict``: base64 ids, enum names) into that, so a request a
collector decoded compares equal to the file this project writes.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT = 1, 3
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


_MALFORMED = (ValueError, TypeError, AttributeError, OverflowError)


def stable_id(seed: str, size: int) -> str:
    """A hex id of ``size`` bytes derived from ``seed``: exporting a run twice gives the same
    ids, so a collector sees the same trace (and tests compare files)."""
    return hashlib.blake2b(seed.encode("utf-8"), digest_size=size).hexdigest()


class Verbatim(str):
    """Text already in its final form (JSON made and redacted piece by piece): sent as it is."""


def value(v: Any) -> dict[str, Any]:
    """An ``AnyValue``. Objects are sent as JSON text: the GenAI conventions say so for message
    and tool attributes, and most backends show no other structured value."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, str):
        return {"stringValue": str(v)}
    if isinstance(v, list | tuple) and all(isinstance(x, str) for x in v):
        return {"arrayValue": {"values": [{"stringValue": x} for x in v]}}
    return {"stringValue": json.dumps(v, ensure_ascii=False, separators=(",", ":"))}


def attributes(items: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in items.items() if v is not None]


def document_chunks(
    resource: dict[str, Any], scope: dict[str, Any], spans: Iterable[dict[str, Any]]
) -> Iterator[str]:
    """The text of ``{"resourceSpans": [{"resource", "scopeSpans": [{**scope, "spans"}]}]}``,
    one span at a time (at least one span): the frame indented as ``json.dumps(...,
    indent=1)`` makes it, each span compact on a line of its own (the C encoder; ``indent``
    would take the pure-Python one, 3x slower)."""
    hole = json.dumps(_HOLE)
    shell = {"resourceSpans": [{"resource": resource, "scopeSpans": [{**scope, "spans": [_HOLE]}]}]}
    text = json.dumps(shell, ensure_ascii=False, indent=1)
    at = text.index(hole)
    line = text.rindex("\n", 0, at) + 1
    indent = text[line:at]
    yield text[:line]
    separator = ""
    for span in spans:
        yield separator + indent + json.dumps(span, ensure_ascii=False, separators=(",", ":"))
        separator = ",\n"
    yield text[at + len(hole) :] + "\n"


_HOLE = "\u0000spans\u0000"


class OtlpShapeError(ValueError):
    """A value that is not OTLP/JSON (the importer names the span)."""


def decode_value(v: Any) -> Any:
    """The Python value of an ``AnyValue``; ``intValue`` may be a string or a number."""
    if not isinstance(v, dict):
        raise OtlpShapeError(f"an attribute value must be an object, got {type(v).__name__}")
    if not v:
        return None
    ((kind, inner),) = list(v.items())[:1]
    if kind == "stringValue":
        return str(inner)
    if kind == "boolValue":
        return bool(inner)
    if kind == "intValue":
        try:
            return int(inner)
        except (TypeError, ValueError):
            raise OtlpShapeError(f"intValue {inner!r} is not an integer") from None
    if kind == "doubleValue":
        try:
            return float(inner)
        except (TypeError, ValueError):
            raise OtlpShapeError(f"doubleValue {inner!r} is not a number") from None
    if kind == "arrayValue":
        values = inner.get("values", []) if isinstance(inner, dict) else None
        if not isinstance(values, list):
            raise OtlpShapeError("arrayValue needs a list of values")
        return [decode_value(x) for x in values]
    if kind == "kvlistValue":
        values = inner.get("values", []) if isinstance(inner, dict) else None
        if not isinstance(values, list):
            raise OtlpShapeError("kvlistValue needs a list of values")
        return decode_attributes(values)
    if kind == "bytesValue":
        return str(inner)
    raise OtlpShapeError(f"unknown attribute value kind {kind!r}")


def decode_attributes(items: Any) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise OtlpShapeError("attributes must be a list")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise OtlpShapeError("an attribute needs a key")
        out[item["key"]] = decode_value(item.get("value", {}))
    return out


@dataclass
class Span:
    """One decoded span: what the importers read."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    status_code: int = STATUS_UNSET
    status_message: str = ""
    kind: int = SPAN_KIND_INTERNAL
    position: int = 0  # 1-based order in the file, to name it in errors

    @property
    def label(self) -> str:
        return f"span {self.position} ({self.name!r}, id {self.span_id or '?'})"


def spans(document: Any) -> Iterator[Span]:
    """Every span of an ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``), in order.
    ``OtlpShapeError`` names the span that is malformed."""
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
        raise OtlpShapeError("not OTLP/JSON: no resourceSpans list at the top")
    position = 0
    for resource in document["resourceSpans"]:
        for scope in _list(resource, "scopeSpans"):
            for raw in _list(scope, "spans"):
                position += 1
                try:
                    yield _span(raw, position)
                except (
                    OtlpShapeError,
                    ValueError,
                    TypeError,
                    AttributeError,
                    OverflowError,
                ) as exc:
                    name = raw.get("name") if isinstance(raw, dict) else None
                    raise OtlpShapeError(f"span {position} ({name!r}): {exc}") from None


def _list(obj: Any, key: str) -> list[Any]:
    if not isinstance(obj, dict):
        raise OtlpShapeError(f"expected an object holding {key}")
    items = obj.get(key, [])
    if not isinstance(items, list):
        raise OtlpShapeError(f"{key} must be a list")
    return items


def _span(raw: Any, position: int) -> Span:
    if not isinstance(raw, dict):
        raise OtlpShapeError("a span must be an object")
    name = raw.get("name")
    if not isinstance(name, str):
        raise OtlpShapeError("a span needs a name")
    events = []
    for event in raw.get("events") or []:
        if not isinstance(event, dict):
            raise OtlpShapeError("an event must be an object")
        events.append(
            (
                str(event.get("name", "")),
                _nanos(event.get("timeUnixNano")),
                decode_attributes(event.get("attributes")),
            )
        )
    status = raw.get("status") or {}
    if not isinstance(status, dict):
        raise OtlpShapeError("status must be an object")
    code = status.get("code", 0)
    kind = raw.get("kind", 0)
    return Span(
        trace_id=_id(raw.get("traceId")),
        span_id=_id(raw.get("spanId")),
        parent_id=_id(raw.get("parentSpanId")),
        name=name,
        start_ns=_nanos(raw.get("startTimeUnixNano")),
        end_ns=_nanos(raw.get("endTimeUnixNano")),
        attributes=decode_attributes(raw.get("attributes")),
        events=events,
        status_code=_STATUS.get(code, 0) if isinstance(code, str) else int(code),
        status_message=str(status.get("message", "")),
        kind=_KINDS.get(kind, 0) if isinstance(kind, str) else int(kind),
        position=position,
    )


def _id(v: Any) -> str:
    if v is None or v == "":
        return ""
    if not isinstance(v, str):
        raise OtlpShapeError(f"an id must be a hex string, got {type(v).__name__}")
    try:
        bytes.fromhex(v)
    except ValueError:
        raise OtlpShapeError(f"id {v!r} is not hex") from None
    return v.lower()


def _nanos(v: Any) -> int:
    if v is None:
        return 0
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        raise OtlpShapeError(f"time {v!r} is not a number of nanoseconds") from None


# ---- protobuf's JSON mapping → OTLP/JSON --------------------------------------------------------


def from_protobuf_dict(data: Any) -> Any:
    """``MessageToDict`` output of an ``ExportTraceServiceRequest`` in OTLP/JSON: base64 ids
    to hex, enum names to numbers. Everything else is already the same."""
    if isinstance(data, list):
        return [from_protobuf_dict(x) for x in data]
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    for key, v in data.items():
        if key in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
            out[key] = base64.b64decode(v).hex()
        elif key == "kind" and isinstance(v, str):
            out[key] = _KINDS.get(v, 0)
        elif key == "code" and isinstance(v, str):
            out[key] = _STATUS.get(v, 0)
        else:
            out[key] = from_protobuf_dict(v)
    return out
