"""A Pydantic AI ``Agent`` whose output validator rejects its first answer, pointed at the proxy:
the agent's retry must show as attempt 2, with its feedback message on the rejected step —
exactly how the engine's own retries look."""

from __future__ import annotations

import openai
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.proxy.conftest import KEY, OPENAI, Proxied, fixture_reply

FEEDBACK = "Answer in one sentence, without a question."


async def test_an_output_validator_retry_is_attempt_2_with_its_feedback(proxied: Proxied) -> None:
    for _ in range(2):
        proxied.upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with openai.AsyncOpenAI(
        base_url=proxied.openai_url, api_key=KEY, max_retries=0
    ) as client:
        model = OpenAIChatModel("gpt-3.5-turbo", provider=OpenAIProvider(openai_client=client))
        agent = Agent(model, instructions="You tell jokes.", retries=2)
        calls: list[str] = []

        @agent.output_validator
        def once(output: str) -> str:
            calls.append(output)
            if len(calls) == 1:
                raise ModelRetry(FEEDBACK)
            return output

        result = await agent.run("Tell me a joke about OpenTelemetry")
    assert len(calls) == 2 and result.output == calls[1]

    (record,) = await proxied.records()
    assert (record.status, record.termination, record.via) == ("succeeded", "stop", "proxy")
    assert [(s.index, s.attempt, s.status) for s in record.steps] == [
        (1, 1, "failed_validation"),
        (2, 2, "success"),
    ]
    rejected, accepted = record.steps
    # The feedback is every message the agent added after the rejected answer: its retry
    # prompt (a user message), after a system note this Pydantic AI version adds with it.
    assert rejected.feedback[-1].role == "user"
    assert FEEDBACK in (rejected.feedback[-1].content or "")
    assert rejected.request.system == "You tell jokes."
    assert accepted.request.messages == [
        *rejected.request.messages,
        accepted.request.messages[len(rejected.request.messages)],
        *rejected.feedback,
    ]
    answer = accepted.request.messages[len(rejected.request.messages)]
    assert (answer.role, answer.content) == ("assistant", calls[0])
    assert record.budgets.attempts_used == 2
    assert record.output == result.output
