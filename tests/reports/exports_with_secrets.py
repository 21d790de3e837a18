"""Records whose JSONL export takes every path of the writer: requests that extend, drop and
rebuild their history, raw bodies of every shape, cleared attempts, an imported record (no
events), and credentials where redaction must find them (headers, params, URLs, a key in a
message every later request re-sends, a bearer token in a tool result)."""

from __future__ import annotations

from inspector.core.fidelity import Fidelity, FidelityGap
from inspector.core.messages import Message
from inspector.core.records import RawExchange, RunRecord, ToolResult
from tests.store.synthetic import every_shape, long_turn, wire

OPENAI_KEY = "sk-proj-" + "Q1w2E3r4" * 6
TOKEN = "zzzzzzzz9999"


def leaky_turn() -> RunRecord:
    """A 12-step turn whose first message carries a key (so every request repeating it is
    redacted), with secret headers, params and URL passwords in its raw bodies and scenario."""
    record = long_turn(12, run_id="leaky000turn")
    first = Message(role="user", content=f"Look it up, my key is {OPENAI_KEY}.")
    steps = []
    for step in record.steps:
        messages = [first, *step.request.messages[1:]]
        request = step.request.model_copy(update={"messages": messages})
        raw = step.raw
        if raw is not None and isinstance(raw.request, dict):
            raw = RawExchange(
                request={
                    **raw.request,
                    "url": "https://user:pw1234@example.com/v1?api-key=abc123",
                    "headers": {"Authorization": f"Bearer {OPENAI_KEY}", "X-Build": "7"},
                    "params": {"api_key": "pp123456", "n": "3"},
                    "messages": wire(messages),
                },
                response={"echo": f"Authorization: Bearer {TOKEN} and more"},
            )
        results = [
            ToolResult(tool_call_id=r.tool_call_id, name=r.name, content=f"Bearer {TOKEN}")
            for r in step.tool_results
        ]
        steps.append(
            step.model_copy(update={"request": request, "raw": raw, "tool_results": results})
        )
    source = {
        "name": "leaky",
        "model": {
            "provider": "scripted",
            "base_url": "https://user:pw1234@example.com/v1",
            "headers": {"Authorization": f"Bearer {OPENAI_KEY}", "X-Build": "7"},
            "safe_headers": ["X-Build"],
            "params": {"api_key": "pp123456"},
        },
    }
    return record.model_copy(
        update={"steps": steps, "scenario_source": source, "output": f"key {OPENAI_KEY}"}
    )


def imported_shapes() -> RunRecord:
    """``every_shape`` as an import stores it: a fidelity report, no event log."""
    fidelity = Fidelity(
        format="otel",
        source="trace.otlp.json",
        replayable=True,
        gaps=[FidelityGap(kind="raw", detail="raw bodies are not in the source")],
    )
    return every_shape("imported0001").model_copy(update={"fidelity": fidelity})


RECORDS = {
    "long-turn": lambda: long_turn(40),
    "long-turn-no-raw": lambda: long_turn(25, raw=False),
    "every-shape": every_shape,
    "leaky-turn": leaky_turn,
    "imported-shapes": imported_shapes,
}
