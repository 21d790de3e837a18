"""How a turn ends when no candidate is accepted, and the user code the loop calls besides
validators: which handler ends it and with what (B5), the fallback and its checks, the custom
feedback builder (B1), and event subscribers — each failure contained. Pure where possible."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from inspector.core.errors import InspectorError
from inspector.core.messages import Message, ToolCall
from inspector.core.policy import Policy
from inspector.core.records import RunError, RunStatus, Step, Termination, ToolResult, Verdict
from inspector.core.schema import schema_errors
from inspector.core.verdict_policy import broken_message
from inspector.core.worker import pool
from inspector.core.worker.contexts import FallbackContext
from inspector.core.worker.protocol import Reply, Target

# Why a tool call the model made was never run (``tool_results[].error`` = "not executed: ...").
SKIPPED_AT_CAP = "step cap reached"
SKIPPED_BY_STOP = "stopped by a validator"
SKIPPED_BESIDE_FINAL = "the final answer was given in the same reply"
EMPTY_REPLY = Verdict.failed(  # B4: the verdict on an empty reply that is retried
    "empty", "empty reply: no text and no tool calls", "Your reply was empty. Answer the user."
)


def refusal_verdict(refusal: str) -> Verdict:
    """The verdict on a refusal: it rejects the reply, and asks for an answer if retried."""
    return Verdict.failed("refusal", refusal, "Please answer the request.")


class Finished(Exception):
    """Raised inside the loop to end the turn with the given outcome."""

    def __init__(
        self,
        status: RunStatus,
        termination: Termination,
        *,
        output: Any = None,
        error: RunError | None = None,
        fallback_trigger: Termination | None = None,
        captured: str = "",
    ) -> None:
        super().__init__(termination)
        self.captured = captured  # what a fallback function printed
        self.status = status
        self.termination = termination
        self.output = output
        self.error = error
        self.fallback_trigger = fallback_trigger


class HookError(InspectorError):
    """A user hook raised or returned something unusable; the run ends with status ``error``."""

    def __init__(self, kind: str, message: str, captured: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.captured = captured  # what the hook printed before it broke


def hook_error(kind: str, hook: str, reply: Reply) -> HookError:
    """A user hook's call that failed: it raised (``feedback_builder raised ValueError: x``),
    timed out or ended its worker (``fallback_function: timed out after 5 s``)."""
    assert reply.error is not None
    how = ":" if reply.ended or reply.load_failed else " raised"
    return HookError(kind, f"{hook}{how} {reply.error}", reply.captured)


async def call_fallback(target: Target, ctx: FallbackContext, timeout_s: float) -> Reply:
    """The fallback function's reply (its value and what it printed); ``HookError`` if it
    failed."""
    reply = await pool.call(target, (ctx,), {}, timeout_s)
    if reply.error is not None:
        raise hook_error("FallbackError", "fallback_function", reply)
    return reply


def fallback_problem(value: Any, schema: dict[str, Any] | None) -> str | None:
    """Why ``value`` cannot be the turn's output, or None. A fallback is present (not None), a
    string for a plain-text turn, JSON (it goes into the record as is) and, with an output
    schema, matches it."""
    if value is None:
        return "the fallback is empty (None)"
    if schema is None and not isinstance(value, str):
        return f"a plain-text turn needs a string fallback, got {type(value).__name__}"
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"the fallback is not JSON-serializable: {exc}"
    problems = schema_errors(schema, value) if schema is not None else []
    if problems:
        return f"the fallback does not match the output schema: {problems[0]}"
    return None


def dumps(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.model_dump() for m in messages]


def dump_verdicts(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    return [v.model_dump() for v in verdicts]


def after_rejection(
    trigger: Termination,
    verdicts: Sequence[Verdict],
    *,
    stopped: bool,
    attempt: int,
    index: int,
    policy: Policy,
    refusal: str | None = None,
) -> tuple[Termination, str] | None:
    """What follows a rejected candidate: None when a retry does, else what ends the turn and
    why, checked in this order: ``ctx.stop()``, a refusal that is not retried, the last attempt
    (``trigger``: validator_exhausted, empty_final or refusal), the last allowed step."""
    if stopped:
        return "validator_stop", reasons(verdicts)
    if trigger == "validator_error" and policy.on_validator_error == "fail":
        return trigger, broken_message(verdicts)
    if trigger == "refusal" and policy.on_refusal != "retry":
        return "refusal", refusal or "refused"
    if attempt >= policy.max_attempts:
        if trigger == "validator_error":
            return trigger, broken_message(verdicts)
        return trigger, exhausted_message(attempt, verdicts)
    if index >= policy.max_steps:
        return "step_cap", cap_message(policy.max_steps)
    return None


def choose_handler(trigger: Termination, policy: Policy) -> Literal["raise", "fallback"]:
    """Which handler ends a turn whose retries are over (B5): the step-cap handler for the cap,
    the refusal handler for a refusal it does not retry, the invalid-output handler otherwise.
    ``ctx.stop()`` is final: it always raises."""
    if trigger == "validator_stop":
        return "raise"
    if trigger == "step_cap":
        return policy.on_step_cap
    if trigger == "refusal" and policy.on_refusal != "retry":
        return "fallback" if policy.on_refusal == "fallback" else "raise"
    return policy.on_invalid_output


def failure_kind(trigger: Termination) -> str:
    """The ``error.type`` of a turn a handler ended with ``raise``."""
    kinds = {
        "step_cap": "StepCapReached",
        "refusal": "Refusal",
        "empty_final": "EmptyFinal",
        "validator_stop": "ValidatorStop",
    }
    return kinds.get(trigger, "ValidatorExhausted")


async def hand_over(
    trigger: Termination,
    message: str,
    policy: Policy,
    schema: dict[str, Any] | None,
    fallback_fn: Target | None,
    ctx: FallbackContext,
) -> Finished:
    """How the matching handler ends the turn: ``failed`` with the reason (``raise``), the
    fallback (``fallback_function(ctx)`` when there is one, else ``policy.fallback``), or
    ``error`` / ``InvalidFallback`` when that value cannot be an output."""
    if trigger == "validator_error":
        # Something broke, not the model: no fallback hides it (docs/engine.md).
        return Finished("error", trigger, error=RunError(type="ValidatorError", message=message))
    if choose_handler(trigger, policy) == "raise":
        return Finished(
            "failed", trigger, error=RunError(type=failure_kind(trigger), message=message)
        )
    value, captured = policy.fallback, ""
    if fallback_fn is not None:
        reply = await call_fallback(fallback_fn, ctx, policy.validator_timeout_s)
        value, captured = reply.value, reply.captured
    problem = fallback_problem(value, schema)
    if problem is not None:
        error = RunError(type="InvalidFallback", message=problem)
        return Finished("error", trigger, error=error, captured=captured)
    return Finished(
        "fallback", "fallback", output=value, fallback_trigger=trigger, captured=captured
    )


def stopped_on_work(verdicts: Sequence[Verdict], text: str, *, ok: bool) -> Finished:
    """``ctx.stop()`` from an ``every_step`` validator on a tool-call step: the turn succeeds
    only when the verdicts accept the step (``ok``: ``verdict_policy.decide``, so an ignored
    validator error does not block it) and the step has text to keep as the output."""
    if ok and text.strip():
        return Finished("succeeded", "validator_stop", output=text)
    reason = reasons(verdicts) if not ok else "stopped before any output"
    return Finished(
        "failed", "validator_stop", error=RunError(type="ValidatorStop", message=reason)
    )


def empty_final(step: Step, policy: Policy, *, structured: bool) -> Finished | None:
    """B4: how an empty reply ends the turn — accepted (``finalize``: output ``""``, or None with
    an output schema) or failed (``error``) — or None when it is retried as a failed attempt."""
    if policy.on_empty_final == "finalize":
        return Finished("succeeded", "empty_final", output=None if structured else "")
    if policy.on_empty_final == "error":
        reason = step.response.finish_reason if step.response else None
        message = f"step {step.index} returned no content (finish_reason {reason})"
        return Finished("failed", "empty_final", error=RunError(type="EmptyFinal", message=message))
    return None


def reasons(verdicts: Sequence[Verdict]) -> str:
    """The failing verdicts as ``validator: reason``, joined by ``; ``."""
    return "; ".join(f"{v.validator}: {v.reason}" for v in verdicts if not v.ok) or "rejected"


def exhausted_message(attempts: int, verdicts: Sequence[Verdict]) -> str:
    plural = "s" if attempts != 1 else ""
    return f"no acceptable output after {attempts} attempt{plural}: {reasons(verdicts)}"


def cap_message(max_steps: int, last: Step | None = None) -> str:
    """Why the step cap ended the turn; names the tools a forced last step called anyway."""
    message = f"step cap reached: {max_steps} model calls without an accepted answer"
    calls = last.response.tool_calls if last and last.response else []
    if last and last.forced and last.forced.instruction_appended and calls:
        names = ", ".join(sorted({c.name for c in calls}))
        message += (
            f"; on the last step the model called {names} despite tool_choice "
            f"{last.forced.tool_choice!r} (not executed)"
        )
    return message


def not_executed(calls: Sequence[ToolCall], reason: str) -> list[ToolResult]:
    """The trace a tool call leaves when it is never run: no content, the reason as the error."""
    error = f"not executed: {reason}"
    return [ToolResult(tool_call_id=c.id, name=c.name, content="", error=error) for c in calls]
