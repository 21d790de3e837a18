"""JSON written once and put together: an export's lines without encoding again what repeats.

A long run's JSONL export repeats a lot: a step's dump is in its ``step_finished`` line and in
the record of ``run_finished``, a message is in every request that re-sends it, a request's
system prompt and tools in every step. A ``Piece`` is one JSON value already written as compact
text (``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``); ``obj``, ``array`` and
``with_items`` splice pieces into larger ones. Compact ``json.dumps`` of a dict is ``{`` +
``"key":value`` items joined by ``,`` + ``}`` (of a list, ``[`` + items + ``]``), so a spliced
text is byte for byte the text of the whole value. The value itself is made only when asked
(``make``): only a line that may hold a secret needs it.

Redaction: a line is written as its text when ``may_hold_secrets`` finds nothing in it, else as
``redacted_json`` of its value (the full walk), exactly as a line dumped whole would be.
``written`` searches many lines at once: what the search looks for — a credential-like
name followed by ``:`` or ``=``, ``bearer``, ``sk-`` after a non-word character — never
straddles two lines (a line starts with ``{`` and ends with ``}``, and they are joined by a
newline), so lines that are clean together are clean one by one, and only a group that is not
is searched line by line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

from inspector.core.compact_json import dumps
from inspector.reports.redact import may_hold_secrets, redacted_json

T = TypeVar("T")


class Piece(NamedTuple):
    """A JSON value's compact text; ``make`` gives the value (made when asked). ``search``:
    the text to search for secrets in its place, when parts of it are known to hold none."""

    text: str
    make: Callable[[], Any]
    search: str | None = None

    @property
    def value(self) -> Any:
        return self.make()

    def written(self) -> str:
        """The text as an export writes it: as it stands when clean, else redacted."""
        return redacted_json(self.make()) if may_hold_secrets(self.text) else self.text


def piece(value: Any) -> Piece:
    return Piece(dumps(value), lambda: value)


_KEYS: dict[str, str] = {}


def key(name: str) -> str:
    """``"name":`` (the few names of a run's fields, written once each)."""
    text = _KEYS.get(name)
    if text is None:
        text = _KEYS[name] = dumps(name) + ":"
    return text


def obj(items: Mapping[str, Any]) -> Piece:
    """The object of ``items``, whose values are pieces or plain JSON values (those between two
    pieces written in one ``json.dumps``). Its text is one join of the parts (a record's line
    is megabytes: each concatenation would copy it again)."""
    parts: list[str] = ["{"]
    plain: dict[str, Any] = {}
    for name, item in items.items():
        if not isinstance(item, Piece):
            plain[name] = item
            continue
        if plain:
            parts += (dumps(plain)[1:-1], ",")
            plain = {}
        parts += (key(name), item.text, ",")
    if plain:
        parts.append(dumps(plain)[1:-1])
    elif len(parts) > 1:
        parts.pop()  # the last comma
    parts.append("}")

    def make() -> dict[str, Any]:
        return {n: v.make() if isinstance(v, Piece) else v for n, v in items.items()}

    return Piece("".join(parts), make)


def array(items: Iterable[Piece]) -> Piece:
    pieces = list(items)
    if not pieces:
        return Piece("[]", list)
    parts = [","] * (2 * len(pieces) + 1)  # "[", text, ",", text, ..., "]": one join
    parts[1::2] = [p.text for p in pieces]
    parts[0], parts[-1] = "[", "]"
    return Piece("".join(parts), lambda: [p.make() for p in pieces])


def with_items(base: Piece, *items: tuple[str, Piece]) -> Piece:
    """``base`` (an object) with more items at its end."""
    added = ",".join([f"{key(name)}{item.text}" for name, item in items])
    comma = "," if base.text != "{}" and added else ""

    def make() -> dict[str, Any]:
        value: dict[str, Any] = base.make()
        return {**value, **{name: item.make() for name, item in items}}

    return Piece(f"{base.text[:-1]}{comma}{added}}}", make)


# Lines searched for secrets together: about this many characters (a longer line alone).
GROUP_CHARS = 256 * 1024


def written(
    lines: list[str],
    value_of: Callable[[int], Any],
    searched: list[str] | None = None,
    parts: list[str] | None = None,
) -> list[str]:
    """``lines`` (JSON texts, one object each) as an export writes them: ``lines`` itself when
    the search for secrets finds nothing in them together (the module's docstring says why that
    is what it finds line by line); else a new list, each line searched alone, and one that may
    hold a secret written as ``redacted_json`` of its value (``value_of(n)``, the ``n``-th
    line's).
    ``searched``: what to search for each line (its text, or less where the rest is known to
    hold no secret). ``parts``: what to search for the lines together, when not ``searched``:
    JSON values whole (objects, arrays, strings...), every part of the lines that may hold a
    secret among them (what the lines hold besides is keys and numbers of the export's own, or
    parts found clean in groups before). A match of the search lies inside one value (a name
    and its ``:`` inside an object, ``bearer`` or ``sk-`` inside a string), so parts that are
    clean together leave the lines clean."""
    searched = lines if searched is None else searched
    if not may_hold_secrets("\n".join(searched if parts is None else parts)):
        return lines
    return [
        redacted_json(value_of(n)) if may_hold_secrets(search) else line
        for n, (line, search) in enumerate(zip(lines, searched, strict=True))
    ]


class PieceCache(Generic[T]):
    """One entry (a piece) per object; the entry holds the object, so its id stays its."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Any, T]] = {}

    def find(self, obj: Any) -> T | None:
        hit = self._entries.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def put(self, obj: Any, entry: T) -> T:
        self._entries[id(obj)] = (obj, entry)
        return entry

    def get(self, obj: Any, make: Callable[[], T]) -> T:
        found = self.find(obj)
        return self.put(obj, make()) if found is None else found
