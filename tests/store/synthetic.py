"""Hand-built run records covering every record type and shape the store must keep exactly."""

from __future__ import annotations

from typing import Any

from inspector.core.messages import Message, ToolCall, assistant, system, tool_result, user
from inspector.core.policy import Policy
from inspector.core.records import (
    Budgets,
    Forced,
    RawExchange,
    RunError,
    RunRecord,
    Step,
    StepRequest,
    StepResponse,
    ToolResult,
    ToolSpec,
    Usage,
    Verdict,
)

TOOL = ToolSpec(
    name="lookup",
    description="Find a thing",
    parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)


def wire(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in messages]


def long_turn(steps: int, *, run_id: str = "long0000turn", raw: bool = True) -> RunRecord:
    """A tool-calling turn of ``steps`` model calls; each request repeats the whole history."""
    history: list[Message] = [user("find it")]
    out: list[Step] = []
    for index in range(1, steps + 1):
        request = StepRequest(
            system="sys", messages=list(history), tools=[TOOL], tool_choice="auto"
        )
        call = ToolCall(id=f"c{index}", name="lookup", arguments={"q": f"x{index}"})
        response = StepResponse(
            tool_calls=[call], finish_reason="tool_calls", usage=Usage(input_tokens=index * 10)
        )
        exchange = None
        if raw:
            body = {"model": "m", "messages": wire(history), "stream": True, "tools": []}
            exchange = RawExchange(request=body, response=[{"delta": {"n": index}}])
        out.append(
            Step(
                index=index,
                attempt=1,
                status="success",
                request=request,
                response=response,
                tool_results=[ToolResult(tool_call_id=call.id, name="lookup", content="found")],
                latency_ms=1.5,
                ttft_ms=0.5,
                raw=exchange,
            )
        )
        history += [assistant(None, (call,)), tool_result(call.id, "found", "lookup")]
    return RunRecord(
        run_id=run_id,
        scenario="long",
        started_at="2026-01-01T00:00:00.000+00:00",
        policy=Policy(max_steps=steps + 1),
        status="succeeded",
        termination="stop",
        budgets=Budgets(attempts_used=1, max_attempts=3, steps_used=steps, max_steps=steps + 1),
        output="done",
        steps=out,
        transcript=[*history, assistant("done")],
        provider="openai",
        model="m",
    )


def every_shape(run_id: str = "shapes000001") -> RunRecord:
    """One record with every step status, verdict status, raw shape and optional field set."""
    sys_msg, ask = system("ignored"), user("write an sms")
    draft = assistant("**hi**")
    fb = user("Plain text only.")
    steps = [
        Step(
            index=1,
            attempt=1,
            status="failed_validation",
            request=StepRequest(system="s", messages=[ask], tools=[TOOL], tool_choice="auto"),
            response=StepResponse(text="**hi**", finish_reason="stop", reasoning="thinking"),
            verdicts=[
                Verdict.failed("no_markdown", "found *", feedback="Plain text only."),
                Verdict.passed("max_length"),
                Verdict.errored("python:check", "ZeroDivisionError: division by zero"),
            ],
            feedback=[fb],
            cleared=True,
            latency_ms=3.25,
            ttft_ms=1.0,
            raw=RawExchange(
                request={
                    "url": "https://api.example/v1/chat?key=[redacted]",
                    "headers": {"authorization": "[redacted]", "content-type": "application/json"},
                    "body": {"model": "m", "messages": wire([ask]), "temperature": 0},
                },
                response={"choices": [{"message": {"content": "**hi**"}}]},
            ),
        ),
        Step(
            index=2,
            attempt=2,
            status="success",
            # Not a prefix of step 1's messages: the history was rebuilt (feedback "latest").
            request=StepRequest(
                system="s",
                messages=[sys_msg, ask, fb],
                tools=[TOOL],
                tool_choice={"type": "function", "name": "lookup"},
                response_format={"type": "json_schema", "json_schema": {"name": "x"}},
            ),
            response=StepResponse(
                tool_calls=[ToolCall(id="t1", name="lookup", arguments="not json {")],
                finish_reason="tool_calls",
                usage=Usage(input_tokens=7, output_tokens=3),
            ),
            tool_results=[
                ToolResult(tool_call_id="t1", name="lookup", content="", error="bad args"),
                ToolResult(tool_call_id="t2", name="send", content="sent", replayed=True),
            ],
            forced=Forced(tool_choice={"type": "function", "name": "lookup"}),
            internal_tool=True,
            raw=RawExchange(request="a raw body that is not JSON", response=None),
        ),
        Step(
            index=3,
            attempt=2,
            status="empty",
            request=StepRequest(system="s\n\nAnswer now.", messages=[ask, fb], tool_choice="none"),
            response=StepResponse(finish_reason="stop"),
            forced=Forced(tool_choice="none", instruction_appended=True),
            raw=RawExchange(request={"messages": wire([ask, fb])}, response={"empty": True}),
        ),
        Step(
            index=4,
            attempt=3,
            status="error",
            request=StepRequest(system="s", messages=[ask, fb, draft]),
            response=StepResponse(text="partial"),
            error="HTTP 500: upstream",
        ),
        Step(
            index=5,
            attempt=3,
            status="cancelled",
            request=StepRequest(system="s", messages=[ask, fb, draft]),
            response=StepResponse(refusal="I can't", text=""),
        ),
    ]
    return RunRecord(
        run_id=run_id,
        scenario="shapes",
        started_at="2026-01-02T03:04:05.678+00:00",
        duration_ms=12.5,
        policy=Policy(feedback_history="latest", on_invalid_output="fallback", fallback={"b": 1}),
        status="fallback",
        termination="fallback",
        budgets=Budgets(attempts_used=3, max_attempts=3, steps_used=5, max_steps=9),
        output={"body": "Meeting moved.", "n": [1, 2.5, None, True]},
        error=RunError(type="ValidatorExhausted", message="3 attempts"),
        usage=Usage(input_tokens=7, output_tokens=3),
        replay_of="abcdef123456",
        steps=steps,
        transcript=[ask, assistant("Meeting moved.")],
        provider="openai",
        model="m",
        fallback_trigger="validator_exhausted",
        scenario_source={"name": "shapes", "model": {"provider": "openai"}},
        scenario_dir="/tmp/somewhere",
        scenario_origin="/tmp/somewhere/shapes.toml",
        overrides=["policy.feedback_history=latest"],
    )
