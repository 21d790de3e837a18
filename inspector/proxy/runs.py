"""The proxy's open runs: each call placed in a run (``grouping.place``), published as the
engine's own events — ``RunStarted``, ``StepStarted`` before the request goes upstream, deltas
as the reply streams, ``StepFinished``, ``RunFinished`` when the run goes idle — so the store
and any view record and show a proxied run exactly like an engine run.

A final answer's step is held open until the client's next move shows what became of it: a new
attempt (the answer was rejected; the messages the client added are the step's feedback), any
other call, or the run going idle (the answer stood). Its verdicts are published as it arrives.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspector.core import credentials
from inspector.core.events import (
    EventSink,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
    VerdictsReady,
)
from inspector.core.messages import Message
from inspector.core.policy import Policy
from inspector.core.provider import ProviderChunk, ReasoningChunk, TextChunk, ToolCallChunk
from inspector.core.records import (
    Budgets,
    RawExchange,
    RunRecord,
    Step,
    StepRequest,
    StepResponse,
    StepStatus,
    Usage,
    Verdict,
)
from inspector.core.scenario import Scenario
from inspector.core.validators import Validator, compile_validators
from inspector.proxy.grouping import Key, OpenRun, keys_of, message_key, place
from inspector.proxy.normalize import Api, reply_message
from inspector.proxy.outcome import is_final_answer, run_outcome, step_status
from inspector.proxy.scenario import SCENARIO_NAME, proxy_scenario
from inspector.proxy.verdicts import ValidatorFile, judge_reply

__all__ = ["Call", "RunBook"]

VIA = "proxy"


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class _Run:
    run_id: str
    header: str | None
    api: Api
    model: str
    started_at: str
    t0: float
    source: dict[str, Any]  # the recorded scenario source (what revalidate loads)
    scenario: Scenario
    validators: list[Validator]
    last_seen: float
    steps: dict[int, Step] = field(default_factory=dict)
    next_index: int = 1
    attempt: int = 1
    calls: list[Call] = field(default_factory=list)  # in flight
    sent: tuple[Key, ...] = ()
    reply: Key | None = None
    final: bool = False
    held: Step | None = None  # a final answer waiting for the client's next move
    last_request: StepRequest | None = None
    last_reply: Message | None = None

    def history(self) -> tuple[Key, ...]:
        """What a call continuing this run starts with: its last request and that reply."""
        return self.sent + ((self.reply,) if self.reply is not None else ())

    def view(self) -> OpenRun:
        return OpenRun(
            self.run_id, self.header, self.sent, self.reply, self.final,
            bool(self.calls), self.last_seen,
        )  # fmt: skip


@dataclass
class Call:
    """One proxied call in flight."""

    run: _Run
    index: int
    attempt: int
    request: StepRequest
    keys: tuple[Key, ...]
    started: float
    first_byte: float | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)  # recorded, run state updated
    secrets: tuple[str, ...] = ()  # the credentials the call carries upstream, to scrub


class RunBook:
    def __init__(
        self,
        sink: EventSink,
        *,
        upstreams: dict[Api, str],
        validators: ValidatorFile | None = None,
        validator_timeout_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], str] = _utc_now,
    ) -> None:
        self.sink = sink
        self.upstreams = upstreams
        self.validator_file = validators
        self.validator_timeout_s = validator_timeout_s
        self.clock = clock
        self.now = now
        self.runs: dict[str, _Run] = {}
        # Indexes, so placing a call costs the length of its history, not the number of open
        # runs (a busy proxy has hundreds): history → headerless runs, header → run, and the
        # request of each call in flight → its calls.
        self._by_history: dict[tuple[Key, ...], set[str]] = {}
        self._by_header: dict[str, str] = {}
        self._in_flight: dict[tuple[Key, ...], list[Call]] = {}

    # ---- a call ---------------------------------------------------------------------------------

    async def open_call(
        self, api: Api, model: str, request: StepRequest, header: str | None
    ) -> Call:
        """Places the call and publishes its step, ``pending``; called before it goes upstream.

        A call whose history extends a call still in flight can only continue it once that
        reply is in: a client may send its next call the moment the reply's last event reached
        it, before the proxy has read the end of the upstream's stream. So it waits for that."""
        keys = keys_of(request.system, request.messages)
        while (earlier := self._extended_in_flight(keys)) is not None:
            await earlier.done.wait()
        placement = place(keys, request.messages, header, self._candidates(keys, header))
        run = self.runs.get(placement.run_id or "")
        if run is None:
            run = self._start_run(api, model, request, header)
        elif run.held is not None:
            added = request.messages[len(request.messages) - placement.added :]
            feedback = list(added) if placement.new_attempt else []
            self._release(run, rejected=placement.new_attempt, feedback=feedback)
        if placement.new_attempt:
            run.attempt += 1
        index = run.next_index
        run.next_index += 1
        run.last_seen = self.clock()
        call = Call(run, index, run.attempt, request, keys, self.clock())
        run.calls.append(call)
        self._in_flight.setdefault(keys, []).append(call)
        self.sink(StepStarted(run_id=run.run_id, index=index, attempt=run.attempt, request=request))
        return call

    def _candidates(self, keys: tuple[Key, ...], header: str | None) -> list[OpenRun]:
        """The open runs this call could belong to (``place`` decides among them)."""
        if header is not None:
            run = self.runs.get(self._by_header.get(header, ""))
            return [run.view()] if run is not None else []
        found: list[OpenRun] = []
        for n in range(1, len(keys) + 1):
            for run_id in self._by_history.get(keys[:n], ()):
                found.append(self.runs[run_id].view())
        return found

    def _extended_in_flight(self, keys: tuple[Key, ...]) -> Call | None:
        for n in range(1, len(keys)):
            calls = self._in_flight.get(keys[:n])
            if calls:
                return calls[0]
        return None

    def _unindex(self, run: _Run) -> None:
        ids = self._by_history.get(run.history())
        if ids is not None:
            ids.discard(run.run_id)
            if not ids:
                del self._by_history[run.history()]

    def chunk(self, call: Call, chunk: ProviderChunk) -> None:
        """A piece of a streamed reply, published live (the window shows it as it comes)."""
        run_id, index = call.run.run_id, call.index
        if isinstance(chunk, TextChunk):
            self.sink(TextDelta(run_id=run_id, index=index, text=chunk.text))
        elif isinstance(chunk, ToolCallChunk):
            self.sink(
                ToolCallDelta(
                    run_id=run_id,
                    index=index,
                    call_index=chunk.call_index,
                    id=chunk.id,
                    name=chunk.name,
                    arguments_delta=chunk.arguments_delta,
                )
            )
        elif isinstance(chunk, ReasoningChunk):
            self.sink(ReasoningDelta(run_id=run_id, index=index, text=chunk.text))

    async def replied(
        self, call: Call, response: StepResponse, raw: RawExchange, *, model_reply: bool = True
    ) -> None:
        """The whole reply arrived and reached the client (``model_reply=False``: a call of
        another path, kept raw: never judged, held or continued)."""
        run = call.run
        verdicts: list[Verdict] = []
        final = model_reply and is_final_answer(response)
        if final and run.validators:
            verdicts = await judge_reply(
                run.scenario, run.validators, call.request, response,
                attempt=call.attempt, index=call.index,
            )  # fmt: skip
            self.sink(VerdictsReady(run_id=run.run_id, index=call.index, verdicts=verdicts))
        status = step_status(response, verdicts, False) if model_reply else "success"
        step = self._step(call, status, response, raw, None)
        step = step.model_copy(update={"verdicts": verdicts})
        self._ended(call, response if model_reply else None)
        if final and run.run_id in self.runs and run.held is None:
            run.held = step  # published when the client's next move says how it ended
        else:
            self._publish(run, step)

    def failed(
        self,
        call: Call,
        status: StepStatus,
        error: str,
        raw: RawExchange,
        partial_text: str = "",
    ) -> None:
        """The call ended without a whole reply (``error``, or ``cancelled`` by the client).
        A credential of the call's own that the upstream's error quotes (a gateway's "Incorrect
        API key provided: sk-…") is recorded ``[redacted]``, as a run's provider records it."""
        if call.secrets:
            error = credentials.scrub(error, call.secrets)
            raw = RawExchange(request=raw.request, response=_scrubbed(raw.response, call.secrets))
        response = StepResponse(text=partial_text)
        self._ended(call, None)
        self._publish(call.run, self._step(call, status, response, raw, error))

    # ---- runs -----------------------------------------------------------------------------------

    def idle(self, timeout_s: float) -> list[str]:
        """The runs with nothing in flight and no call for ``timeout_s``."""
        now = self.clock()
        return [
            r.run_id for r in self.runs.values() if not r.calls and now - r.last_seen >= timeout_s
        ]

    def finish(self, run_id: str) -> RunRecord | None:
        """Ends a run: its held answer stands, its status follows from its last step."""
        run = self.runs.get(run_id)
        if run is None:
            return None
        if run.held is not None:
            self._release(run, rejected=False, feedback=[])
        del self.runs[run_id]
        self._unindex(run)
        if run.header is not None:
            self._by_header.pop(run.header, None)
        steps = [run.steps[i] for i in sorted(run.steps)]
        status, termination, error = run_outcome(steps)
        usage = sum((s.response.usage for s in steps if s.response), Usage())
        transcript = list(run.last_request.messages) if run.last_request else []
        if run.last_reply is not None:
            transcript.append(run.last_reply)
        attempts = max((s.attempt for s in steps), default=1)
        record = RunRecord(
            run_id=run.run_id,
            scenario=SCENARIO_NAME,
            started_at=run.started_at,
            duration_ms=round((run.last_seen - run.t0) * 1000, 3),
            policy=Policy(),
            status=status,
            termination=termination,
            budgets=Budgets(
                attempts_used=attempts,
                max_attempts=attempts,
                steps_used=len(steps),
                max_steps=max(len(steps), 1),
            ),  # fmt: skip  (the proxy caps nothing: the budget is what the client used)
            output=run.last_reply.content if status == "succeeded" and run.last_reply else None,
            error=error,
            usage=usage,
            steps=steps,
            transcript=transcript,
            provider=run.api,
            model=run.model,
            scenario_source=run.source,
            scenario_dir=str(run.scenario.base_dir),
            scenario_origin=SCENARIO_NAME,
            via=VIA,
        )
        self.sink(RunFinished(run_id=run.run_id, record=record))
        return record

    def finish_all(self) -> None:
        for run_id in list(self.runs):
            self.finish(run_id)

    # ---- internals ------------------------------------------------------------------------------

    def _start_run(self, api: Api, model: str, request: StepRequest, header: str | None) -> _Run:
        specs = self.validator_file.specs if self.validator_file else []
        base_dir = self.validator_file.base_dir if self.validator_file else Path(".")
        source, scenario = proxy_scenario(api, model, self.upstreams[api], request, specs, base_dir)
        validators = compile_validators(
            scenario.validators,
            scenario.base_dir,
            self.validator_timeout_s,
            source=scenario.source,
            tool_names=[t.name for t in scenario.tools],
            tolerant=True,  # an edited file that no longer loads judges "error", never crashes
        )
        now = self.clock()
        run = _Run(
            run_id=uuid.uuid4().hex[:12], header=header, api=api, model=model,
            started_at=self.now(), t0=now, source=source, scenario=scenario,
            validators=validators, last_seen=now,
        )  # fmt: skip
        self.runs[run.run_id] = run
        if header is not None:
            self._by_header[header] = run.run_id
        self.sink(
            RunStarted(
                run_id=run.run_id,
                scenario=SCENARIO_NAME,
                started_at=run.started_at,
                policy=Policy(),
                provider=api,
                model=model,
                scenario_source=source,
                scenario_dir=str(base_dir),
                scenario_origin=SCENARIO_NAME,
                via=VIA,
            )
        )
        return run

    def _step(
        self,
        call: Call,
        status: StepStatus,
        response: StepResponse,
        raw: RawExchange,
        error: str | None,
    ) -> Step:
        end = self.clock()
        first = call.first_byte if call.first_byte is not None else end
        return Step(
            index=call.index,
            attempt=call.attempt,
            status=status,
            request=call.request,
            response=response,
            latency_ms=round((end - call.started) * 1000, 3),
            ttft_ms=round((first - call.started) * 1000, 3),
            error=error,
            raw=raw,
        )

    def _ended(self, call: Call, response: StepResponse | None) -> None:
        run = call.run
        run.calls.remove(call)
        calls = self._in_flight[call.keys]
        calls.remove(call)
        if not calls:
            del self._in_flight[call.keys]
        call.done.set()
        run.last_seen = self.clock()
        self._unindex(run)
        run.sent = call.keys
        run.last_request = call.request
        if response is None:
            run.reply, run.final, run.last_reply = None, False, None
        else:
            run.last_reply = reply_message(response)
            run.reply, run.final = message_key(run.last_reply), is_final_answer(response)
        if run.header is None and run.run_id in self.runs:
            self._by_history.setdefault(run.history(), set()).add(run.run_id)

    def _release(self, run: _Run, *, rejected: bool, feedback: list[Message]) -> None:
        held, run.held = run.held, None
        if held is None:
            return
        assert held.response is not None
        status = step_status(held.response, held.verdicts, rejected)
        self._publish(run, held.model_copy(update={"status": status, "feedback": feedback}))

    def _publish(self, run: _Run, step: Step) -> None:
        run.steps[step.index] = step
        self.sink(StepFinished(run_id=run.run_id, step=step))


def _scrubbed(value: Any, secrets: tuple[str, ...]) -> Any:
    """A JSON-like value with each of ``secrets`` replaced in its strings."""
    if isinstance(value, str):
        return credentials.scrub(value, secrets)
    if isinstance(value, dict):
        return {k: _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, secrets) for v in value]
    return value
