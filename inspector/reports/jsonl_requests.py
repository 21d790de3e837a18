"""A JSONL export's requests written as their difference from a request written before them.

Every step re-sends the whole history, and a run's events carry each step's request up to three
times (``step_started``, ``step_finished``, the record in ``run_finished``), normalised and raw:
written whole, a 1,000-step tool-call turn exported to 389 MB. The rule (docs/compare-export.md):

- the first request of the file is written whole;
- any later one writes ``"messages_from": {"step": K, "keep": n, "added": [...]}`` in place of
  its ``messages``: the first ``n`` messages of step ``K``'s request as written earlier in the
  file, then ``added``. ``K`` is the same step when its request was written before (a
  ``step_finished`` repeating its ``step_started``), else the step whose request was written
  last (the one this step continues);
- a raw request body (``step.raw.request``) does the same with its wire message list, at
  ``messages`` or ``body.messages``, against step ``K``'s raw body.

Each line stays one JSON object; a reader keeps, per step, the last messages it read
(``RequestExpander``) and so rebuilds every request reading the file line by line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from inspector.core.messages import Message
from inspector.core.raw_body import messages_container, messages_path, plain, raw_messages
from inspector.core.records import RawExchange, StepRequest
from inspector.core.shared_list import SharedPrefix, common_prefix
from inspector.reports.json_pieces import Piece, PieceCache, array, obj, piece, with_items
from inspector.reports.model_json import model_json, model_value
from inspector.reports.stream_secrets import with_raw_streams_redacted

FROM = "messages_from"


def _with_messages(request: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy of a raw ``request`` whose messages list is replaced by ``value``."""
    if messages_path(request) == ("messages",):
        return {k: v for k, v in request.items() if k != "messages"} | {FROM: value}
    body = {k: v for k, v in request["body"].items() if k != "messages"} | {FROM: value}
    return {**request, "body": body}


class _Chain:
    """The messages written last for each step, and which step was written last."""

    def __init__(self) -> None:
        self.by_step: dict[int, Sequence[Any]] = {}
        self.last: int | None = None

    def delta(self, index: int, messages: Sequence[Any]) -> tuple[int | None, int]:
        """The step ``messages`` continue (None: the first written) and how many of its
        messages they keep; then they are the ones written last, for ``index``."""
        by_step = self.by_step
        base = index if index in by_step else self.last
        if base is None:
            keep = 0
        else:
            previous = by_step[base]
            keep = len(messages) if previous is messages else common_prefix(previous, messages)
        by_step[index] = messages
        self.last = index
        return base, keep


# The fields of ``StepRequest`` besides its messages. A request's text without its messages is
# kept by the identity of their values (the requests of a loaded run share their frame's
# values, with a list of their own holding the same tools); another shape is written each time.
_FIELDS = ("system", "tools", "tool_choice", "response_format")
_BY_IDENTITY = tuple(StepRequest.model_fields) == ("system", "messages", *_FIELDS[1:])
_NO_MESSAGES = frozenset({"messages"})


class RequestDeltas:
    """Writes requests as deltas, in file order (one instance per exported file). Each request
    comes as a ``Piece`` (its text, the value made when asked): a message, a request's fields
    and a raw body are written once however many lines repeat them."""

    def __init__(self) -> None:
        self._messages = _Chain()
        self._raw = _Chain()
        self._pieces: PieceCache[Piece] = PieceCache()
        # ids of a request's field values (held, so the ids stay theirs) -> its fields' piece
        self._by_values: dict[tuple[int, ...], tuple[tuple[Any, ...], Piece]] = {}
        # A request (or raw exchange) written again as the same delta (a step_finished and the
        # record repeating their step_started): the piece written last time.
        self._again: PieceCache[tuple[tuple[int | None, int], Piece]] = PieceCache()
        # When a list: the text of every piece written from a value (a message, a request's
        # fields, a raw body) is added to it as it is made (the JSONL export searches those for
        # secrets, not the lines repeating them: ``json_pieces.written``).
        self.fresh: list[str] | None = None

    def request(self, index: int, request: StepRequest) -> dict[str, Any]:
        value: dict[str, Any] = self.request_piece(index, request).value
        return value

    def request_piece(self, index: int, request: StepRequest) -> Piece:
        messages = request.messages
        delta = self._messages.delta(index, messages)
        base, keep = delta
        again = self._again.find(request)
        if again is not None and again[0] == delta and keep == len(messages):
            return again[1]
        fields = self._fields(request)
        if base is None:
            out = with_items(fields, ("messages", self._messages_piece(messages)))
        else:
            added = _NO_ADDED if keep == len(messages) else self._messages_piece(messages[keep:])
            moved = Piece(
                f'{{"step":{base},"keep":{keep},"added":{added.text}}}',
                lambda: {"step": base, "keep": keep, "added": added.make()},
            )
            out = with_items(fields, (FROM, moved))
        self._again.put(request, (delta, out))
        return out

    def _messages_piece(self, messages: Sequence[Message]) -> Piece:
        find = self._pieces.find
        return array([find(m) or self.message_piece(m) for m in messages])

    def raw(self, index: int, raw: RawExchange | None) -> dict[str, Any] | None:
        value: dict[str, Any] | None = self.raw_piece(index, raw).value
        return value

    def raw_piece(self, index: int, raw: RawExchange | None) -> Piece:
        if raw is None:
            return _NULL
        request = raw.request
        messages = raw_messages(request)
        delta: tuple[int | None, int] | None = None
        if messages is not None:
            delta = self._raw.delta(index, messages)
            base, keep = delta
            again = self._again.find(raw)
            if again is not None and again[0] == delta and keep == len(messages):
                return again[1]
            if base is not None:
                request = _with_messages(
                    request, {"step": base, "keep": keep, "added": messages[keep:]}
                )
            else:  # written whole: a loaded run's shared list as the list it stands for
                request = plain(request)
        # The response comes back with the step in the record: written once.
        response = raw.response
        written = self._pieces.find(response)
        if written is None:
            written = self._made(piece(with_raw_streams_redacted(response)))
            self._pieces.put(response, written)
        out = obj({"request": self._made(piece(request)), "response": written})
        if delta is not None:
            self._again.put(raw, (delta, out))
        return out

    def _fields(self, request: StepRequest) -> Piece:
        """A request without its messages: once per distinct set of values (every step of a
        turn sends the same system prompt and tools)."""
        if not _BY_IDENTITY or type(request) is not StepRequest:
            return self._made(_model_piece(request, _NO_MESSAGES))
        values = request.__dict__
        held = (values["system"], values["tool_choice"], values["response_format"])
        held += tuple(values["tools"])
        ids = tuple(map(id, held))
        hit = self._by_values.get(ids)
        if hit is not None:  # the same objects (held by the entry): the same text
            return hit[1]
        made = self._made(_model_piece(request, _NO_MESSAGES))
        self._by_values[ids] = (held, made)
        return made

    def message_piece(self, message: Message) -> Piece:
        """A message's dump, once per message object."""
        found = self._pieces.find(message)
        if found is None:
            found = self._pieces.put(message, self._made(_model_piece(message)))
        return found

    def _made(self, made: Piece) -> Piece:
        if self.fresh is not None:
            self.fresh.append(made.text)
        return made


def _model_piece(model: BaseModel, exclude: frozenset[str] = frozenset()) -> Piece:
    return Piece(model_json(model, exclude), lambda: model_value(model, exclude))


_NULL = piece(None)
_NO_ADDED = Piece("[]", list)


class RequestExpander:
    """Reads requests written by ``RequestDeltas`` back, in file order. Each step's messages are
    views of one growing list where they extend each other, as the store loads them."""

    def __init__(self) -> None:
        self._messages = _Views()
        self._raw = _Views()

    def request(self, index: int, data: dict[str, Any]) -> tuple[dict[str, Any], Sequence[Message]]:
        """``data`` without its messages (to validate) and the messages to put back."""
        data = dict(data)
        if FROM in data:
            delta = data.pop(FROM)
            added = [Message.model_validate(m) for m in delta["added"]]
            messages = self._messages.extend(index, delta, added)
        else:
            messages = self._messages.start(
                index, [Message.model_validate(m) for m in data.pop("messages")]
            )
        data["messages"] = []
        return data, messages

    def raw(self, index: int, raw: dict[str, Any] | None) -> dict[str, Any] | None:
        if raw is None or not isinstance(raw.get("request"), dict):
            return raw
        request: dict[str, Any] = raw["request"]
        body = request.get("body")
        holder = body if isinstance(body, dict) and FROM in body else request
        if FROM in holder:
            delta = holder[FROM]
            messages = self._raw.extend(index, delta, list(delta["added"]))
            filled = {k: v for k, v in holder.items() if k != FROM} | {"messages": messages}
            request = filled if holder is request else {**request, "body": filled}
        else:
            container = messages_container(request)
            if container is not None:
                self._raw.start(index, list(container["messages"]))
        return {**raw, "request": request}


class _Views:
    def __init__(self) -> None:
        self.by_step: dict[int, SharedPrefix[Any]] = {}

    def start(self, index: int, items: list[Any]) -> SharedPrefix[Any]:
        view = self.by_step[index] = SharedPrefix(items, len(items))
        return view

    def extend(self, index: int, delta: dict[str, Any], added: list[Any]) -> SharedPrefix[Any]:
        base = self.by_step.get(int(delta["step"]))
        if base is None:
            raise ValueError(f"step {index} continues step {delta['step']}, not written before")
        keep = int(delta["keep"])
        items = base.items
        if not (0 <= keep <= len(base)):
            raise ValueError(f"step {index} keeps {keep} of step {delta['step']}'s messages")
        if keep == len(base) == len(items):  # the usual case: extends the longest list so far
            items.extend(added)
        else:
            items = [*base[:keep], *added]
        return self.start(index, items)
