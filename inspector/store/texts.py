"""Large texts, each stored once (issue 13 item 11).

A string of ``TEXT_MIN`` characters or more inside any JSON the store writes — a step's body
(reply, reasoning, feedback, tool results), a message, a frame, a raw response, a run's header
and record (output, scenario source), an event — is written once to ``texts``, keyed by the
BLAKE2b-128 hash of its UTF-8 bytes, and the JSON holds ``{"$text": HASH}`` where the string
was. The same text in another step or run is the same row. A raw response that is still
``ZIP_MIN`` bytes or more once its large strings are references (a streamed reply's events) is
itself a text, zlib-compressed, and the column holds ``{"$json": HASH}``.

A dict of the data itself whose only key is a marker (``$text``, ``$json``, ``$lit``) is
written as ``{"$lit": dict}``, so no value is ever mistaken for a reference. A reader
(``TextReader``) resolves references with one query per distinct text and keeps each text as
one Python string, shared by every value that refers to it.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from typing import Any

from inspector.store import json_pieces
from inspector.store.messages import content_hash, dumps

TEXT_MIN = 1024  # characters: a string this long is stored once in ``texts``
ZIP_MIN = 64 * 1024  # bytes: a raw response this long is stored zlib-compressed
REF, JSON_REF, LIT = "$text", "$json", "$lit"
MARKS = frozenset({REF, JSON_REF, LIT})
# What a JSON text holding a marker dict contains (compact form; a quote inside a JSON string
# is escaped, so these only occur as a dict's first key).
MARKED_PREFIXES = tuple(f'{{"{mark}":' for mark in sorted(MARKS))
# Streamed pieces: a fragment of a reply, never shared, usually a reference to the finished step
# (``recorder.STEP_REF``) by the time it is written; kept inline.
PIECE_KINDS = frozenset({"text_delta", "reasoning_delta", "tool_call_delta"})
# Fields of a run's header and record that SQL reads in place (``json_extract``): kept inline.
RUN_INLINE = frozenset({"overrides", "via", "budgets"})


def marked(body: str) -> bool:
    return '{"$' in body and any(mark in body for mark in MARKED_PREFIXES)


class TextWriter:
    """Turns values into their stored form for one writer; ``new`` collects the
    ``(hash, zipped, body)`` rows not yet written, for the caller's next transaction."""

    def __init__(self, text_min: int | None = None) -> None:
        # Read when made: bench/big_texts.py sets TEXT_MIN past any text for the inline layout.
        self.text_min = TEXT_MIN if text_min is None else text_min
        self._written: set[str] = set()
        self.new: list[tuple[str, int, str | bytes]] = []

    def text(self, text: str, *, zipped: bool = False) -> str:
        digest = content_hash(text)
        if digest not in self._written:
            self._written.add(digest)
            body: str | bytes = text
            if zipped:
                body = zlib.compress(text.encode("utf-8", "surrogatepass"))
            self.new.append((digest, int(zipped), body))
        return digest

    def encode(self, value: Any) -> Any:
        """``value`` with every large string a reference and marker-like dicts escaped."""
        if isinstance(value, str):
            return {REF: self.text(value)} if len(value) >= self.text_min else value
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, dict):
            out = {k: self.encode(v) for k, v in value.items()}
            return {LIT: out} if len(out) == 1 and next(iter(out)) in MARKS else out
        return value

    def may_encode(self, text: str) -> bool:
        """Whether ``encode`` may change the value whose compact JSON is ``text``: only when
        it holds a string of ``text_min`` characters or more, or a dict whose first key starts
        with ``$``. False: ``encode`` would return an equal value, so it need not walk it.
        Conservative (a long run of numbers, a long key also say True)."""
        if '{"$' in text:
            return True
        if len(text) < self.text_min:
            return False
        # A JSON string is at least as long as the text it holds; with its escaped quotes and
        # backslashes blanked (same length), it is one piece of the text split at quotes.
        flat = text.replace("\\\\", "__").replace('\\"', "__")
        return max(map(len, flat.split('"'))) >= self.text_min

    def body(self, body: str) -> str:
        """A JSON text in its stored form (unchanged when it has nothing to refer to)."""
        if len(body) < self.text_min and not marked(body):
            return body
        return dumps(self.encode(json.loads(body)))

    def value(self, value: Any) -> str:
        """``dumps(value)`` in its stored form."""
        return self.body(dumps(value))

    def event(self, kind: str, body: str | None) -> str | None:
        """An event row's body in its stored form."""
        return body if body is None or kind in PIECE_KINDS else self.body(body)

    def run(self, data: dict[str, Any], encoded: frozenset[str] = frozenset()) -> str:
        """A run's header or record (``RUN_INLINE`` fields left as they are, and ``encoded``
        ones: already in their stored form)."""
        keep = RUN_INLINE | encoded
        return dumps({k: v if k in keep else self.encode(v) for k, v in data.items()})

    def raw_response(self, value: Any) -> str:
        """A raw response: its large strings referenced, and the rest a compressed text of its
        own when it is still ``ZIP_MIN`` bytes or more."""
        body = self.value(value)
        if len(body) < ZIP_MIN:
            return body
        return dumps({JSON_REF: self.text(body, zipped=True)})

    def take(self) -> list[tuple[str, int, str | bytes]]:
        new, self.new = self.new, []
        return new

    def forget(self) -> None:
        """A transaction rolled back: nothing is known to be written."""
        self._written.clear()
        self.new = []


def write(conn: sqlite3.Connection, rows: list[tuple[str, int, str | bytes]]) -> None:
    if rows:
        conn.executemany("INSERT OR IGNORE INTO texts (hash, zipped, body) VALUES (?, ?, ?)", rows)


class TextReader:
    """Resolves references for one load: each text is read once and kept as one string."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._texts: dict[str, str] = {}

    def text(self, digest: str) -> str:
        found = self._texts.get(digest)
        if found is None:
            found = self._texts[digest] = self._read(digest)
        return found

    def _read(self, digest: str) -> str:
        row = self.conn.execute(
            "SELECT zipped, body FROM texts WHERE hash = ?", (digest,)
        ).fetchone()
        if row is None:
            raise KeyError(f"text {digest} is missing")
        zipped, body = row
        del row
        if not zipped:
            return str(body)
        try:
            raw = zlib.decompress(body)
        except (zlib.error, TypeError) as exc:  # a damaged row: one line, as for bad JSON
            raise ValueError(f"text {digest} cannot be decompressed: {exc}") from None
        del body  # the compressed bytes go before the text is made
        return raw.decode("utf-8", "surrogatepass")

    def decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if isinstance(value, dict):
            if len(value) == 1:
                key, inner = next(iter(value.items()))
                if key == REF:
                    return self.text(inner)
                if key == JSON_REF:  # a raw response's JSON: parsed once, not kept as text
                    return self.loads(self._read(inner))
                if key == LIT:
                    return {k: self.decode(v) for k, v in inner.items()}
            return {k: self.decode(v) for k, v in value.items()}
        return value

    def loads(self, body: str) -> Any:
        """A stored JSON text parsed, its references resolved; a large one a piece at a time
        (``json_pieces``: a worker thread reading it does not hold the GIL throughout)."""
        return self.decoded(json_pieces.loads(body), body)

    def decoded(self, value: Any, body: str) -> Any:
        """``value``, parsed from ``body``, with its references resolved."""
        return self.decode(value) if marked(body) else value

    def optional(self, digest: str | None, inline: Any) -> Any:
        """A column pair: the text ``digest`` names, else the inline value."""
        return inline if digest is None else self.text(digest)
