"""The agent turn loop: model calls, tools, validators, feedback, handlers (B1–B5).

``run_turn`` drives one turn against an injected ``Provider`` and publishes typed events to an
injected sink. It always returns a finished ``RunRecord``: provider errors, a broken user hook and
cancellation all end in a final status, and no step is ever left ``pending``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from inspector.core.errors import ProviderError
from inspector.core.events import (
    AttemptCleared,
    EventSink,
    FallbackUsed,
    FeedbackInjected,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    ToolExecuted,
    VerdictsReady,
    discard,
)
from inspector.core.handlers import (
    FallbackContext,
    FeedbackContext,
    HookError,
    build_custom_history,
    call_fallback,
    choose_handler,
    dump_verdicts,
    dumps,
    failure_kind,
)
from inspector.core.history import (
    Block,
    Work,
    compose_history,
    failed_attempt,
    feedback_text,
)
from inspector.core.loading import load_function
from inspector.core.messages import Message, ToolCall, assistant, tool_result
from inspector.core.output import (
    Candidate,
    output_as_text,
    plan_output,
    read_candidate,
)
from inspector.core.provider import Provider
from inspector.core.records import (
    Budgets,
    RunError,
    RunRecord,
    RunStatus,
    Step,
    StepResponse,
    Termination,
    ToolResult,
    Usage,
    Verdict,
)
from inspector.core.requests import build_request
from inspector.core.scenario import Scenario
from inspector.core.schema import schema_errors
from inspector.core.streaming import OpenStep, consume
from inspector.core.tools import RecordedResults, ToolBox
from inspector.core.validators import ValidationContext, compile_validators, judge_all

Clock = Callable[[], float]

EMPTY_VERDICT = "empty"
REFUSAL_VERDICT = "refusal"


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Finished(Exception):
    """Raised inside the loop to end the turn with the given outcome."""

    def __init__(
        self,
        status: RunStatus,
        termination: Termination,
        *,
        output: Any = None,
        error: RunError | None = None,
        fallback_trigger: Termination | None = None,
    ) -> None:
        super().__init__(termination)
        self.status = status
        self.termination = termination
        self.output = output
        self.error = error
        self.fallback_trigger = fallback_trigger


class Turn:
    """One turn's state. Built (and every user function loaded) before anything is emitted, so a
    broken scenario fails with ``ScenarioError`` and leaves no record behind."""

    def __init__(
        self,
        scenario: Scenario,
        provider: Provider,
        sink: EventSink = discard,
        *,
        run_id: str | None = None,
        replay_of: str | None = None,
        overrides: list[str] | None = None,
        recorded_tools: RecordedResults | None = None,
        clock: Clock = time.perf_counter,
        now: Callable[[], str] = _utc_now,
    ) -> None:
        self.scenario = scenario
        self.policy = policy = scenario.policy
        self.provider = provider
        self.emit = sink
        self.run_id = run_id or new_run_id()
        self.replay_of = replay_of
        self.overrides = list(overrides or [])
        self.clock = clock
        self.now = now
        base = scenario.base_dir
        self.tools = ToolBox(scenario.tools, base, recorded_tools)
        self.validators = compile_validators(scenario.validators, base, policy.validator_timeout_s)
        self.plan = plan_output(
            scenario.output, policy.output_mode, (t.name for t in scenario.tools)
        )
        self.builder = (
            load_function(policy.feedback_builder, base, "policy.feedback_builder")
            if policy.feedback_history == "custom"
            else None
        )
        self.fallback_fn = (
            load_function(policy.fallback_function, base, "policy.fallback_function")
            if policy.fallback_function
            else None
        )
        self.offered = list(self.tools.specs)
        if self.plan.final_tool is not None:
            self.offered.append(self.plan.final_tool)
        suffix = self.plan.system_suffix
        self.system = scenario.prompt.system + suffix if scenario.prompt.system else suffix.lstrip()
        self.opening: list[Message] = scenario.prompt.initial_messages()
        self.prefix: list[Message] = list(self.opening)  # a custom builder's history replaces it
        self.blocks: list[Block] = []
        self.history: list[Message] = list(self.prefix)
        self.transcript: list[Message] = list(self.prefix)
        self.steps: list[Step] = []
        self.attempt = 1
        self.usage = Usage()
        self.transport_retries = 0
        self.open: OpenStep | None = None
        self.last_output: Any = None
        self.last_verdicts: list[Verdict] = []
        # What the turn was handling when a user hook broke (the termination of an "error" run).
        self.trigger: Termination = "validator_exhausted"

    # ---- the turn ---------------------------------------------------------------------------

    async def run(self) -> RunRecord:
        started_at = self.now()
        t0 = self.clock()
        source = self.scenario.model_dump(mode="json", by_alias=True)
        self.emit(
            RunStarted(
                run_id=self.run_id,
                scenario=self.scenario.name,
                started_at=started_at,
                policy=self.policy,
                provider=self.provider.name,
                model=self.scenario.model.name,
                replay_of=self.replay_of,
                scenario_source=source,
                overrides=self.overrides,
            )
        )
        try:
            while True:
                await self._step()
        except _Finished as done:
            outcome = done
        except asyncio.CancelledError:
            self._close_open_step("cancelled", "cancelled")
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # handled: the turn ends as a cancelled record, not an exception
            outcome = _Finished(
                "cancelled",
                "cancelled",
                error=RunError(type="Cancelled", message="cancelled by the user"),
            )
        except HookError as exc:
            self._close_open_step("error", str(exc))
            error = RunError(type=exc.kind, message=str(exc))
            outcome = _Finished("error", self.trigger, error=error)
        except Exception as exc:
            # Not ours (a provider returning garbage, a bug): still a finished record, no step
            # left pending, and the error named in one line.
            in_call = self.open is not None and self.open.response is None
            message = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[-1]}"
            self._close_open_step("error", message)
            error = RunError(type=type(exc).__name__, message=message)
            outcome = _Finished("error", "provider_error" if in_call else self.trigger, error=error)
        record = RunRecord(
            run_id=self.run_id,
            scenario=self.scenario.name,
            started_at=started_at,
            duration_ms=round((self.clock() - t0) * 1000, 3),
            policy=self.policy,
            status=outcome.status,
            termination=outcome.termination,
            budgets=Budgets(
                attempts_used=self.attempt,
                max_attempts=self.policy.max_attempts,
                steps_used=len(self.steps),
                max_steps=self.policy.max_steps,
                transport_retries=self.transport_retries,
            ),
            output=outcome.output,
            error=outcome.error,
            usage=self.usage,
            replay_of=self.replay_of,
            steps=self.steps,
            transcript=self.transcript,
            provider=self.provider.name,
            model=self.scenario.model.name,
            fallback_trigger=outcome.fallback_trigger,
            scenario_source=source,
            overrides=self.overrides,
        )
        self.emit(RunFinished(run_id=self.run_id, record=record))
        return record

    async def _step(self) -> None:
        if len(self.steps) >= self.policy.max_steps:
            await self._handle("step_cap", self._cap_message())
        step = await self._call_model()
        response = step.response
        assert response is not None
        if response.refusal:
            verdict = Verdict.failed(
                REFUSAL_VERDICT, response.refusal, "Please answer the request."
            )
            self.emit(VerdictsReady(run_id=self.run_id, index=step.index, verdicts=[verdict]))
            await self._reject(step, assistant(response.refusal), None, [verdict], "refusal")
        elif not response.text.strip() and not response.tool_calls:
            await self._empty(step)
        else:
            candidate = read_candidate(self.plan, response)
            if candidate.present:
                await self._judge(step, candidate)
            else:
                await self._work(step)

    # ---- one model call -----------------------------------------------------------------------

    async def _call_model(self) -> Step:
        index = len(self.steps) + 1
        request, forced = build_request(
            index=index,
            system=self.system,
            history=self.history,
            offered=self.offered,
            plan=self.plan,
            has_user_tools=bool(self.tools.specs),
            policy=self.policy,
        )
        self.open = open_ = OpenStep(index, self.attempt, request, forced)
        started = StepStarted(
            run_id=self.run_id, index=index, attempt=self.attempt, request=request, forced=forced
        )
        self.emit(started)
        t0 = self.clock()
        try:
            completed = await consume(self.provider, open_, self.emit, self.run_id, self.clock)
        except ProviderError as exc:
            self.transport_retries += exc.transport_retries
            open_.response = StepResponse(text=exc.partial_text or "".join(open_.text))
            self._close_open_step("error", str(exc))
            error = RunError(type=exc.kind, message=str(exc))
            raise _Finished("error", "provider_error", error=error) from None
        if completed is None:
            open_.response = StepResponse(text="".join(open_.text))
            message = f"{self.provider.name}: the stream ended without a final response"
            self._close_open_step("error", message)
            error = RunError(type="ProviderError", message=message)
            raise _Finished("error", "provider_error", error=error)
        latency = round((self.clock() - t0) * 1000, 3)
        self.transport_retries += completed.transport_retries
        response = completed.response
        self.usage = self.usage + response.usage
        open_.response = response
        final_tool = self.plan.final_tool_name
        return Step.model_construct(
            index=index,
            attempt=self.attempt,
            status="success",
            request=request,
            response=response,
            tool_results=[],
            verdicts=[],
            feedback=[],
            forced=forced,
            cleared=False,
            internal_tool=final_tool is not None
            and any(c.name == final_tool for c in response.tool_calls),
            latency_ms=latency,
            ttft_ms=open_.ttft_ms if open_.ttft_ms is not None else latency,
            error=None,
            raw=completed.raw,
        )

    def _finish_step(self, step: Step) -> None:
        """The one place a step becomes final: appended to the record and published."""
        self.steps.append(step)
        self.open = None
        self.emit(StepFinished(run_id=self.run_id, step=step))

    def _close_open_step(self, status: str, error: str | None) -> None:
        open_ = self.open
        if open_ is None:
            return
        step = Step.model_validate(
            {
                "index": open_.index,
                "attempt": open_.attempt,
                "status": status,
                "request": open_.request,
                "response": open_.response or StepResponse(text="".join(open_.text)),
                "tool_results": open_.tool_results,
                "verdicts": open_.verdicts,
                "forced": open_.forced,
                "error": error if status == "error" else None,
            }
        )
        self._finish_step(step)

    # ---- what a response leads to ---------------------------------------------------------------

    async def _work(self, step: Step) -> None:
        """Tool calls and no candidate output: run the tools, continue the conversation."""
        response = step.response
        assert response is not None
        calls = [c.model_dump() for c in response.tool_calls]
        verdicts, stopped = await self._judge_every_step(step, response.text, calls)
        if stopped:
            # The pending tool calls are not run. The turn succeeds only with an output to keep.
            ok = all(v.ok for v in verdicts)
            status = "success" if ok else "failed_validation"
            self._finish_step(step.model_copy(update={"verdicts": verdicts, "status": status}))
            if ok and response.text.strip():
                self.transcript.append(assistant(response.text))
                raise _Finished("succeeded", "validator_stop", output=response.text)
            reason = _reasons(verdicts) if not ok else "stopped before any output"
            error = RunError(type="ValidatorStop", message=reason)
            raise _Finished("failed", "validator_stop", error=error)
        if step.index >= self.policy.max_steps:
            # Nobody would ever see these results: the turn cannot call the model again.
            self._finish_step(step.model_copy(update={"verdicts": verdicts}))
            await self._handle("step_cap", self._cap_message(step))
        results: list[ToolResult] = []
        for call in response.tool_calls:
            result = await self.tools.execute(call)
            results.append(result)
            assert self.open is not None
            self.open.tool_results.append(result)
            self.emit(ToolExecuted(run_id=self.run_id, index=step.index, result=result))
        messages = (
            assistant(response.text or None, tuple(response.tool_calls)),
            *(tool_result(r.tool_call_id, r.content, r.name) for r in results),
        )
        self.blocks.append(Work(messages))
        self.history.extend(messages)
        self.transcript.extend(messages)
        self._finish_step(step.model_copy(update={"tool_results": results, "verdicts": verdicts}))

    async def _judge_every_step(
        self, step: Step, text: str, calls: list[dict[str, Any]]
    ) -> tuple[list[Verdict], bool]:
        if not any(v.spec.when == "every_step" for v in self.validators):
            return [], False
        ctx = self._ctx(step, calls)
        verdicts = await judge_all(self.validators, text, ctx, when="every_step")
        self.emit(VerdictsReady(run_id=self.run_id, index=step.index, verdicts=verdicts))
        return verdicts, ctx.stopped

    def _ctx(self, step: Step, calls: list[dict[str, Any]] | None = None) -> ValidationContext:
        return ValidationContext(
            attempt=self.attempt,
            step=step.index,
            messages=step.request.messages,
            pending_tool_calls=calls or [],
            scenario=self.scenario.name,
        )

    async def _judge(self, step: Step, candidate: Candidate) -> None:
        response = step.response
        assert response is not None
        stopped = False
        if candidate.problem is not None:
            verdicts = [candidate.problem]  # user validators only see schema-valid output
        else:
            ctx = self._ctx(step)
            verdicts = await judge_all(self.validators, candidate.value, ctx)
            stopped = ctx.stopped
        if self.open is not None:
            self.open.verdicts = verdicts
        self.emit(VerdictsReady(run_id=self.run_id, index=step.index, verdicts=verdicts))
        self.last_output = candidate.value
        if all(v.ok for v in verdicts):
            self.transcript.append(assistant(output_as_text(candidate.value)))
            self._finish_step(step.model_copy(update={"verdicts": verdicts}))
            raise _Finished(
                "succeeded", "validator_stop" if stopped else "stop", output=candidate.value
            )
        if candidate.final_call is not None:
            message = assistant(response.text or None, tuple(response.tool_calls))
        else:
            message = assistant(response.text)
        await self._reject(
            step, message, candidate.final_call, verdicts, "validator_exhausted", stopped=stopped
        )

    async def _empty(self, step: Step) -> None:
        """B4: an empty final reply is a first-class step, always finalized."""
        step = step.model_copy(update={"status": "empty"})
        mode = self.policy.on_empty_final
        if mode == "finalize":
            self.transcript.append(assistant(""))
            self._finish_step(step)
            output = "" if self.plan.schema is None else None
            raise _Finished("succeeded", "empty_final", output=output)
        if mode == "error":
            self._finish_step(step)
            reason = step.response.finish_reason if step.response else None
            message = f"step {step.index} returned no content (finish_reason {reason})"
            raise _Finished(
                "failed", "empty_final", error=RunError(type="EmptyFinal", message=message)
            )
        verdict = Verdict.failed(
            EMPTY_VERDICT,
            "empty reply: no text and no tool calls",
            "Your reply was empty. Answer the user.",
        )
        self.emit(VerdictsReady(run_id=self.run_id, index=step.index, verdicts=[verdict]))
        await self._reject(step, None, None, [verdict], "empty_final")

    async def _reject(
        self,
        step: Step,
        message: Message | None,
        judged_call: ToolCall | None,
        verdicts: list[Verdict],
        trigger: Termination,
        *,
        stopped: bool = False,
    ) -> None:
        """A candidate was not accepted: clear it, then retry with feedback or hand over."""
        status = "empty" if step.status == "empty" else "failed_validation"
        cleared = self.policy.clear_failed_attempts and message is not None
        step = step.model_copy(update={"status": status, "verdicts": verdicts, "cleared": cleared})
        self.last_verdicts = verdicts
        if cleared:
            self.emit(AttemptCleared(run_id=self.run_id, index=step.index, attempt=self.attempt))
        elif message is not None:
            self.transcript.append(
                assistant(output_as_text(self.last_output) if judged_call else message.content)
            )
        if stopped:
            self._finish_step(step)
            raise _Finished(
                "failed",
                "validator_stop",
                error=RunError(type="ValidatorStop", message=_reasons(verdicts)),
            )
        if trigger == "refusal" and self.policy.on_refusal != "retry":
            self._finish_step(step)
            await self._handle("refusal", (message and message.content) or "refused")
        if self.attempt >= self.policy.max_attempts:
            self._finish_step(step)
            await self._handle(trigger, self._exhausted_message(verdicts))
        if len(self.steps) + 1 >= self.policy.max_steps:
            self._finish_step(step)
            await self._handle("step_cap", self._cap_message())
        self.trigger = trigger
        text = feedback_text(verdicts)
        feedback = self._next_history(step, message, judged_call, text, verdicts)
        step = step.model_copy(update={"feedback": feedback})
        self.emit(FeedbackInjected(run_id=self.run_id, index=step.index, messages=feedback))
        if not self.policy.clear_failed_attempts and self.policy.feedback_role != "tool":
            self.transcript.extend(feedback)
        self._finish_step(step)
        self.attempt += 1

    def _next_history(
        self,
        step: Step,
        message: Message | None,
        judged_call: ToolCall | None,
        text: str,
        verdicts: list[Verdict],
    ) -> list[Message]:
        block = failed_attempt(self.attempt, message, judged_call, text, self.policy)
        if self.builder is None:
            self.blocks.append(block)
            self.history = compose_history(self.prefix, self.blocks, self.policy)
            return list(block.feedback)
        seen = [*step.request.messages, *block.candidate]
        default_next = [*seen, *block.feedback]
        ctx = FeedbackContext(
            attempt=self.attempt,
            step=step.index,
            history=dumps(step.request.messages),
            candidate=message.model_dump() if message else None,
            verdicts=dump_verdicts(verdicts),
            feedback=text,
            default_next=dumps(default_next),
            prefix=dumps(self.opening),
        )
        built = build_custom_history(self.builder, ctx)
        # The builder owns the history from here: it becomes the prefix of what follows.
        self.prefix, self.blocks, self.history = list(built), [], list(built)
        common = 0
        for a, b in zip(built, seen, strict=False):
            if a != b:
                break
            common += 1
        return built[common:]

    # ---- handlers (B5) -------------------------------------------------------------------------

    def _exhausted_message(self, verdicts: list[Verdict]) -> str:
        n = self.attempt
        return (
            f"no acceptable output after {n} attempt{'s' if n != 1 else ''}: {_reasons(verdicts)}"
        )

    def _cap_message(self, last: Step | None = None) -> str:
        message = (
            f"step cap reached: {self.policy.max_steps} model calls without an accepted answer"
        )
        calls = last.response.tool_calls if last and last.response else []
        if last and last.forced and last.forced.instruction_appended and calls:
            names = ", ".join(sorted({c.name for c in calls}))
            choice = last.forced.tool_choice
            message += (
                f"; on the last step the model called {names} despite tool_choice "
                f"{choice!r} (not executed)"
            )
        return message

    async def _handle(self, trigger: Termination, message: str) -> None:
        """Retries are over: the matching handler raises (status failed) or supplies a fallback."""
        policy = self.policy
        if choose_handler(trigger, policy) == "raise":
            error = RunError(type=failure_kind(trigger), message=message)
            raise _Finished("failed", trigger, error=error)
        self.trigger = trigger
        value = policy.fallback
        if self.fallback_fn is not None:
            ctx = FallbackContext(
                trigger=trigger,
                attempts=self.attempt,
                steps=len(self.steps),
                last_output=self.last_output,
                verdicts=dump_verdicts(self.last_verdicts),
                history=dumps(self.history),
            )
            value = call_fallback(self.fallback_fn, ctx)
        if self.plan.schema is not None:
            problems = schema_errors(self.plan.schema, value)
            if problems:
                error = RunError(
                    type="InvalidFallback",
                    message=f"the fallback does not match the output schema: {problems[0]}",
                )
                raise _Finished("error", trigger, error=error)
        self.emit(FallbackUsed(run_id=self.run_id, value=value, trigger=trigger))
        if policy.fallback_in_history:
            self.transcript.append(assistant(output_as_text(value)))
        raise _Finished("fallback", "fallback", output=value, fallback_trigger=trigger)


def _reasons(verdicts: list[Verdict]) -> str:
    return "; ".join(f"{v.validator}: {v.reason}" for v in verdicts if not v.ok) or "rejected"


async def run_turn(
    scenario: Scenario,
    provider: Provider,
    sink: EventSink = discard,
    **kwargs: Any,
) -> RunRecord:
    """Runs one turn and returns its finished record (see ``Turn`` for the keyword arguments)."""
    return await Turn(scenario, provider, sink, **kwargs).run()
