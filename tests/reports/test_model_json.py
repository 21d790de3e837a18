"""``model_json`` writes what ``dumps(model.model_dump(mode="json", exclude=...))`` writes, for
every code point, floats of every magnitude (in float fields and in ``Any`` values), inf and
nan, big integers; it takes pydantic's encoder where that is the same text and the other way
where it might not be (both ways shown equal)."""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import pytest
from pydantic import BaseModel, model_serializer

from inspector.core.compact_json import dumps
from inspector.core.messages import Message, ToolCall
from inspector.core.policy import Policy
from inspector.core.records import Forced, Step, StepRequest, StepResponse, ToolResult, Verdict
from inspector.reports import model_json as module
from inspector.reports.model_json import _float_tail, model_json, model_value

EVERY = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
TEXTS = ["".join(EVERY[i : i + 4096]) for i in range(0, len(EVERY), 4096)]
FLOATS = [
    0.0,
    -0.0,
    0.293,
    1.5,
    1e-4,
    9.999e-5,
    1e-5,
    1.5e-7,
    5e-324,
    1e15,
    9999999999999998.0,
    1e16,
    1.2345678901234568e17,
    1.7976931348623157e308,
    math.inf,
    -math.inf,
    math.nan,
]
NOT_FIELDS = frozenset({"request", "raw"})


def _random_floats(n: int) -> list[float]:
    rng = random.Random(18)
    out: list[float] = []
    while len(out) < n:
        value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(value):
            out.append(value)
    return out + [rng.uniform(-1e6, 1e6) for _ in range(n)]


def _step(
    text: str = "ok", latency: float | None = 0.293, arguments: Any = None, **more: Any
) -> Step:
    call = ToolCall(id="c1", name="lookup", arguments=arguments or {"q": text})
    return Step(
        index=1,
        attempt=1,
        status="success",
        request=StepRequest(system="s", messages=[]),
        response=StepResponse(text=text, tool_calls=[call], reasoning=text[::-1]),
        tool_results=[ToolResult(tool_call_id="c1", name="lookup", content=text, error=text)],
        verdicts=[Verdict(validator="v", ok=False, status="fail", reason=text, feedback=text)],
        feedback=[Message(role="user", content=text)],
        forced=Forced(tool_choice={"name": text}, instruction_appended=True),
        latency_ms=latency,
        ttft_ms=latency,
        error=text,
        **more,
    )


def _general(model: BaseModel, exclude: frozenset[str] = frozenset()) -> str:
    return dumps(model.model_dump(mode="json", exclude=set(exclude)))


class _Spy:
    """Counts the general way's calls (``model_value``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        monkeypatch.setattr(module, "model_value", self)

    def __call__(self, model: BaseModel, exclude: frozenset[str] = frozenset()) -> Any:
        self.calls += 1
        return model_value(model, exclude)


@pytest.mark.parametrize("text", TEXTS[:3] + TEXTS[-3:] + ['"\\/\b\f\n\r\t\x00\x1f\x7f\u2028é'])
def test_every_code_point_is_written_as_json_dumps_writes_it(text: str) -> None:
    step = _step(text)
    assert model_json(step, NOT_FIELDS) == _general(step, NOT_FIELDS)
    message = Message(role="tool", content=text, tool_call_id=text[:3], name=text[-3:])
    assert model_json(message) == _general(message)


def test_all_code_points_through_a_message() -> None:
    for text in TEXTS:
        message = Message(role="user", content=text)
        assert model_json(message) == _general(message)


@pytest.mark.parametrize("value", FLOATS)
def test_floats_in_float_fields_and_in_any_values(value: float) -> None:
    for step in (
        _step(latency=value),
        _step(arguments={"x": value, "xs": [value, {"y": value}]}),
        _step(latency=value, arguments={"x": value}, captured="printed"),
    ):
        assert model_json(step, NOT_FIELDS) == _general(step, NOT_FIELDS)
        assert model_json(step, frozenset()) == _general(step)


def test_random_floats_of_every_magnitude() -> None:
    values = _random_floats(3000)
    for at in range(0, len(values), 50):
        chunk = values[at : at + 50]
        step = _step(latency=chunk[0], arguments={"x": chunk})
        assert model_json(step, NOT_FIELDS) == _general(step, NOT_FIELDS)
        message = Message(
            role="assistant", tool_calls=(ToolCall(id="c", name="n", arguments={"v": chunk}),)
        )
        assert model_json(message) == _general(message)


def test_big_integers_and_other_any_values() -> None:
    arguments: dict[str, Any] = {
        "big": 10**40,
        "neg": -(10**30),
        "t": True,
        "n": None,
        "nested": [[], {}],
    }
    step = _step(arguments=arguments)
    assert model_json(step, NOT_FIELDS) == _general(step, NOT_FIELDS)


def test_a_plain_step_takes_pydantic_s_way_and_a_float_argument_the_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spy = _Spy(monkeypatch)
    plain = _step("no floats here", latency=1e-7)  # the float fields are always json.dumps'
    assert model_json(plain, NOT_FIELDS) == _general(plain, NOT_FIELDS)
    assert spy.calls == 0
    with_float = _step(arguments={"lat": 51.5})
    assert model_json(with_float, NOT_FIELDS) == _general(with_float, NOT_FIELDS)
    assert spy.calls == 1
    looks_like_one = _step("at 12:1.5 sharp")  # a string that looks like a float: slow, same
    assert model_json(looks_like_one, NOT_FIELDS) == _general(looks_like_one, NOT_FIELDS)
    assert spy.calls == 2


def test_the_fields_from_the_first_float_field_on_are_dumped_the_other_way() -> None:
    assert _float_tail(Step) == frozenset({"latency_ms", "ttft_ms", "error", "raw", "captured"})
    assert _float_tail(Message) == frozenset() and _float_tail(StepRequest) == frozenset()


class _Inner(BaseModel):
    ratio: float = 0.5


class _Outer(BaseModel):
    name: str = "x"
    inner: _Inner = _Inner()


class _Serialized(BaseModel):
    value: float = 1e-5

    @model_serializer(mode="wrap")
    def _as_is(self, handler: Any) -> Any:
        return handler(self)


@pytest.mark.parametrize(
    "model",
    [
        _Outer(inner=_Inner(ratio=1e-5)),
        _Outer(inner=_Inner(ratio=math.inf)),
        _Serialized(),
        _Serialized(value=math.nan),
    ],
)
def test_models_holding_floats_out_of_reach_take_the_other_way(
    model: BaseModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy(monkeypatch)
    assert _float_tail(type(model)) is None
    assert model_json(model) == _general(model)
    assert spy.calls == 1


@pytest.mark.parametrize("value", [1e-5, 0.25, 7.0, 3600.0])
def test_a_model_with_float_fields_of_its_own(value: float) -> None:
    policy = Policy(validator_timeout_s=value, tool_timeout_s=value)
    assert _float_tail(Policy) is not None
    assert model_json(policy) == _general(policy)


def test_a_lone_surrogate_is_written_as_json_dumps_writes_it() -> None:
    message = Message(role="user", content="half \ud800 a pair")
    assert model_json(message) == _general(message)
