"""JSON written once and put together: an export's lines without encoding again what repeats.

A long run's JSONL export repeats a lot: a step's dump is in its ``step_finished`` line and in
the record of ``run_finished``, a message is in every request that re-sends it, a request's
system prompt and tools in every step. A ``Piece`` is one JSON value already written as compact
text (``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``), with the value it
stands for; ``obj``, ``array`` and ``with_key`` splice pieces into larger ones. Compact
``json.dumps`` of a dict is ``{`` + ``"key":value`` items joined by ``,`` + ``}`` (of a list,
``[`` + items + ``]``), so a spliced text is byte for byte the text of the whole value.

Redaction is decided the same way, piece by piece: ``suspect`` is ``may_hold_secrets`` of the
piece's text, or of any piece it is made of. What that test looks for — a credential-like name
followed by ``:`` or ``=``, ``bearer``, ``sk-`` after a non-word character — lies within one
piece: names hold no JSON punctuation, a piece is a whole value or whole ``"key":value`` items,
and a value is never followed by ``:``. So a line made of clean pieces is clean as a whole and
is written as it stands; any other line takes the full walk on its value (``redacted_json``),
exactly as a line dumped whole would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from inspector.core.compact_json import dumps
from inspector.reports.redact import may_hold_secrets, redacted_json


class Piece(NamedTuple):
    """A JSON value and its compact text; ``suspect``: the text may hold something to redact."""

    text: str
    value: Any
    suspect: bool

    def written(self) -> str:
        """The text as an export writes it: as it stands when clean, else redacted."""
        return redacted_json(self.value) if self.suspect else self.text


def piece(value: Any) -> Piece:
    text = dumps(value)
    return Piece(text, value, may_hold_secrets(text))


@lru_cache(maxsize=256)
def _key(name: str) -> tuple[str, bool]:
    """``"name":`` and whether it may announce a secret (tested as if a value followed)."""
    text = dumps(name) + ":"
    return text, may_hold_secrets(text + "0")


def obj(items: Mapping[str, Any]) -> Piece:
    """The object of ``items``, whose values are pieces or plain JSON values (those between two
    pieces written in one ``json.dumps``)."""
    parts: list[str] = []
    value: dict[str, Any] = {}
    suspect = False
    plain: dict[str, Any] = {}
    for name, item in items.items():
        if not isinstance(item, Piece):
            plain[name] = value[name] = item
            continue
        if plain:
            run = dumps(plain)
            parts.append(run[1:-1])
            suspect = suspect or may_hold_secrets(run)
            plain = {}
        key, key_suspect = _key(name)
        parts.append(key + item.text)
        value[name] = item.value
        suspect = suspect or key_suspect or item.suspect
    if plain:
        run = dumps(plain)
        parts.append(run[1:-1])
        suspect = suspect or may_hold_secrets(run)
    return Piece("{" + ",".join(parts) + "}", value, suspect)


def array(items: Iterable[Piece]) -> Piece:
    pieces = list(items)
    return Piece(
        "[" + ",".join([p.text for p in pieces]) + "]",
        [p.value for p in pieces],
        any(p.suspect for p in pieces),
    )


def with_key(base: Piece, name: str, item: Piece) -> Piece:
    """``base`` (an object) with one more item at its end."""
    key, key_suspect = _key(name)
    comma = "," if base.value else ""
    return Piece(
        f"{base.text[:-1]}{comma}{key}{item.text}}}",
        {**base.value, name: item.value},
        base.suspect or key_suspect or item.suspect,
    )


class PieceCache:
    """One piece per object (the entry holds the object, so its id stays its)."""

    def __init__(self) -> None:
        self._pieces: dict[int, tuple[Any, Piece]] = {}

    def get(self, obj: Any, make: Callable[[], Piece]) -> Piece:
        hit = self._pieces.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        made = make()
        self._pieces[id(obj)] = (obj, made)
        return made
