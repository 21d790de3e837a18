"""A large stored JSON text parsed a piece at a time, so that a worker thread reading it lets
the UI thread run in between (docs/store.md, "Reading fast").

``json.loads`` is one C call that holds the GIL from start to end: the record of a run whose
scenario holds a 100,000-entry script (27 MB) froze the window for ~0.3–1 s while a worker
thread read it. ``loads_in_pieces`` walks the outer ``depth`` levels of objects and arrays in
Python and parses each value below them with one ``raw_decode``: the same value as
``json.loads`` (same decoder, key order, duplicate keys, floats), built from many short C calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

PIECES_FROM = 1 << 20  # characters: a shorter text is parsed in one call
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def loads_in_pieces(text: str, depth: int = 3) -> Any:
    """``json.loads(text)``, the outer ``depth`` levels of containers walked in Python."""
    value, end = _value(text, _skip(text, 0), depth)
    if _skip(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _skip(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found is not None else at


def _value(text: str, at: int, depth: int) -> tuple[Any, int]:
    opening = text[at : at + 1]
    if depth <= 0 or opening not in ("{", "["):
        return _DECODER.raw_decode(text, at)
    is_object = opening == "{"
    close = "}" if is_object else "]"
    out: Any = {} if is_object else []
    at = _skip(text, at + 1)
    if text[at : at + 1] == close:
        return out, at + 1
    while True:
        if is_object:
            if text[at : at + 1] != '"':
                raise json.JSONDecodeError("Expecting property name", text, at)
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            if text[at : at + 1] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
            value, at = _value(text, _skip(text, at + 1), depth - 1)
            out[key] = value
        else:
            value, at = _value(text, at, depth - 1)
            out.append(value)
        at = _skip(text, at)
        after = text[at : at + 1]
        if after == ",":
            at = _skip(text, at + 1)
        elif after == close:
            return out, at + 1
        else:
            raise json.JSONDecodeError(f"Expecting ',' or '{close}'", text, at)
