"""Export redaction: credential fields, key-shaped tokens and written-out auth headers go; text
that only resembles them stays; redacted JSON stays JSON."""

from __future__ import annotations

import json

from inspector.reports.redact import REDACTED, redact, redact_text, scrub_keys

OPENAI = "sk-proj-" + "x7Y8z9W0" * 5
ANTHROPIC = "sk-ant-api03-" + "a_B-c1D2" * 6


def test_credential_fields_are_redacted_whatever_their_case() -> None:
    data = {
        "headers": {"Authorization": "Bearer t0k3n-value", "X-API-Key": "abc", "accept": "json"},
        "nested": [{"api_key": "secret-value", "password": "hunter2"}],
        "empty": {"authorization": ""},
    }
    assert redact(data) == {
        "headers": {"Authorization": REDACTED, "X-API-Key": REDACTED, "accept": "json"},
        "nested": [{"api_key": REDACTED, "password": REDACTED}],
        "empty": {"authorization": ""},
    }


def test_keys_inside_text_are_redacted() -> None:
    text = (
        f"use {OPENAI} or {ANTHROPIC}; Authorization: Bearer abc.def-123456 then x-api-key={OPENAI}"
    )
    redacted = redact_text(text)
    assert OPENAI not in redacted and ANTHROPIC not in redacted
    assert "abc.def-123456" not in redacted
    assert redacted.startswith(f"use {REDACTED} or {REDACTED};")
    assert "Authorization: [redacted] then x-api-key=[redacted]" in redacted


def test_a_urls_user_info_in_free_text_is_redacted_as_in_a_url_field() -> None:
    text = "proxy https://bob:hunter2@proxy.example:8080/x failed; clone https://ghp_tok3n@github.com/a"
    redacted = redact_text(text)
    assert "hunter2" not in redacted and "ghp_tok3n" not in redacted
    assert redacted == (
        f"proxy https://bob:{REDACTED}@proxy.example:8080/x failed; "
        f"clone https://{REDACTED}@github.com/a"
    )
    assert redact({"error": text}) == {"error": redacted}
    assert redact_text(redacted) == redacted  # once redacted, as it stays
    for kept in ("https://example.com/a@b", "write to bob@example.com", "https://user:@h"):
        assert redact_text(kept) == kept


def test_a_quoted_value_after_a_credential_name_is_redacted() -> None:
    # A ``--set`` override is TOML: ``model.params.api_key="k"`` quotes its value, and so do
    # log lines (``password='x'``) and TOML written in a message (``password = "x"``).
    for text, shown in (
        ('model.params.api_key="quotedkey123"', f'model.params.api_key="{REDACTED}"'),
        (
            '{ name = "Sam", password = "hunter2pw" }',
            f'{{ name = "Sam", password = "{REDACTED}" }}',
        ),
        ("login(user='bob', password='hunter2pw')", f"login(user='bob', password='{REDACTED}')"),
    ):
        assert redact_text(text) == shown
        assert redact_text(shown) == shown  # once redacted, as it stays
    assert redact_text('password = ""') == 'password = ""'


def test_look_alikes_are_kept() -> None:
    for text in (
        "task-force-alpha-bravo-charlie",  # "sk-" inside a word
        "sk-learn",  # too short to be a key
        "api_key_env = OPENAI_API_KEY",  # the name of the env var, not the key
        "the password is not here",
        "in 59 · out 4 tokens",
    ):
        assert redact_text(text) == text
    assert redact({"api_key_env": "OPENAI_API_KEY"}) == {"api_key_env": "OPENAI_API_KEY"}


def test_scrubbing_rendered_json_keeps_it_valid() -> None:
    rendered = json.dumps({"a": f"x {OPENAI} y", "b": [f"Bearer {ANTHROPIC}"]})
    scrubbed = scrub_keys(rendered)
    assert json.loads(scrubbed) == {"a": f"x {REDACTED} y", "b": [f"Bearer {REDACTED}"]}


def test_a_credential_after_another_name_value_pair_is_redacted() -> None:
    # "config: password=…": the value of ``config`` took "password=…" whole, and the search
    # went on after it; "x-api-key: k1 password: p2": the key's value took "k1 password:".
    assert redact_text("config: password=abc123") == f"config: password={REDACTED}"
    assert redact_text('config: password = "splitpw4321" ok') == (
        f'config: password = "{REDACTED}" ok'
    )
    assert redact_text("x-api-key: k1 password: p2") == (
        f"x-api-key: {REDACTED} password: {REDACTED}"
    )
    assert redact_text("Authorization: Bearer abcdefgh12345") == f"Authorization: {REDACTED}"
    assert redact_text("mode: fast retries: 3") == "mode: fast retries: 3"
