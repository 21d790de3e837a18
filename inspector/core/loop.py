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
from typing import Any, NoReturn

from inspector.core.credentials import redact_override
from inspector.core.errors import ProviderError, last_line, message_line
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
    isolate,
)
from inspector.core.handlers import (
    EMPTY_REPLY,
    SKIPPED_AT_CAP,
    SKIPPED_BESIDE_FINAL,
    SKIPPED_BY_STOP,
    Finished,
    HookError,
    after_rejection,
    cap_message,
    dump_verdicts,
    dumps,
    empty_final,
    hand_over,
    not_executed,
    refusal_verdict,
    stopped_on_work,
)
from inspector.core.history import Conversation, effective_policy, policy_notes
from inspector.core.messages import Message, ToolCall, assistant, tool_result
from inspector.core.output import Candidate, output_as_text, read_candidate, scenario_plan
from inspector.core.provider import Provider, system_in_conversation
from inspector.core.records import (
    Budgets,
    RunError,
    RunRecord,
    Step,
    StepResponse,
    Termination,
    Usage,
    Verdict,
)
from inspector.core.requests import build_request
from inspector.core.scenario import Scenario
from inspector.core.streaming import OpenStep, consume
from inspector.core.tools import RecordedResults, ToolBox
from inspector.core.transcript import settle_failed_attempt
from inspector.core.validators import ValidationContext, compile_validators, judge_all
from inspector.core.verdict_policy import decide
from inspector.core.worker import pool
from inspector.core.worker.contexts import FallbackContext
from inspector.core.worker.protocol import Target

Clock = Callable[[], float]


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


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
        self.policy = policy = effective_policy(scenario.policy, system_in_conversation(provider))
        self.notes = policy_notes(scenario.policy, policy)
        self.provider = provider
        self.emit = isolate(sink)  # a subscriber that raises is detached
        self.run_id = run_id or new_run_id()
        self.replay_of = replay_of
        self.overrides = [redact_override(text) for text in overrides or []]
        self.clock = clock
        self.now = now
        base = scenario.base_dir
        source = scenario.source
        self.tools = ToolBox(
            scenario.tools, base, recorded_tools, source=source, timeout_s=policy.tool_timeout_s
        )
        self.validators = compile_validators(
            scenario.validators,
            base,
            policy.validator_timeout_s,
            source=source,
            tool_names=[t.name for t in scenario.tools],
        )
        self.plan = scenario_plan(scenario)
        self.builder = (
            Target(policy.feedback_builder, str(base), f"{source}: policy.feedback_builder")
            if policy.feedback_history == "custom"
            else None
        )
        self.fallback_fn = (
            Target(policy.fallback_function, str(base), f"{source}: policy.fallback_function")
            if policy.fallback_function
            else None
        )
        pool.check([t for t in (self.builder, self.fallback_fn) if t is not None])
        self.every_step = any(v.spec.when == "every_step" for v in self.validators)
        self.offered = list(self.tools.specs)
        if self.plan.final_tool is not None:
            self.offered.append(self.plan.final_tool)
        suffix = self.plan.system_suffix
        self.system = scenario.prompt.system + suffix if scenario.prompt.system else suffix.lstrip()
        opening = scenario.prompt.initial_messages()
        # What the model sees, and what the end user's conversation keeps.
        names = {t.name for t in self.offered}
        self.conversation = Conversation(opening, policy, self.builder, names)
        self.transcript: list[Message] = list(opening)
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
        header: dict[str, Any] = {  # what RunStarted announces and the record repeats
            "run_id": self.run_id,
            "scenario": self.scenario.name,
            "started_at": self.now(),
            "policy": self.policy,
            "provider": self.provider.name,
            "model": self.scenario.model.name,
            "replay_of": self.replay_of,
            "scenario_source": self.scenario.model_dump(mode="json", by_alias=True),
            "scenario_dir": str(self.scenario.base_dir.resolve()),
            "scenario_origin": self.scenario.source,
            "overrides": self.overrides,
            "notes": self.notes,
        }
        t0 = self.clock()
        self.emit(RunStarted(**header))
        try:
            while True:
                await self._step()
        except Finished as done:
            outcome = done
        except asyncio.CancelledError:
            self._close_open_step("cancelled", "cancelled")
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # handled: the turn ends as a cancelled record, not an exception
            error = RunError(type="Cancelled", message="cancelled by the user")
            outcome = Finished("cancelled", "cancelled", error=error)
        except ProviderError as exc:
            # Raised outside a model call: a replay's side-effect tool call never recorded.
            self._close_open_step("error", str(exc))
            outcome = Finished(
                "error", "provider_error", error=RunError(type=exc.kind, message=str(exc))
            )
        except HookError as exc:
            self._close_open_step("error", str(exc))
            error = RunError(type=exc.kind, message=str(exc))
            outcome = Finished("error", self.trigger, error=error)
        except Exception as exc:
            # Not ours (a provider returning garbage, a bug): still a finished record, no step
            # left pending, and the error in one line (the type is in error.type, not repeated).
            in_call = self.open is not None and self.open.response is None
            self._close_open_step("error", last_line(exc))
            text = message_line(exc) or "(no message)"
            error = RunError(type=type(exc).__name__, message=text)
            outcome = Finished("error", "provider_error" if in_call else self.trigger, error=error)
        record = RunRecord(
            **header,
            duration_ms=round((self.clock() - t0) * 1000, 3),
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
            steps=self.steps,
            transcript=self.transcript,
            fallback_trigger=outcome.fallback_trigger,
        )
        self.emit(RunFinished(run_id=self.run_id, record=record))
        return record

    async def _step(self) -> None:
        # No step-cap check here: a step on the last allowed index always ends the turn.
        step = await self._call_model()
        response = step.response
        assert response is not None
        if response.refusal:
            verdicts = [refusal_verdict(response.refusal)]
            self.emit(VerdictsReady(run_id=self.run_id, index=step.index, verdicts=verdicts))
            await self._reject(step, assistant(response.refusal), None, verdicts, "refusal")
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
            history=self.conversation.messages,
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
            self._call_failed(exc.kind, str(exc), exc.partial_text)
        if completed is None:
            message = f"{self.provider.name}: the stream ended without a final response"
            self._call_failed("ProviderError", message)
        latency = round((self.clock() - t0) * 1000, 3)
        self.transport_retries += completed.transport_retries
        response = completed.response
        self.usage = self.usage + response.usage
        open_.response = response
        final_tool = self.plan.final_tool_name
        # Every field given: model_construct fills a missing default_factory field slowly (an
        # inspect.signature call each), which showed as ~0.4 ms per step in bench/engine.py.
        return Step.model_construct(
            index=index,
            attempt=self.attempt,
            status="success",
            request=request,
            response=response,
            tool_results=[],
            verdicts=[],
            feedback=[],
            cleared=False,
            error=None,
            forced=forced,
            internal_tool=final_tool is not None
            and any(c.name == final_tool for c in response.tool_calls),
            latency_ms=latency,
            ttft_ms=open_.ttft_ms if open_.ttft_ms is not None else latency,
            raw=completed.raw,
        )

    def _call_failed(self, kind: str, message: str, partial_text: str = "") -> NoReturn:
        """The model call failed: its step ends ``error`` (keeping the text received), the turn
        ``provider_error``."""
        assert self.open is not None
        self.open.response = StepResponse(text=partial_text or "".join(self.open.text))
        self._close_open_step("error", message)
        raise Finished("error", "provider_error", error=RunError(type=kind, message=message))

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
        calls = response.tool_calls
        if self.every_step:
            ctx = self._ctx(step, [c.model_dump() for c in calls])
            verdicts = await judge_all(self.validators, response.text, ctx, when="every_step")
            self.emit(VerdictsReady(run_id=self.run_id, index=step.index, verdicts=verdicts))
            step = step.model_copy(update={"verdicts": verdicts})
            if ctx.stopped:  # the pending tool calls are not run
                accepted = decide(verdicts, self.policy.on_validator_error) == "accept"
                end = stopped_on_work(verdicts, response.text, ok=accepted)
                status = "success" if accepted else "failed_validation"
                update = {"status": status, "tool_results": not_executed(calls, SKIPPED_BY_STOP)}
                self._finish_step(step.model_copy(update=update))
                if end.status == "succeeded":
                    self.transcript.append(assistant(response.text))
                raise end
        if step.index >= self.policy.max_steps:
            # Nobody would ever see these results: the turn cannot call the model again.
            skipped = not_executed(calls, SKIPPED_AT_CAP)
            self._finish_step(step.model_copy(update={"tool_results": skipped}))
            message = cap_message(self.policy.max_steps, step)
            self._end(await self._hand_over("step_cap", message, step))
        assert self.open is not None
        results = self.open.tool_results  # what a cancelled step keeps, too
        for call in calls:
            result = await self.tools.execute(call)
            results.append(result)
            self.emit(ToolExecuted(run_id=self.run_id, index=step.index, result=result))
        messages = (
            assistant(response.text or None, tuple(calls)),
            *(tool_result(r.tool_call_id, r.content, r.name) for r in results),
        )
        self.conversation.add_work(messages)
        self.transcript.extend(messages)
        self._finish_step(step.model_copy(update={"tool_results": results}))

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
        # The user tool calls beside a final-answer call never run, accepted or not.
        beside = [c for c in response.tool_calls if c.name != self.plan.final_tool_name]
        skipped = not_executed(beside, SKIPPED_BESIDE_FINAL)
        step = step.model_copy(update={"verdicts": verdicts, "tool_results": skipped})
        decision = decide(verdicts, self.policy.on_validator_error)
        if decision == "accept":
            self.transcript.append(assistant(output_as_text(candidate.value)))
            self._finish_step(step)
            raise Finished(
                "succeeded", "validator_stop" if stopped else "stop", output=candidate.value
            )
        # Only a final-answer reply has tool calls here (with them, a reply is a work step).
        message = assistant(response.text or None, tuple(response.tool_calls))
        trigger: Termination = "validator_exhausted" if decision == "reject" else "validator_error"
        await self._reject(step, message, candidate.final_call, verdicts, trigger, stopped=stopped)

    async def _empty(self, step: Step) -> None:
        """B4: an empty final reply is a first-class step, always finalized."""
        step = step.model_copy(update={"status": "empty"})
        end = empty_final(step, self.policy, structured=self.plan.schema is not None)
        if end is not None:
            if end.status == "succeeded":
                self.transcript.append(assistant(""))
            self._finish_step(step)
            raise end
        self.emit(VerdictsReady(run_id=self.run_id, index=step.index, verdicts=[EMPTY_REPLY]))
        await self._reject(step, None, None, [EMPTY_REPLY], "empty_final")

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
        """A candidate was not accepted. What follows is decided first — a retry with feedback,
        or a handler that ends the turn — then the attempt is settled: cleared only when a retry
        or a fallback replaces it, otherwise kept in the transcript as what the user saw last."""
        status = "empty" if step.status == "empty" else "failed_validation"
        if trigger == "validator_error":
            status = "validator_error"
        step = step.model_copy(update={"status": status, "verdicts": verdicts})
        self.last_verdicts = verdicts
        shown = None
        if message is not None:
            shown = output_as_text(self.last_output) if judged_call else message.content
        feedback: list[Message] | None = None
        end: Finished | None = None
        captured = ""  # what a feedback builder or fallback function printed
        try:
            ending = after_rejection(
                trigger,
                verdicts,
                stopped=stopped,
                attempt=self.attempt,
                index=step.index,
                policy=self.policy,
                refusal=message.content if message else None,
            )
            if ending is not None:
                end = await self._hand_over(*ending, step)
                captured = end.captured
            else:
                self.trigger = trigger
                self.conversation.captured = ""
                feedback = await self.conversation.add_failure(
                    self.attempt, step.index, message, judged_call, verdicts
                )
                captured = self.conversation.captured
        except HookError as exc:
            self._settle(step, shown, None, replaced=False, captured=exc.captured)
            raise
        replaced = end is None or end.status == "fallback"
        self._settle(step, shown, feedback, replaced=replaced, captured=captured)
        if end is not None:
            self._end(end)
        self.attempt += 1

    def _settle(
        self,
        step: Step,
        shown: str | None,
        feedback: list[Message] | None,
        *,
        replaced: bool,
        captured: str = "",
    ) -> None:
        """Applies the clearing rule to a rejected step and finishes it (``feedback``: None when
        no retry follows)."""
        settled = settle_failed_attempt(shown, feedback, replaced=replaced, policy=self.policy)
        if settled.cleared:
            self.emit(AttemptCleared(run_id=self.run_id, index=step.index, attempt=self.attempt))
        self.transcript.extend(settled.transcript)
        if feedback is not None:
            self.emit(FeedbackInjected(run_id=self.run_id, index=step.index, messages=feedback))
        update: dict[str, Any] = {"cleared": settled.cleared, "feedback": feedback or []}
        if captured:
            update["captured"] = captured
        self._finish_step(step.model_copy(update=update))

    # ---- handlers (B5) -------------------------------------------------------------------------

    async def _hand_over(self, trigger: Termination, message: str, step: Step) -> Finished:
        """The outcome of the handler for ``trigger`` (nothing is published until ``_end``)."""
        self.trigger = trigger
        ctx = FallbackContext(
            trigger=trigger,
            attempts=self.attempt,
            steps=step.index,
            last_output=self.last_output,
            verdicts=dump_verdicts(self.last_verdicts),
            history=dumps(self.conversation.messages),
        )
        return await hand_over(
            trigger, message, self.policy, self.plan.schema, self.fallback_fn, ctx
        )

    def _end(self, outcome: Finished) -> NoReturn:
        """Ends the turn; a fallback is published (and kept in the transcript if asked) here."""
        if outcome.status == "fallback":
            trigger = str(outcome.fallback_trigger)
            self.emit(FallbackUsed(run_id=self.run_id, value=outcome.output, trigger=trigger))
            if self.policy.fallback_in_history:
                self.transcript.append(assistant(output_as_text(outcome.output)))
        raise outcome


async def run_turn(
    scenario: Scenario,
    provider: Provider,
    sink: EventSink = discard,
    **kwargs: Any,
) -> RunRecord:
    """Runs one turn and returns its finished record (see ``Turn`` for the keyword arguments)."""
    return await Turn(scenario, provider, sink, **kwargs).run()
