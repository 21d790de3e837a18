"""Open formats: runs as OpenTelemetry GenAI traces, and other tools' traces, message histories
and request logs as runs (docs/formats.md). Core only: no Qt, no store, no HTTP client; the
commands and the window call these and store what they return."""

from __future__ import annotations

from pydantic import ValidationError

# What reading a malformed value raises (a missing key, a wrong type, a number out of range).
MALFORMED: tuple[type[Exception], ...] = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    OverflowError,
)


def why(exc: BaseException) -> str:
    """One line saying what is wrong with a value (a missing key, a pydantic error's first
    field and message, else the exception's first line)."""
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
