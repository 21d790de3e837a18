"""The GenAI attribute names written and read are the conventions' own: each is pinned against
``opentelemetry-semantic-conventions`` (the version pinned in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as semconv

from inspector.formats import genai as g


def test_every_gen_ai_name_we_use_is_in_the_semantic_conventions_package() -> None:
    ours = {
        value
        for name, value in vars(g).items()
        if name.isupper() and isinstance(value, str) and value.startswith("gen_ai.")
    }
    ours |= set(g.SAMPLING)
    ours.discard(g.EVALUATION_EVENT)  # an event name, not an attribute
    known = {v for k, v in vars(semconv).items() if k.startswith("GEN_AI_") and isinstance(v, str)}
    assert ours - known == set()
    assert len(ours) > 30


def test_operation_names_are_the_conventions_values() -> None:
    values = {"chat", "invoke_agent", "execute_tool"}
    assert {g.CHAT, g.INVOKE_AGENT, g.EXECUTE_TOOL} == values
    text = Path(semconv.__file__).read_text(encoding="utf-8")
    for value in values:
        assert f'= "{value}"' in text
