"""The events a run keeps as JSON (a tool call's delta, a tool's result...) validated straight
from their stored text, ``batch`` at a time.

A body the recorder wrote whole starts with its own kind (``{"kind":"tool_call_delta",``):
those are validated by their kind's model, a list of one kind per call, instead of through the
``Event`` union (half the time for a long run's 40,000 deltas and results: the union reads each
body's kind again to pick the model the body already names). Any other body takes the union.
A damaged body fails the read as before: a batch that does not validate is validated again one
body at a time, so that the error is that body's.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from pydantic import BaseModel, TypeAdapter

from inspector.core.events import EVENT_ADAPTER, Event
from inspector.store.recorder import STEP_REF
from inspector.store.texts import marked

_MODELS: dict[str, type[BaseModel]] = {
    cls.model_fields["kind"].default: cls for cls in get_args(get_args(Event)[0])
}
STARTS = {kind: f'{{"kind":"{kind}",' for kind in _MODELS}  # a body of its kind starts so
_EVENTS: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
# (a list of them, one of them) per kind; the union for a body not starting with its kind
_ADAPTERS: dict[str | None, tuple[TypeAdapter[Any], TypeAdapter[Any]]] = {
    None: (_EVENTS, EVENT_ADAPTER),
    **{kind: (TypeAdapter(list[cls]), TypeAdapter(cls)) for kind, cls in _MODELS.items()},  # type: ignore[valid-type]
}


def as_written(kind: str, body: str | None) -> bool:
    """Whether ``body`` is the event's JSON as the recorder wrote it: inline, whole, of its
    kind (not a reference to its step, nor holding references to large texts)."""
    start = STARTS.get(kind)
    return (
        body is not None
        and start is not None
        and body.startswith(start)
        and body.endswith("}")
        and not marked(body)
    )


def validated_events(
    kinds: list[str], bodies: list[str | None], run_id: str, batch: int
) -> list[Event | None]:
    """Each body stored whole as JSON validated (``kinds``: the rows' kinds); ``None`` for the
    others (rebuilt from the steps, references to a step's text, large texts to resolve
    first)."""
    out: list[Event | None] = [None] * len(bodies)
    tail = f',"run_id":{json.dumps(run_id)}}}'
    by_kind: dict[str | None, list[tuple[int, str]]] = {}
    for n, (kind, body) in enumerate(zip(kinds, bodies, strict=True)):
        if body is None or not body.endswith("}") or body.startswith(STEP_REF) or marked(body):
            continue
        start = STARTS.get(kind)
        by_kind.setdefault(kind if start and body.startswith(start) else None, []).append((n, body))
    for of_kind, plain in by_kind.items():
        many, one = _ADAPTERS[of_kind]
        for at in range(0, len(plain), batch):
            chunk = plain[at : at + batch]
            try:
                events = many.validate_json("[" + ",".join([b[:-1] + tail for _, b in chunk]) + "]")
            except ValueError:  # one by one, so that the error is the one body's
                events = [one.validate_json(b[:-1] + tail) for _, b in chunk]
            for (n, _), event in zip(chunk, events, strict=True):
                out[n] = event
    return out
