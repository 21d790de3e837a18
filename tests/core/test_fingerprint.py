"""Request fingerprints (what a replay calls "the same request") and the one-line difference."""

from __future__ import annotations

import json

import pytest

from inspector.core import fingerprint
from inspector.core.fingerprint import (
    Fingerprinter,
    ModelSettings,
    canonical_json,
    first_difference,
    model_settings,
    request_fingerprint,
)
from inspector.core.messages import Message, ToolCall, assistant, tool_result, user
from inspector.core.records import StepRequest, ToolSpec
from inspector.core.scenario import ModelConfig

SETTINGS = ModelSettings(name="demo", temperature=0.0)
LOOKUP = ToolSpec(
    name="lookup",
    description="Find a contact",
    parameters={"type": "object", "properties": {"name": {"type": "string"}}},
)


def request(*messages: Message, **fields: object) -> StepRequest:
    data: dict[str, object] = {
        "system": "You write SMS.",
        "messages": list(messages) or [user("Tell Sam.")],
        "tools": [LOOKUP],
        "tool_choice": "auto",
    }
    data.update(fields)
    return StepRequest.model_validate(data)


def test_public_surface() -> None:
    assert sorted(fingerprint.__all__) == [
        "Fingerprinter",
        "ModelSettings",
        "canonical_json",
        "first_difference",
        "model_settings",
        "request_fingerprint",
    ]


def test_canonical_json_sorts_keys_and_drops_white_space() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": "é", "c": None}]}) == (
        '{"a":[1,{"c":null,"d":"é"}],"b":1}'
    )


def test_equal_requests_have_equal_fingerprints_across_a_json_round_trip() -> None:
    call = ToolCall(id="c1", name="lookup", arguments={"name": "Sam", "limit": 2})
    original = request(user("hi"), assistant(None, (call,)), tool_result("c1", "Sam: 555"))
    reloaded = StepRequest.model_validate(json.loads(original.model_dump_json()))
    assert reloaded is not original
    assert request_fingerprint(original, SETTINGS) == request_fingerprint(reloaded, SETTINGS)
    digest = request_fingerprint(original, SETTINGS)
    assert len(digest) == 64 and int(digest, 16) >= 0


def test_a_fingerprinter_hashes_shared_messages_once_and_agrees_with_a_fresh_hash() -> None:
    fingerprints = Fingerprinter()
    history = [user("Tell Sam.")]
    for i in range(5):  # a growing turn: each request repeats the previous messages
        req = request(*history)
        assert fingerprints(req, SETTINGS) == request_fingerprint(req, SETTINGS)
        history.append(assistant(f"draft {i}"))
    # A new message object with the same content has the same digest; a changed one does not.
    copy = request(*[m.model_copy() for m in history])
    assert fingerprints(copy, SETTINGS) == request_fingerprint(request(*history), SETTINGS)
    changed = request(*history[:-1], assistant("draft X"))
    assert fingerprints(changed, SETTINGS) != fingerprints(request(*history), SETTINGS)


def test_argument_key_order_does_not_matter() -> None:
    a = ToolCall(id="c1", name="lookup", arguments={"name": "Sam", "limit": 2})
    b = ToolCall(id="c1", name="lookup", arguments={"limit": 2, "name": "Sam"})
    assert request_fingerprint(request(assistant(None, (a,))), SETTINGS) == request_fingerprint(
        request(assistant(None, (b,))), SETTINGS
    )


@pytest.mark.parametrize(
    "change",
    [
        {"system": "You write emails."},
        {"messages": [user("Tell Sam!")]},
        {"messages": [user("Tell Sam."), user("again")]},
        {"tools": []},
        {"tools": [LOOKUP.model_copy(update={"description": "Find"})]},
        {"tool_choice": "none"},
        {"tool_choice": {"type": "function", "name": "lookup"}},
        {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}},
    ],
)
def test_every_request_part_changes_the_fingerprint(change: dict[str, object]) -> None:
    base = request(user("Tell Sam."))
    changed = request(user("Tell Sam."), **change)
    assert request_fingerprint(base, SETTINGS) != request_fingerprint(changed, SETTINGS)


@pytest.mark.parametrize(
    "settings",
    [
        SETTINGS.model_copy(update={"name": "other"}),
        SETTINGS.model_copy(update={"temperature": 0.7}),
        SETTINGS.model_copy(update={"max_tokens": 100}),
        SETTINGS.model_copy(update={"params": {"top_p": "0.9"}}),
    ],
)
def test_every_model_setting_changes_the_fingerprint(settings: ModelSettings) -> None:
    base = request()
    assert request_fingerprint(base, SETTINGS) != request_fingerprint(base, settings)


def test_model_settings_keep_what_changes_answers_only() -> None:
    config = ModelConfig(
        name="gpt", temperature=0.2, max_tokens=50, params={"seed": "1"}, timeout_s=9.0
    )
    assert model_settings(config) == ModelSettings(
        name="gpt", temperature=0.2, max_tokens=50, params={"seed": "1"}
    )
    # Where and how the call is made does not change the answer.
    other_transport = config.model_copy(update={"base_url": "http://x", "stream": False})
    assert model_settings(other_transport) == model_settings(config)


# ---- first_difference ---------------------------------------------------------------------------


def test_identical() -> None:
    assert first_difference(request(), request()) == "identical"


def test_model_setting_difference_comes_first() -> None:
    hot = SETTINGS.model_copy(update={"temperature": 0.7})
    assert first_difference(request(), request(system="x"), SETTINGS, hot) == (
        "model.temperature differs: recorded 0.0, now 0.7"
    )


def test_system_prompt_difference_shows_where_it_starts() -> None:
    old = request(system="You write SMS.")
    new = request(system="You write SMS.\n\nTools are disabled now.")
    assert first_difference(old, new) == (
        "system prompt differs: recorded …'ite SMS.', now …'ite SMS.\\n\\nTools are disabled now.'"
    )


def test_first_differing_message_names_index_role_and_both_excerpts() -> None:
    old = request(user("Tell Sam."), assistant("**Hi**"), user("No markdown."))
    new = request(user("Tell Sam."), assistant("**Hi**"), user("Plain text only."))
    assert first_difference(old, new) == (
        "messages[2] (user) differs: recorded 'No markdown.', now 'Plain text only.'"
    )


def test_a_message_of_another_role() -> None:
    old = request(user("Tell Sam."), assistant("**Hi**"))
    new = request(user("Tell Sam."), user("Plain text only."))
    assert first_difference(old, new) == (
        "messages[1] differs: recorded assistant '**Hi**', now user 'Plain text only.'"
    )


def test_long_texts_are_cut_around_the_difference() -> None:
    head = "x" * 100
    old = request(user(head + "a" + "y" * 100))
    new = request(user(head + "b" + "y" * 100))
    line = first_difference(old, new)
    assert line.startswith("messages[0] (user) differs: recorded …'xxxxxxxxa")
    assert ", now …'xxxxxxxxb" in line
    assert len(line) < 200 and "\n" not in line


def test_missing_and_extra_messages() -> None:
    short = request(user("Tell Sam."))
    long = request(user("Tell Sam."), assistant("Hi"))
    assert first_difference(long, short) == (
        "the request has 1 messages, the recording 2: messages[1] missing (recorded assistant 'Hi')"
    )
    assert first_difference(short, long) == (
        "the request has 2 messages, the recording 1: messages[1] is new (assistant 'Hi')"
    )


def test_tool_calls_are_part_of_a_message() -> None:
    a = assistant(None, (ToolCall(id="c1", name="lookup", arguments={"name": "Sam"}),))
    b = assistant(None, (ToolCall(id="c1", name="lookup", arguments={"name": "Kim"}),))
    assert first_difference(request(a), request(b)) == (
        'messages[0] (assistant) differs: recorded …\'name": "Sam"})]\', now …\'name": "Kim"})]\''
    )


def test_same_text_but_another_call_id() -> None:
    a = tool_result("c1", "found")
    b = tool_result("c2", "found")
    line = first_difference(request(a), request(b))
    assert line.startswith("messages[0] (tool) differs: recorded ")
    assert "(result of c1) found" not in line  # the ids are compared as fields, in JSON
    assert "c1" in line and "c2" in line


def test_tools_tool_choice_and_response_format() -> None:
    assert first_difference(request(), request(tools=[])) == (
        "tools differ: recorded ['lookup'], now []"
    )
    changed = LOOKUP.model_copy(update={"description": "Look up"})
    assert first_difference(request(), request(tools=[changed])).startswith(
        "tool 'lookup' differs: recorded "
    )
    assert first_difference(request(), request(tool_choice="none")) == (
        "tool_choice differs: recorded 'auto', now 'none'"
    )
    fmt = {"type": "json_schema"}
    assert first_difference(request(), request(response_format=fmt)) == (
        "response_format differs: recorded 'null', now '{\"type\":\"json_schema\"}'"
    )
