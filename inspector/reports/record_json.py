"""The run record as ``--json`` prints it (DESIGN §4), written in chunks, each message once.

The text is exactly ``json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False)``
— every step with its full request, as the contract says. What made it slow was not the size:
a growing-history turn's N requests re-send ~N²/2 messages, and the indenting encoder (pure
Python: CPython's C encoder does not indent) wrote each of them again, ~1.2 s at 300 steps,
~20 s at 1,000. A loaded record's steps share their message objects (``SharedPrefix``), so a
message's indented text is made once and repeated; the rest of a step goes through
``json.dumps`` as before. A message nested at depth ``d`` is its standalone text with ``2d``
spaces after every newline (the encoder's only newlines: a newline inside a string is ``\\n``).

Chunks are joined up to ``CHUNK`` characters before they are written: ``json.dump`` writes every
token with its own ``write`` call, a system call each where the stream is unbuffered
(``PYTHONUNBUFFERED=1``, as in many containers): 2.8 million of them at 300 steps.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from inspector.core.records import RunRecord, Step, StepRequest

__all__ = ["CHUNK", "record_json_chunks", "write_json", "write_record_json"]

CHUNK = 1 << 16
_INDENT = "  "


def write_json(value: Any, out: TextIO) -> None:
    """``json.dump(value, out, indent=2, ensure_ascii=False)`` and a newline, in few writes."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False)
    _write(encoder.iterencode(value), out)


def write_record_json(record: RunRecord, out: TextIO) -> None:
    """``--json``'s record and a newline: ``write_json(record.model_dump(mode="json"), out)``."""
    _write(record_json_chunks(record), out)


def _write(chunks: Iterable[str], out: TextIO) -> None:
    held: list[str] = []
    size = 0
    for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if size >= CHUNK:
            out.write("".join(held))
            held, size = [], 0
    held.append("\n")
    out.write("".join(held))


def record_json_chunks(record: RunRecord) -> Iterator[str]:
    """The text of ``json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False)``
    in pieces."""
    dump = record.model_dump(mode="json", exclude={"steps"})
    names = [name for name in type(record).model_fields if name == "steps" or name in dump]
    if [name for name in names if name != "steps"] != list(dump):
        yield _indented(record.model_dump(mode="json"), 0)  # a shape this writer does not know
        return
    messages: dict[tuple[int, int], str] = {}
    pairs = [(name, _steps(record.steps, messages) if name == "steps" else dump[name])
             for name in names]  # fmt: skip
    yield from _object(pairs, 0)


class _Chunks:
    """A value written by a function of its depth."""

    __slots__ = ("write",)

    def __init__(self, write: Any) -> None:
        self.write = write


def _steps(steps: Iterable[Step], messages: dict[tuple[int, int], str]) -> _Chunks:
    def write(level: int) -> Iterator[str]:
        return _array((_step(step, messages) for step in steps), level)

    return _Chunks(write)


def _step(step: Step, messages: dict[tuple[int, int], str]) -> Any:
    dump = step.model_dump(mode="json", exclude={"request"})
    request = _request(step.request, messages)
    return _Chunks(lambda level: _object(_in_field_order(step, dump, request=request), level))


def _request(request: StepRequest, messages: dict[tuple[int, int], str]) -> _Chunks:
    dump = request.model_dump(mode="json", exclude={"messages"})

    def listed(level: int) -> Iterator[str]:
        return _array((_message(m, messages) for m in request.messages), level)

    pairs = _in_field_order(request, dump, messages=_Chunks(listed))
    return _Chunks(lambda level: _object(pairs, level))


def _message(message: Any, texts: dict[tuple[int, int], str]) -> _Chunks:
    def write(level: int) -> Iterator[str]:
        # The record holds every message until the text is written: ids stay its own.
        key = (id(message), level)
        text = texts.get(key)
        if text is None:
            text = texts[key] = _indented(message.model_dump(mode="json"), level)
        yield text

    return _Chunks(write)


def _in_field_order(model: Any, dump: dict[str, Any], **written: _Chunks) -> list[Any]:
    """``dump``'s pairs with ``written`` at their fields' places (the model's field order)."""
    return [(name, written[name] if name in written else dump[name])
            for name in type(model).model_fields if name in written or name in dump]  # fmt: skip


def _object(pairs: Iterable[tuple[str, Any]], level: int) -> Iterator[str]:
    inner = "\n" + _INDENT * (level + 1)
    opening = "{" + inner
    wrote = False
    for key, value in pairs:
        yield (opening if not wrote else "," + inner) + json.dumps(key, ensure_ascii=False) + ": "
        wrote = True
        yield from _value(value, level + 1)
    yield "\n" + _INDENT * level + "}" if wrote else "{}"


def _array(items: Iterable[Any], level: int) -> Iterator[str]:
    inner = "\n" + _INDENT * (level + 1)
    wrote = False
    for item in items:
        yield ("[" if not wrote else ",") + inner
        wrote = True
        yield from _value(item, level + 1)
    yield "\n" + _INDENT * level + "]" if wrote else "[]"


def _value(value: Any, level: int) -> Iterator[str]:
    if isinstance(value, _Chunks):
        yield from value.write(level)
    else:
        yield _indented(value, level)


def _indented(value: Any, level: int) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.replace("\n", "\n" + _INDENT * level) if level else text
