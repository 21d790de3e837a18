"""Events kept as JSON are validated by their kind's own model where the body starts with its
kind, through the ``Event`` union otherwise: the same events either way, and a damaged body
still fails."""

from __future__ import annotations

import pytest

from inspector.core.events import (
    EVENT_ADAPTER,
    AttemptCleared,
    TextDelta,
    ToolCallDelta,
    ToolExecuted,
)
from inspector.core.records import ToolResult
from inspector.store import event_bodies
from inspector.store.event_bodies import as_written, validated_events

RUN = "run-é"
EVENTS = [
    TextDelta(run_id=RUN, index=1, text='é \u2028 "q"'),
    ToolCallDelta(run_id=RUN, index=1, call_index=0, id="c", arguments_delta='{"q":'),
    ToolExecuted(run_id=RUN, index=1, result=ToolResult(tool_call_id="c", name="n", content="x")),
    AttemptCleared(run_id=RUN, index=1, attempt=1),
]


def _body(event: object) -> str:
    return event.model_dump_json(exclude={"run_id"})  # type: ignore[attr-defined]


@pytest.mark.parametrize("batch", [1, 2, 500])
def test_validated_by_kind_are_the_events_the_union_gives(batch: int) -> None:
    kinds = [e.kind for e in EVENTS] * 3
    bodies: list[str | None] = [_body(e) for e in EVENTS] * 3
    kinds += ["step_started", "text_delta"]
    bodies += [None, '{"$step":5}']
    out = validated_events(kinds, bodies, RUN, batch)
    assert out[:-2] == EVENTS * 3 and out[-2:] == [None, None]
    union = [EVENT_ADAPTER.validate_json(b[:-1] + f',"run_id":"{RUN}"}}') for b in bodies[:-2]]
    assert out[:-2] == union
    assert all(as_written(k, b) for k, b in zip(kinds[:-2], bodies[:-2], strict=True))


def test_a_body_not_starting_with_its_kind_takes_the_union(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = '{"index":1,"kind":"text_delta","text":"t"}'  # its kind, but not first
    assert not as_written("text_delta", body)
    used: list[object] = []
    many, one = event_bodies._ADAPTERS[None]

    class Counting:
        def validate_json(self, text: str) -> object:
            used.append(text)
            return many.validate_json(text)

    monkeypatch.setitem(event_bodies._ADAPTERS, None, (Counting(), one))
    assert validated_events(["text_delta"], [body], RUN, 500) == [
        TextDelta(run_id=RUN, index=1, text="t")
    ]
    assert len(used) == 1


def test_a_damaged_body_fails_with_its_own_error() -> None:
    good = _body(EVENTS[1])
    bad = '{"kind":"tool_call_delta","index":"two","call_index":0}'
    with pytest.raises(ValueError, match="index"):
        validated_events(["tool_call_delta"] * 3, [good, bad, good], RUN, 500)
