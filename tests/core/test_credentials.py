"""``core.credentials``: the one rule for what is secret (headers, params, URLs, bodies)."""

from __future__ import annotations

from inspector.core.credentials import (
    REDACTED,
    redact,
    redact_headers,
    redact_scenario_source,
    secret_headers,
    secret_values,
)


def test_scenario_headers_are_secret_unless_safe_or_protocol() -> None:
    names = ["X-Build", "X-Team", "anthropic-version", "X-Api-Key"]
    secret = secret_headers(names, safe=["x-build", "X-Api-Key"])
    assert secret == {"x-team", "x-api-key"}  # a credential name is never made safe
    sent = {"X-Build": "7", "X-Team": "t", "anthropic-version": "v", "X-Api-Key": "k"}
    assert redact_headers(sent, secret) == {
        "X-Build": "7",
        "X-Team": REDACTED,
        "anthropic-version": "v",
        "X-Api-Key": REDACTED,
    }


def test_the_scenario_source_keeps_the_run_and_drops_its_credentials() -> None:
    source = {
        "model": {
            "base_url": "https://me:hunter2@llm.example/v1?sig=abc&api-version=2",
            "headers": {"X-Team": "t", "X-Build": "7"},
            "safe_headers": ["X-Build"],
            "params": {"key": "k", "api-version": "2"},
        },
        "tools": [{"name": "login", "parameters": {"properties": {"password": {}}}}],
        "script": [{"tool_calls": [{"name": "login", "arguments": {"session_id": "s1"}}]}],
    }
    out = redact_scenario_source(source)
    assert out["model"] == {
        "base_url": "https://me:[redacted]@llm.example/v1?sig=[redacted]&api-version=2",
        "headers": {"X-Team": REDACTED, "X-Build": "7"},
        "safe_headers": ["X-Build"],
        "params": {"key": REDACTED, "api-version": "2"},
    }
    assert out["tools"] is source["tools"] and out["script"] is source["script"]


def test_bodies_use_the_exact_field_rule_only() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "session_id": "s", "key": "k"}
    assert redact(body) is body  # nothing named exactly like a credential: not even copied
    assert redact({"api_key": "k", "password": "p"}) == {"api_key": REDACTED, "password": REDACTED}
    nested = {"scenario_source": {"model": {"headers": {"X-Team": "t"}}}}
    assert redact(nested) == {"scenario_source": {"model": {"headers": {"X-Team": REDACTED}}}}


def test_secret_values_for_scrubbing_logs() -> None:
    values = secret_values(
        {"authorization": "Bearer abc12345", "X-Team": "team-1", "accept": "json"},
        [("key", "k-123"), ("api-version", "1")],
        "https://u:pw-999@h/v1",
        frozenset({"x-team"}),
    )
    assert sorted(values) == sorted(["Bearer abc12345", "team-1", "k-123", "pw-999"])


def test_a_lone_user_name_in_a_url_is_redacted_whole() -> None:
    from inspector.core.credentials import redact_url

    assert redact_url("https://ghp_token123@git.example/x") == "https://[redacted]@git.example/x"
    assert redact_url("https://me:pw@h/") == "https://me:[redacted]@h/"
    assert redact_url("https://h/a@b") == "https://h/a@b"


def test_an_overrides_credential_is_redacted_as_the_scenario_field_it_sets() -> None:
    from inspector.core.credentials import redact_override

    assert redact_override("model.params.api_key=plainkey123") == "model.params.api_key=[redacted]"
    assert (
        redact_override('model.headers.Authorization="Bearer hdrtok999xyz"')
        == "model.headers.Authorization=[redacted]"
    )
    assert redact_override("model.headers={ X-Token = 'abc' }") == "model.headers=[redacted]"
    assert (
        redact_override("tools.0.arguments.password=pw") == "tools.0.arguments.password=[redacted]"
    )
    assert (
        redact_override("model.base_url=https://bob:pw123@h.example/v1")
        == "model.base_url=https://bob:[redacted]@h.example/v1"
    )
    for kept in (
        "policy.feedback_history=latest",
        "model.api_key_env=MY_KEY",
        "model.params.temperature=0.2",
        "model.headers.anthropic-version=2023-06-01",
        "policy.fallback={ body = 'x' }",
    ):
        assert redact_override(kept) == kept


async def test_a_runs_overrides_keep_no_credential() -> None:
    from tests.helpers.runs import demo_record

    record = await demo_record(
        "retry-feedback", "model.params.api_key=plainkey123", "policy.max_attempts=3"
    )
    assert record.overrides == ["model.params.api_key=[redacted]", "policy.max_attempts=3"]


def test_a_schemas_property_names_are_names_not_values() -> None:
    """A tool's ``password`` parameter is kept whole (its schema), its value in a call is not."""
    tool = {
        "name": "login",
        "parameters": {
            "type": "object",
            "properties": {"password": {"type": "string"}, "user": {"type": "string"}},
        },
    }
    assert redact(tool) is tool
    sent = {"properties": {"password": "hunter2"}}  # data that happens to use the word
    assert redact(sent) == {"properties": {"password": REDACTED}}
    token = "Bearer sk-abcdefghijklmnopqrstuvwx"
    with_default = {"properties": {"token": {"type": "string", "default": token}}}
    assert redact(with_default) == {
        "properties": {"token": {"type": "string", "default": REDACTED}}
    }
