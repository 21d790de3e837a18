"""A secret split across a stream's deltas is redacted in every fragment that holds a piece of
it: the export's delta lines and a raw response's stream events."""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest

from inspector.core.events import (
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
)
from inspector.core.messages import user
from inspector.core.records import RawExchange, Step, StepRequest
from inspector.reports import redact as redact_module
from inspector.reports.jsonl_requests import RequestDeltas
from inspector.reports.redact import json_value_spans, redact, redact_text
from inspector.reports.stream_secrets import (
    Span,
    redacted_fragments,
    secret_spans,
    with_raw_streams_redacted,
    with_streams_redacted,
)

SECRET = "hunter2hunter2XYZ"


def _replaced(text: str, spans: list[Span]) -> str:
    out, at = [], 0
    for span in spans:
        out += [text[at : span.start], span.replacement]
        at = span.end
    return "".join([*out, text[at:]])


def _cut(text: str, rng: random.Random) -> list[str]:
    cuts = sorted(rng.sample(range(len(text) + 1), rng.randint(0, min(6, len(text)))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def test_fragments_joined_are_the_text_with_each_span_replaced() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice("ab c") for _ in range(rng.randint(0, 30)))
        pairs = min(rng.randint(0, 2), (len(text) + 1) // 2)
        points = sorted(rng.sample(range(len(text) + 1), 2 * pairs))
        spans = [
            Span(a, b, rng.choice(["[redacted]", '"[redacted]"']))
            for a, b in zip(points[::2], points[1::2], strict=True)
            if b > a
        ]
        fragments = _cut(text, rng)
        redacted = redacted_fragments(fragments, spans)
        assert len(redacted) == len(fragments)
        assert "".join(redacted) == _replaced(text, spans)


def test_a_fragment_outside_every_span_is_unchanged() -> None:
    fragments = ["keep ", "this", " and ", "SECRET", " ok"]
    spans = [Span(14, 20, "[redacted]")]
    assert redacted_fragments(fragments, spans) == ["keep ", "this", " and ", "[redacted]", " ok"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f'{{"q": "x", "api_key": "{SECRET}"}}', '{"q": "x", "api_key": "[redacted]"}'),
        (f'{{"password": {{"a": "{SECRET}"}}, "n": 1}}', '{"password": "[redacted]", "n": 1}'),
        (f'{{"api_key": "{SECRET}', '{"api_key": "[redacted]"'),  # a stream cut short
        ('{"api_key": null, "q": "x"}', '{"api_key": null, "q": "x"}'),
        ("Authorization: Bearer abcdefgh12345678 done", "Authorization: [redacted] done"),
        ("use sk-abcdefghijklmnopqrstu now", "use [redacted] now"),
        ("password=hunter2 ok", "password=[redacted]"),  # a value may be two words
        ("nothing secret here", "nothing secret here"),
    ],
)
def test_secret_spans_follow_the_export_rules(text: str, expected: str) -> None:
    assert _replaced(text, secret_spans(text)) == expected


def test_a_string_holding_json_loses_its_credential_fields() -> None:
    """A tool call's arguments as the wire sends them (a JSON text in a string), as the
    message's own arguments (an object) are redacted."""
    arguments = json.dumps({"q": "x", "api_key": SECRET})
    assert redact({"arguments": arguments}) == {"arguments": '{"q": "x", "api_key": "[redacted]"}'}
    assert redact({"arguments": '{"api_key": ""}'}) == {"arguments": '{"api_key": ""}'}


class _Timed:
    def __init__(self, t_ms: float, event: object) -> None:
        self.t_ms = t_ms
        self.event = event


def _step_events(index: int, arguments: list[str], text: list[str]) -> list[_Timed]:
    request = StepRequest(system="", messages=[user("hi")])
    step = Step(index=index, attempt=1, status="success", request=request)
    events: list[object] = [StepStarted(run_id="r", index=index, attempt=1, request=step.request)]
    events += [
        ToolCallDelta(run_id="r", index=index, call_index=0, arguments_delta=part)
        for part in arguments
    ]
    events += [TextDelta(run_id="r", index=index, text=part) for part in text]
    events.append(StepFinished(run_id="r", step=step))
    return [_Timed(float(n), event) for n, event in enumerate(events)]


def test_a_split_argument_is_redacted_in_every_delta_of_its_stream() -> None:
    arguments = ['{"api_', 'key": "hun', "ter2hun", 'ter2XYZ"', "}"]
    text = ["Authorization: Bea", "rer abcdefgh", "12345678 done"]
    events = _step_events(1, arguments, text) + _step_events(2, ['{"q": ', '"x"}'], ["hi"])
    out = list(with_streams_redacted(events))
    assert [o.t_ms for o in out] == [e.t_ms for e in events]  # the same order
    calls = [o.event.arguments_delta for o in out if isinstance(o.event, ToolCallDelta)]
    assert "".join(calls[:5]) == '{"api_key": "[redacted]"}'
    assert not any(part in "".join(calls) for part in ("hun", "ter2", "XYZ"))
    said = "".join(o.event.text for o in out if isinstance(o.event, TextDelta))
    assert said == "Authorization: [redacted] donehi"
    # A stream without a secret is handed on as it came (its stored JSON kept).
    assert [o is e for o, e in zip(out, events, strict=True)][-6:] == [True] * 6


def test_a_url_password_split_across_text_deltas_is_redacted_in_each() -> None:
    parts = ["retry via https://bo", "b:hunt", "er2pass@proxy.example/ ok"]
    spans = secret_spans("".join(parts))
    fragments = redacted_fragments(parts, spans)
    assert "".join(fragments) == "retry via https://bob:[redacted]@proxy.example/ ok"
    assert not any(piece in "".join(fragments) for piece in ("hunt", "er2pass"))


def test_deltas_of_a_step_that_never_finished_are_still_redacted() -> None:
    events = _step_events(1, ['{"password": "pw', '123456"}'], [])[:-1]
    out = list(with_streams_redacted(events))
    calls = "".join(o.event.arguments_delta for o in out if isinstance(o.event, ToolCallDelta))
    assert calls == '{"password": "[redacted]"}'


def _openai_chunk(arguments: str) -> dict[str, object]:
    call = {"index": 0, "function": {"arguments": arguments}}
    return {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}


def test_a_raw_stream_split_secret_is_redacted_in_its_events() -> None:
    parts = ['{"api_', 'key": "hun', 'ter2hunter2XYZ"}']
    response = {"status": 200, "events": [_openai_chunk(p) for p in parts] + ["[DONE]"]}
    out = with_raw_streams_redacted(response)
    calls = [e["choices"][0]["delta"]["tool_calls"][0] for e in out["events"][:3]]
    args = [call["function"]["arguments"] for call in calls]
    assert "".join(args) == '{"api_key": "[redacted]"}'
    assert "hun" not in json.dumps(out) and response["events"][1] == _openai_chunk(parts[1])
    anthropic = {
        "status": 200,
        "events": [
            {"type": "content_block_delta", "index": 1, "delta": {"partial_json": p}}
            for p in ['{"client_secret', '": "abc', 'def12345"}']
        ],
    }
    out = with_raw_streams_redacted(anthropic)
    joined = "".join(e["delta"]["partial_json"] for e in out["events"])
    assert joined == '{"client_secret": "[redacted]"}'


def test_a_raw_stream_without_a_secret_is_the_same_object() -> None:
    response = {"status": 200, "events": [_openai_chunk('{"q": '), _openai_chunk('"x"}')]}
    assert with_raw_streams_redacted(response) is response
    assert with_raw_streams_redacted({"status": 200, "body": {"a": 1}}) is not None


def test_the_export_writes_a_raw_stream_redacted() -> None:
    parts = ['{"pass', 'word": "s3cr', 'et99"}']
    raw = RawExchange(request={"url": "u"}, response={"events": [_openai_chunk(p) for p in parts]})
    written = RequestDeltas().raw_piece(1, raw).written()
    assert "s3cr" not in written and "et99" not in written
    assert written.count("[redacted]") == 1


def test_prose_quoting_a_credential_name_loses_one_word_not_the_rest() -> None:
    text = 'the "password": field is required, see docs'
    expected = 'the "password": "[redacted]" is required, see docs'
    assert _replaced(text, secret_spans(text)) == expected


class _TriedAt:
    """``redact._JSON_KEY`` recording where it is tried."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.starts: list[int] = []

    def match(self, text: str, pos: int) -> re.Match[str] | None:
        self.starts.append(pos)
        return self.pattern.match(text, pos)


def test_json_keys_are_sought_only_at_quotes_no_backslash_escapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Tried at each escaped quote, the search scanned to the string's end from every one of
    # them: a tool call writing 144 kB of code with quotes in it took a minute to export.
    code = "password = 1\n" + 'print("hello")\n' * 50
    args = json.dumps({"content": code, "api_key": SECRET})
    tried = _TriedAt(redact_module._JSON_KEY)
    monkeypatch.setattr(redact_module, "_JSON_KEY", tried)
    spans = json_value_spans(args)
    assert [args[start:end] for start, end in spans] == [json.dumps(SECRET)]
    unescaped = [i for i, c in enumerate(args) if c == '"' and args[i - 1] != "\\"]
    assert tried.starts and set(tried.starts) <= set(unescaped)


def test_a_credential_value_nested_too_deep_to_decode_is_redacted_to_the_end() -> None:
    text = '{"note": "x", "password": ' + "[" * 5000 + json.dumps(SECRET)
    assert SECRET not in redact_text(text)
    assert SECRET not in "".join(redacted_fragments([text[:40], text[40:]], secret_spans(text)))


def _call_chunk(arguments: str, index: int | None) -> str:
    call: dict[str, object] = {"function": {"arguments": arguments}}
    if index is not None:
        call["index"] = index
    return json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})


def test_interleaved_tool_calls_of_a_raw_stream_are_redacted_each_in_its_own() -> None:
    # Joined across both calls, call 0's secret ran into call 1's arguments: the JSON string
    # ended at call 1's first quote and "defghijk" was written as recorded.
    parts = [('{"password": "abc', 0), ('{"q": "x"}', 1), ('defghijk"}', 0)]
    response = {"events": [_call_chunk(p, i) for p, i in parts] + ["[DONE]"]}
    out = with_raw_streams_redacted(response)["events"]
    args = [json.loads(e)["choices"][0]["delta"]["tool_calls"][0]["function"] for e in out[:3]]
    assert args[0]["arguments"] + args[2]["arguments"] == '{"password": "[redacted]"}'
    assert args[1]["arguments"] == '{"q": "x"}'


def test_interleaved_calls_splitting_a_credential_name_are_still_searched() -> None:
    # Joined by field name alone, call 1's arguments broke call 0's "password" in two
    # ('{"pass' + '{"q": "x"}' + 'word": ...'): nothing looked like a credential and the
    # whole value was written as recorded.
    parts = [('{"pass', 0), ('{"q": "x"}', 1), ('word": "abcdefghijk"}', 0)]
    for chunk in (_call_chunk, _wire_call_chunk):
        response = {"events": [chunk(p, i) for p, i in parts] + ["[DONE]"]}
        out = with_raw_streams_redacted(response)["events"]
        assert "abcdefghijk" not in "".join(out)
        args = [json.loads(e)["choices"][0]["delta"]["tool_calls"][0]["function"] for e in out[:3]]
        assert args[0]["arguments"] + args[2]["arguments"] == '{"password": "[redacted]"}'
        assert args[1]["arguments"] == '{"q": "x"}'


def _wire_call_chunk(arguments: str, index: int) -> str:
    """A chunk as OpenAI sends it: the call's ``index`` before its ``function``."""
    call = {"index": index, "function": {"arguments": arguments}}
    return json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})


def test_a_raw_call_whose_later_chunks_omit_its_index_is_still_one_stream() -> None:
    parts = [('{"password": "abc', 0), ('defghijk"}', None)]
    response = {"events": [_call_chunk(p, i) for p, i in parts]}
    out = with_raw_streams_redacted(response)["events"]
    assert "defghijk" not in "".join(out) and "abc" not in "".join(out)


def _named(name: str, **data: object) -> dict[str, str]:
    """A named SSE event as ``openai_stream`` records it: its name and its data's text."""
    return {"event": name, "data": json.dumps({"type": name, **data})}


def test_named_events_deltas_are_redacted_each_item_in_its_own_stream() -> None:
    # Responses-API-style events: item fc_1's arguments cut around "password" and its value,
    # interleaved with item fc_2's arguments and an answer's text ("pass" + " w" + "word"
    # joined by field name alone hold no credential name).
    args = "response.function_call_arguments.delta"
    parts = [
        (args, "fc_1", 1, '{"pass'),
        ("response.output_text.delta", "msg_0", 0, " w"),
        (args, "fc_2", 2, '{"q": "kept'),
        (args, "fc_1", 1, 'word": "abc'),
        (args, "fc_2", 2, ' as is"}'),
        (args, "fc_1", 1, 'defghijk"}'),
    ]
    events = [_named(n, item_id=i, output_index=o, delta=d) for n, i, o, d in parts]
    done = _named("response.completed", response={"id": "r1"})
    response = {"status": 200, "events": [*events, done, "[DONE]"]}
    out = with_raw_streams_redacted(response)["events"]
    assert [e["event"] for e in out[:7]] == [e["event"] for e in response["events"][:7]]
    deltas = [json.loads(e["data"]) for e in out[:6]]
    item = {d["item_id"]: "" for d in deltas}
    for d in deltas:
        item[d["item_id"]] += d["delta"]
    assert item == {
        "fc_1": '{"password": "[redacted]"}',
        "fc_2": '{"q": "kept as is"}',
        "msg_0": " w",
    }
    assert "abc" not in json.dumps(out) and "defghijk" not in json.dumps(out)
    assert out[6] is response["events"][6] and out[7] == "[DONE]"  # untouched: as recorded
    assert response["events"][3]["data"].endswith('"delta": "word\\": \\"abc"}')  # a copy


def test_named_events_without_a_secret_are_the_same_object() -> None:
    args = "response.function_call_arguments.delta"
    events = [_named(args, item_id="fc_1", output_index=0, delta=d) for d in ('{"q": ', '"x"}')]
    response = {"status": 200, "events": [*events, {"event": "error", "data": "not json"}]}
    assert with_raw_streams_redacted(response) is response
