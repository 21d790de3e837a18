"""Foreign model calls → a run record: the rules every importer shares.

An importer turns its source (a trace, a message history, a request log) into ``ImportedCall``s
in call order, saying for each what the source knew. ``build_run`` then lays out the turn the
way this project records one:

- each call is a step; a call whose answer has no tool calls is a candidate final output;
- a candidate followed by another call that continues the same conversation past it is a
  failed attempt: the messages added after the answer are its feedback (DESIGN §5, the proxy's
  rule: "a continuation after a final answer = a new attempt"), and its verdict is inferred
  (validator ``retry_feedback``, status ``fail``, the feedback as reason);
- a tool call's result is the ``tool`` message answering it in the next request, else what the
  source recorded for the tool (``ImportedCall.tool_results``);
- the last call decides the run as the engine would judge the same reply under the run's
  policy (``_ending``): an answer → ``succeeded``/``stop``; a refusal → ``failed``/``refusal``;
  an empty reply → ``succeeded``/``empty_final`` (``on_empty_final = "finalize"``), or
  ``failed``/``empty_final`` when the provider filtered it (``finish_reason`` other than
  ``stop``: ``on_empty_final = "error"``); an error → ``error``/``provider_error``; a tool call
  with nothing after it → ``failed``/``step_cap`` (the turn was cut short there, as a turn
  that reaches its step cap with pending tool calls; the fidelity gap ``ending`` says so);
- its scenario is the one ``scenario_from`` saves: the recorded replies on the scripted model,
  under a policy that sends what the recording sent (no forced last step, native output for a
  JSON-schema ``response_format``), so an imported run replays, re-validates and compares like
  a recorded one. Where the engine cannot send a recorded request as it was, the fidelity
  report says which field (``formats.replay_fit``).

The fidelity report comes from ``formats.fidelity``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from inspector.core.fidelity import ImportFormat
from inspector.core.handlers import (
    empty_final,
    exhausted_message,
    failure_kind,
    refusal_verdict,
)
from inspector.core.messages import Message
from inspector.core.output import OutputPlan, parse_json_text, read_candidate
from inspector.core.policy import Policy
from inspector.core.records import (
    Budgets,
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
from inspector.core.schema import schema_problem
from inspector.formats.fidelity import INFERRED_VALIDATOR, fidelity_of
from inspector.formats.replay_fit import request_gaps
from inspector.formats.scenario_from import scenario_dict


@dataclass
class ImportedCall:
    """One model call as a source knows it. ``None`` means "the source does not say"."""

    system: str | None
    messages: list[Message]
    response: StepResponse | None
    tools: list[ToolSpec] | None = None
    tool_choice: str | dict[str, Any] | None = None
    tool_choice_known: bool = False
    response_format: dict[str, Any] | None = None
    sampling: dict[str, Any] | None = None
    content_known: bool = True
    latency_ms: float | None = None
    ttft_ms: float | None = None
    error: str | None = None
    tool_results: list[ToolResult] = field(default_factory=list)


@dataclass
class RunSource:
    """What a run is known as: its name, model and when it started."""

    format: ImportFormat
    file: str
    run_id: str
    scenario: str
    started_at: str
    provider: str = ""
    model: str = ""
    duration_ms: float | None = None


def build_run(source: RunSource, calls: list[ImportedCall]) -> RunRecord:
    if not calls:
        raise ValueError("no model calls to import")
    steps: list[Step] = []
    attempt = 1
    for index, call in enumerate(calls, start=1):
        after = calls[index] if index < len(calls) else None
        step = _step(index, attempt, call, after)
        steps.append(step)
        if step.feedback:  # a later call continued past its answer: a retry
            attempt += 1
    last_call = calls[-1]
    policy = _policy(calls[0], steps[-1], attempt, len(steps))
    steps[-1] = last = _judged(steps[-1], calls[0].response_format)
    status, termination, error, output = _ending(last, policy)
    transcript = list(last_call.messages)
    if last_call.system:
        transcript.insert(0, Message(role="system", content=last_call.system))
    if last.response is not None and status == "succeeded":
        transcript.append(_assistant(last.response))
    elif last.response is not None and termination == "refusal":
        # What the user saw last stays in the transcript, as the engine keeps it.
        transcript.append(Message(role="assistant", content=last.response.refusal))
    usage = Usage()
    for step in steps:
        if step.response is not None:
            usage = usage + step.response.usage
    latency = sum(s.latency_ms or 0.0 for s in steps)
    record = RunRecord(
        run_id=source.run_id,
        scenario=source.scenario,
        started_at=source.started_at,
        duration_ms=source.duration_ms if source.duration_ms is not None else latency,
        policy=policy,
        status=status,
        termination=termination,
        budgets=Budgets(
            attempts_used=attempt,
            max_attempts=attempt,
            steps_used=len(steps),
            max_steps=policy.max_steps,
        ),
        output=output,
        error=error,
        usage=usage,
        steps=steps,
        transcript=transcript,
        provider=source.provider,
        model=source.model,
        scenario_origin=f"import:{source.file}",
        fidelity=fidelity_of(source.format, source.file, calls, steps),
    )
    # The scenario it "ran": the recorded replies on the scripted model, so replay and
    # re-validation load it like any run's (docs/formats.md, "Save as scenario").
    record.scenario_source = _scenario_source(record)
    sampling = calls[0].sampling or {}
    model = record.scenario_source["model"]
    for key in ("temperature", "max_tokens"):
        if isinstance(sampling.get(key), int | float) and not isinstance(sampling[key], bool):
            model[key] = sampling[key]
    _check_replay(record)
    return record


def _scenario_source(record: RunRecord) -> dict[str, Any]:
    """``scenario_dict`` of the record; a tool whose recorded results differ between its calls
    is marked ``side_effects``, so a replay answers each call with its recorded result (one
    canned result would make the next request differ)."""
    results: dict[str, set[str]] = {}
    for step in record.steps:
        for result in step.tool_results:
            results.setdefault(result.name, set()).add(result.content)
    varying = {name for name, contents in results.items() if len(contents) > 1}
    try:
        return scenario_dict(record, varying)
    except ValueError:  # a result of a tool no call offered or made: canned results only
        return scenario_dict(record)


def _check_replay(record: RunRecord) -> None:
    """A run is replayable only when its rebuilt scenario sends every recorded request as it
    was: each field it cannot send is a ``request_differs`` gap (``formats.replay_fit``)."""
    fidelity = record.fidelity
    if fidelity is None or not fidelity.replayable:
        return  # the source lacks what a request needs already: reported as such
    differs = request_gaps(record)
    if differs:
        fidelity.gaps = [*fidelity.gaps, *differs]
        fidelity.replayable = False


def continues(before: list[Message], after: list[Message]) -> int | None:
    """How many messages of ``after`` repeat ``before`` (its prefix), or None when ``after``
    does not start with all of ``before`` (another conversation)."""
    if len(after) < len(before) or after[: len(before)] != before:
        return None
    return len(before)


def _step(index: int, attempt: int, call: ImportedCall, after: ImportedCall | None) -> Step:
    response = call.response
    request = StepRequest(
        system=call.system or "",
        messages=call.messages,
        tools=call.tools or [],
        tool_choice=call.tool_choice,
        response_format=call.response_format,
    )
    base: dict[str, Any] = {
        "index": index,
        "attempt": attempt,
        "request": request,
        "response": response,
        "latency_ms": call.latency_ms,
        "ttft_ms": call.ttft_ms,
    }
    if call.error is not None or response is None:
        return Step(status="error", error=call.error or "no response recorded", **base)
    if response.tool_calls:
        return Step(status="success", tool_results=_tool_results(call, after), **base)
    feedback = _feedback(call, after)
    if feedback:
        reason = "\n".join(_unfenced(m.content or "") for m in feedback)
        verdict = Verdict.failed(INFERRED_VALIDATOR, reason, feedback=reason)
        return Step(status="failed_validation", feedback=feedback, verdicts=[verdict], **base)
    if response.refusal:  # the engine's verdict on a refusal
        verdicts = [refusal_verdict(response.refusal)]
        return Step(status="failed_validation", verdicts=verdicts, **base)
    return Step(status="empty" if _empty(response) else "success", **base)


def _empty(response: StepResponse) -> bool:
    """No content, as the engine judges a reply: blank text, no tool calls, no refusal."""
    return not response.text.strip() and not response.tool_calls and not response.refusal


def _policy(first: ImportedCall, last: Step, attempts: int, steps: int) -> Policy:
    """The policy under which the engine sends the recorded requests and judges the last reply
    as the source ended: every step a plain one (no forced last step), a JSON-schema
    ``response_format`` as native output, an empty last reply accepted (``finalize``) unless
    the provider filtered it (``error``: a content-filtered reply is no answer)."""
    fields: dict[str, Any] = {
        "max_attempts": attempts,
        "max_steps": max(steps, 1),
        "final_step": "none",
    }
    if _native_schema(first.response_format) is not None:
        fields["output_mode"] = "native"
    if last.status == "empty" and last.response is not None:
        filtered = last.response.finish_reason not in (None, "stop")
        fields["on_empty_final"] = "error" if filtered else "finalize"
    return Policy(**fields)


def _feedback(call: ImportedCall, after: ImportedCall | None) -> list[Message]:
    """The messages the next call added after this call's answer: its feedback."""
    if after is None or call.response is None:
        return []
    history = [*call.messages, _assistant(call.response)]
    kept = continues(history, after.messages)
    if kept is None:
        # Failed attempts dropped from the next history (keep_failed_attempts = false): the
        # next call repeats this call's request and adds the feedback after it.
        kept = continues(call.messages, after.messages)
        if kept is None or kept == len(after.messages):
            return []
    return [m for m in after.messages[kept:] if m.role != "assistant"]


def _tool_results(call: ImportedCall, after: ImportedCall | None) -> list[ToolResult]:
    assert call.response is not None
    answered: dict[str, Message] = {}
    if after is not None:
        for m in after.messages:
            if m.role == "tool" and m.tool_call_id:
                answered[m.tool_call_id] = m
    recorded = {r.tool_call_id: r for r in call.tool_results}
    out = []
    for tc in call.response.tool_calls:
        if tc.id in recorded:
            out.append(recorded[tc.id])
        elif tc.id in answered:
            out.append(
                ToolResult(tool_call_id=tc.id, name=tc.name, content=answered[tc.id].content or "")
            )
    return out


def _native_schema(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON schema of a ``json_schema`` response format the engine can ask for (native
    output mode), else None (no format, another type, or a schema it rejects)."""
    if not response_format or response_format.get("type") != "json_schema":
        return None
    schema = (response_format.get("json_schema") or {}).get("schema")
    return schema if isinstance(schema, dict) and schema_problem(schema) is None else None


def _judged(last: Step, response_format: dict[str, Any] | None) -> Step:
    """The last answer read as the engine reads a candidate in native output mode: JSON
    matching the recorded schema, else rejected with the engine's ``output`` verdict."""
    schema = _native_schema(response_format)
    response = last.response
    if last.status != "success" or response is None or response.tool_calls or schema is None:
        return last
    candidate = read_candidate(OutputPlan(mode="native", schema=schema), response)
    if candidate.problem is None:
        return last
    return last.model_copy(update={"status": "failed_validation", "verdicts": [candidate.problem]})


# Why an imported run that ends on a tool call is recorded as cut short (``step_cap``).
CUT_SHORT = "the source ends with a tool call and no answer after it"


def _ending(last: Step, policy: Policy) -> tuple[Any, Any, RunError | None, Any]:
    """(status, termination, error, output) from the last step, as the engine ends a turn on
    the same reply under ``policy``."""
    if last.status == "error":
        return (
            "error",
            "provider_error",
            RunError(type="ProviderError", message=last.error or ""),
            None,
        )
    assert last.response is not None
    if last.response.tool_calls:
        # The engine's word for a turn that stops with tool calls pending: its step cap.
        plural = "s" if last.index != 1 else ""
        message = f"{CUT_SHORT}: cut short after {last.index} model call{plural}"
        return "failed", "step_cap", RunError(type=failure_kind("step_cap"), message=message), None
    if last.response.refusal:
        error = RunError(type=failure_kind("refusal"), message=last.response.refusal)
        return "failed", "refusal", error, None
    if last.status == "failed_validation":  # its answer does not match the recorded schema
        message = exhausted_message(policy.max_attempts, last.verdicts)
        error = RunError(type=failure_kind("validator_exhausted"), message=message)
        return "failed", "validator_exhausted", error, None
    if last.status == "empty":
        structured = policy.output_mode == "native"
        end = empty_final(last, policy, structured=structured)
        assert end is not None  # the policy finalizes or fails an empty last reply
        return end.status, end.termination, end.error, end.output
    if policy.output_mode == "native":
        return "succeeded", "stop", None, parse_json_text(last.response.text)
    return "succeeded", "stop", None, last.response.text


# Pydantic AI fences a ModelRetry message it sends as user text; the verdict's reason is inside.
_FENCE = re.compile(r"<pyai:retry_feedback>\n?(.*?)\n?</pyai:retry_feedback>", re.S)


def _unfenced(text: str) -> str:
    found = _FENCE.search(text)
    return found.group(1) if found else text


def _assistant(response: StepResponse) -> Message:
    return Message(
        role="assistant",
        content=response.text if response.text or not response.tool_calls else None,
        tool_calls=tuple(response.tool_calls) or None,
    )
