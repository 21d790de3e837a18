"""``loads``: ``json.loads`` of a large JSON text in pieces, so that no single C call holds the
GIL for the whole text.

A run's record JSON holds its scenario source, whose script has an entry per scripted reply:
2.6 MB for a turn of 10,000 attempts. ``json.loads`` of it is one C call of 25–100 ms on this
machine, and the window reads runs on a worker thread: the UI thread waited for the GIL that
long. Here the containers of the top ``depth`` levels are walked in Python and each value below
them is parsed by the C scanner on its own (``json.scanner``: one call per value), so the
interpreter can switch threads between two values. The result is ``json.loads``'s; so is a
malformed text's error (``json.JSONDecodeError``). Below ``PIECES_MIN`` characters, or in a
process with one thread (the command line: no thread waits for the GIL), it is ``json.loads``
itself.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

PIECES_MIN = 256 * 1024  # characters: a shorter text is parsed in one call (~5 ms at most)
DEPTH = 3  # levels of containers walked in Python (the record, its scenario source, the script)

# json.loads's own C scanner: one value from a position, and where it ends
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_SPACE = re.compile(r"[ \t\n\r]*")
_SPACES = frozenset(" \t\n\r")
_OPENINGS = frozenset("{[")


def loads(text: str, depth: int = DEPTH) -> Any:
    """``json.loads(text)``, in pieces when the text is ``PIECES_MIN`` characters or more and
    another thread runs."""
    if len(text) < PIECES_MIN or threading.active_count() == 1:
        return json.loads(text)
    try:
        value, end = _value(text, _skip(text, 0), depth)
    except IndexError:  # the text ended inside a container
        raise json.JSONDecodeError("Expecting value", text, len(text)) from None
    end = _skip(text, end)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _skip(text: str, at: int) -> int:
    """Where the white space from ``at`` ends."""
    found = _SPACE.match(text, at)
    return found.end() if found else at


def _leaf(text: str, at: int) -> tuple[Any, int]:
    try:
        found: tuple[Any, int] = _scan(text, at)
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    return found


def _value(text: str, at: int, depth: int) -> tuple[Any, int]:
    """The value starting at ``at`` (no space before it) and where it ends. Compact JSON (what
    the store writes) takes no regular expression: white space is looked for only where a
    character says it is there."""
    opening = text[at]
    if depth <= 0 or opening not in _OPENINGS:
        return _leaf(text, at)
    inner, at = depth - 1, at + 1
    if text[at] in _SPACES:
        at = _skip(text, at)
    if opening == "[":
        items: list[Any] = []
        append = items.append
        if text[at] == "]":
            return items, at + 1
        while True:
            item, at = _value(text, at, inner) if inner else _leaf(text, at)
            append(item)
            mark = text[at]
            if mark in _SPACES:
                at = _skip(text, at)
                mark = text[at]
            if mark == ",":
                at += 1
                if text[at] in _SPACES:
                    at = _skip(text, at)
            elif mark == "]":
                return items, at + 1
            else:
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
    fields: dict[str, Any] = {}
    if text[at] == "}":
        return fields, at + 1
    while True:
        if text[at] != '"':
            raise json.JSONDecodeError(
                "Expecting property name enclosed in double quotes", text, at
            )
        key, at = _leaf(text, at)
        if text[at] in _SPACES:
            at = _skip(text, at)
        if text[at] != ":":
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at += 1
        if text[at] in _SPACES:
            at = _skip(text, at)
        fields[key], at = _value(text, at, inner) if inner else _leaf(text, at)
        mark = text[at]
        if mark in _SPACES:
            at = _skip(text, at)
            mark = text[at]
        if mark == ",":
            at += 1
            if text[at] in _SPACES:
                at = _skip(text, at)
        elif mark == "}":
            return fields, at + 1
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
