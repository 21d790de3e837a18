"""``agent-inspector import FILE``: a file → runs, whole or not at all.

``import_file`` reads the file, detects its format (``auto``) and returns the records; it never
stores anything, so a bad file leaves no partial run behind (the caller stores the records in
one go). Every problem is one ``ImportFileError`` line naming the file, the line, message or
span, and what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from inspector.core.errors import ScenarioError
from inspector.core.records import RunRecord
from inspector.formats import MALFORMED, why

ImportChoice = Literal["auto", "otel", "pydantic-ai", "openai-jsonl", "inspector-jsonl"]
FORMATS: tuple[ImportChoice, ...] = (
    "auto",
    "otel",
    "pydantic-ai",
    "openai-jsonl",
    "inspector-jsonl",
)
Detected = Literal["otel", "pydantic-ai", "openai-jsonl", "inspector-jsonl"]
# What ``--format auto`` says of a file it cannot place (one line, after the file's name).
UNRECOGNISED = (
    "format not recognised: not OTLP/JSON, a Pydantic AI message history, a chat-completions"
    " JSONL log or an agent-inspector JSONL export (--format accepts: " + ", ".join(FORMATS) + ")"
)


MALFORMED_OR_DEEP: tuple[type[Exception], ...] = (
    *MALFORMED,
    RecursionError,
)  # deeply nested JSON is malformed too


class ImportFileError(ScenarioError):
    """Bad input (exit 2): ``FILE: where: problem``."""


def detect(text: str, data: Any = None) -> Detected | None:
    """The format a file's text is in: a JSON object with ``resourceSpans`` is OTLP/JSON, a JSON
    list of request/response messages a Pydantic AI history, lines of JSON objects a log (or
    this project's own export, by its header line).
    ``data``: the text already parsed (``None``: parsed here, when it parses)."""
    from inspector.formats.inspector_jsonl_import import is_export
    from inspector.formats.pydantic_ai_import import looks_like_history

    stripped = text.lstrip()
    if data is None:
        data = _parsed(text)
    if isinstance(data, dict) and "resourceSpans" in data:
        return "otel"
    if looks_like_history(data):
        return "pydantic-ai"
    if stripped.startswith("{"):
        if is_export(stripped):
            return "inspector-jsonl"
        # A log's first line is one call; a file that is one JSON object (a response body, a
        # pretty-printed document) is not a log unless that object is a call.
        first = data if isinstance(data, dict) else _parsed(stripped.split("\n", 1)[0])
        if looks_like_call(first):
            return "openai-jsonl"
    return None


def looks_like_call(entry: Any) -> bool:
    """Whether a JSON value is one line of a chat-completions log: ``{"request", ...}`` or a
    Batch API input or output line."""
    if not isinstance(entry, dict):
        return False
    return "request" in entry or "custom_id" in entry or isinstance(entry.get("body"), dict)


def _broken_first_line(text: str) -> str | None:
    """Why a log's first line is not JSON (``line 1: …``), when it reads as one JSON object
    begun on one line: a damaged log says where, not "format not recognised"."""
    first = text.lstrip().split("\n", 1)[0].strip()
    if not first.startswith("{") or '"' not in first:
        return None
    try:
        json.loads(first)
    except json.JSONDecodeError as exc:
        return f"line 1: not valid JSON: {exc.msg} (column {exc.colno})"
    return None


def _parsed(text: str) -> Any:
    """The text as one JSON value, or ``None`` (a log of lines, or not JSON at all)."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def import_file(
    path: Path, fmt: ImportChoice, new_id: Callable[[], str], name: str | None = None
) -> list[RunRecord]:
    """The runs in ``path``. ``name`` is how the file is called in records and errors."""
    label = name or path.name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ImportFileError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ImportFileError(f"{path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise ImportFileError(f"{path}: cannot read: {exc.strerror}") from None
    # Parsed once: a long run's OTLP file is hundreds of MB.
    data = _parsed(text) if fmt in ("auto", "otel", "pydantic-ai") else None
    chosen = detect(text, data) if fmt == "auto" else fmt
    if chosen is None:
        raise ImportFileError(f"{path}: {_broken_first_line(text) or UNRECOGNISED}")
    try:
        return _parse(chosen, text, label, new_id, data)
    except ImportFileError:
        raise
    except MALFORMED_OR_DEEP as exc:
        raise ImportFileError(f"{path}: {chosen}: {why(exc)}") from None


def _parse(
    fmt: str, text: str, label: str, new_id: Callable[[], str], data: Any = None
) -> list[RunRecord]:
    if fmt == "openai-jsonl":
        from inspector.formats.openai_jsonl_import import runs_from_jsonl

        return runs_from_jsonl(text, label, new_id)
    if fmt == "inspector-jsonl":
        from inspector.formats.inspector_jsonl_import import run_from_export

        return [run_from_export(text)]
    if data is None:  # not JSON (or JSON null): the error says where
        data = _json(text)
    if fmt == "otel":
        from inspector.formats.otel_import import runs_from_otlp

        return runs_from_otlp(data, label, new_id)
    from inspector.formats.pydantic_ai_import import run_from_history

    return [run_from_history(data, label, new_id())]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno}: invalid JSON: {exc.msg}") from None
