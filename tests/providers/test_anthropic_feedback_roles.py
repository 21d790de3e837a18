"""Every feedback role on Anthropic sends a request the Messages API accepts and that matches the
record: ``tool`` feedback without user tools declares the synthetic tool (tool_choice none);
``system`` feedback, which the API cannot place mid-conversation, is sent and recorded as user
feedback, and the record says so in its notes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from inspector.core.history import SYSTEM_AS_USER_NOTE, effective_policy
from inspector.core.loop import Turn
from inspector.core.policy import Policy
from inspector.core.scenario import scenario_from_dict
from inspector.providers.anthropic import AnthropicProvider
from inspector.providers.replay import replay_turn
from tests.providers.anthropic_fixtures import TEST_KEY, mock_client


def api_problems(body: dict[str, Any]) -> list[str]:
    """The Messages API's request rules these bodies meet (each one a documented 400)."""
    problems = []
    blocks = [b for turn in body["messages"] for b in turn["content"]]
    uses_tools = any(b["type"] in ("tool_use", "tool_result") for b in blocks)
    if uses_tools and not body.get("tools"):
        problems.append("tool_use/tool_result blocks without tools")
    if "tool_choice" in body and not body.get("tools"):
        problems.append("tool_choice without tools")
    if any(turn["role"] not in ("user", "assistant") for turn in body["messages"]):
        problems.append("a role other than user/assistant")
    if body["messages"] and body["messages"][0]["role"] != "user":
        problems.append("the first turn is not the user's")
    for prev, turn in zip(body["messages"], body["messages"][1:], strict=False):
        ids = {b["id"] for b in prev["content"] if b["type"] == "tool_use"}
        results = [b["tool_use_id"] for b in turn["content"] if b["type"] == "tool_result"]
        if any(r not in ids for r in results):
            problems.append("a tool_result without its tool_use just before")
    return problems


def reply(text: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 2},
        },
    )


def scenario(**policy: Any) -> Any:
    return scenario_from_dict(
        {
            "name": "anthropic-feedback",
            "model": {"provider": "anthropic", "name": "claude-haiku-4-5", "stream": False},
            "prompt": {"system": "Be brief.", "user": "Say hello"},
            "validators": [{"kind": "max_length", "max": 5, "feedback": "Five characters."}],
            "policy": {"max_attempts": 2, **policy},
        },
        source="t.toml",
        base_dir=Path("."),
    )


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)


async def run(**policy: Any) -> tuple[Any, list[dict[str, Any]]]:
    bodies: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        problems = api_problems(body)
        if problems:
            message = {"type": "invalid_request_error", "message": "; ".join(problems)}
            return httpx.Response(400, json={"type": "error", "error": message})
        return reply("Hello there, friend" if len(bodies) == 1 else "Hi!")

    client, _ = mock_client(handle)
    sc = scenario(**policy)
    record = await Turn(sc, AnthropicProvider(sc.model, client=client)).run()
    await client.aclose()
    return record, bodies


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("role", ["user", "tool", "system"])
async def test_every_feedback_role_is_a_valid_request(role: str, keep: bool) -> None:
    record, bodies = await run(feedback_role=role, keep_failed_attempts=keep)
    assert record.status == "succeeded", record.error
    assert len(bodies) == 2 and all(api_problems(b) == [] for b in bodies)


async def test_tool_feedback_without_user_tools_declares_the_synthetic_tool() -> None:
    record, bodies = await run(feedback_role="tool")
    retry = bodies[1]
    assert [t["name"] for t in retry["tools"]] == ["validation_feedback"]
    assert retry["tool_choice"] == {"type": "none"}  # declared for the history, never offered
    assert "tools" not in bodies[0]
    step = record.steps[1]
    assert [m.role for m in step.request.messages] == ["user", "assistant", "tool"]
    assert step.raw is not None and step.raw.request["body"]["tools"] == retry["tools"]


async def test_system_feedback_is_sent_and_recorded_as_user_feedback() -> None:
    record, bodies = await run(feedback_role="system")
    assert record.policy.feedback_role == "user"
    assert record.notes == [SYSTEM_AS_USER_NOTE]
    retry = bodies[1]
    assert retry["system"] == "Be brief."  # the feedback did not go into the system prompt
    assert retry["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Five characters."}],
    }
    recorded = record.steps[1].request.messages
    assert recorded[-1].role == "user" and recorded[-1].content == "Five characters."
    assert [m.role for m in record.steps[1].request.messages].count("system") == 0


async def test_an_offline_replay_of_such_a_run_matches_its_recording() -> None:
    record, _ = await run(feedback_role="system")
    replayed = await replay_turn(record).run()
    assert replayed.status == "succeeded" and replayed.notes == [SYSTEM_AS_USER_NOTE]


def test_effective_policy_is_a_pure_function() -> None:
    system = Policy(feedback_role="system")
    assert effective_policy(system, True) is system
    assert effective_policy(system, False).feedback_role == "user"
    assert effective_policy(Policy(feedback_role="tool"), False).feedback_role == "tool"
