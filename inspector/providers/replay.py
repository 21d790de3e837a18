"""The replay model: answers from a recorded run wherever the request is identical to a recorded
one, and asks a live provider (or, offline, raises ``ReplayDivergence``) elsewhere.

"Identical" is the request fingerprint (``inspector.core.fingerprint``): messages, system prompt,
tools, tool_choice, response format, model name and sampling settings. Recorded steps with the
same fingerprint (a blind retry sends the opening request again) answer in their recorded order,
each once. Only steps that ended with a whole response answer — a step that failed, was
cancelled or interrupted has none.

The recording is injected as data (a ``RunRecord``); this module knows nothing of the store.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence

from inspector.core.errors import ReplayDivergence
from inspector.core.events import EventSink, discard
from inspector.core.fingerprint import (
    Fingerprinter,
    ModelSettings,
    first_difference,
    model_settings,
)
from inspector.core.history import SYSTEM_AS_USER_NOTE
from inspector.core.loop import Turn
from inspector.core.provider import (
    Completed,
    Provider,
    ProviderChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    close_provider,
    system_in_conversation,
)
from inspector.core.recording import RecordedTools, scenario_of
from inspector.core.records import RunRecord, Step, StepRequest
from inspector.core.scenario import ModelConfig, Scenario
from inspector.providers.scripted import ScriptedProvider

__all__ = ["ANSWERING_STATUSES", "ReplayProvider", "replay_turn"]

# The step statuses whose response is whole (an "error" step keeps only the text received).
ANSWERING_STATUSES = frozenset({"success", "empty", "failed_validation", "validator_error"})


class ReplayProvider:
    """Serves one replayed turn (its position in the turn is its call counter).

    ``recorded_settings`` are the model settings the recording was made with, ``settings`` the
    ones of the replay (``--set model.temperature=...`` makes every request differ). ``live`` is
    asked where the recording has no answer; without it (offline) that is a divergence."""

    def __init__(
        self,
        record: RunRecord,
        *,
        recorded_settings: ModelSettings,
        settings: ModelSettings,
        live: Provider | None = None,
    ) -> None:
        self.record = record
        self.recorded_settings = recorded_settings
        self.settings = settings
        self.live = live
        self.name = f"replay+{live.name}" if live is not None else "replay"
        # Requests take the shape the answering provider needs: the live one's, else the
        # recording's (a run that sent system feedback as user says so in its notes).
        self.system_in_conversation = (
            system_in_conversation(live)
            if live is not None
            else SYSTEM_AS_USER_NOTE not in record.notes
        )
        self._fingerprint = Fingerprinter()
        self._answers: dict[str, deque[Step]] = {}
        for step in record.steps:
            if step.status in ANSWERING_STATUSES and step.response is not None:
                key = self._fingerprint(step.request, recorded_settings)
                self._answers.setdefault(key, deque()).append(step)
        self._calls = 0
        self.replayed: list[int] = []  # step positions answered from the recording
        self.live_calls: list[int] = []  # step positions sent to the live provider

    async def aclose(self) -> None:
        if self.live is not None:
            await close_provider(self.live)

    def summary(self) -> str:
        """What came from where: ``replay of abc: steps 1-3 from the recording, step 4 live``."""
        parts = []
        if self.replayed:
            parts.append(f"{_steps(self.replayed)} from the recording")
        if self.live_calls:
            parts.append(f"{_steps(self.live_calls)} live")
        mode = " (offline)" if self.live is None else ""
        return f"replay of {self.record.run_id}{mode}: {', '.join(parts) or 'no step answered'}"

    @property
    def calls(self) -> int:
        """Model calls so far: the position of the step in flight."""
        return self._calls

    def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        self._calls += 1
        position = self._calls
        queue = self._answers.get(self._fingerprint(request, self.settings))
        if queue:
            self.replayed.append(position)
            return _from_recording(queue.popleft())
        if self.live is None:
            raise ReplayDivergence(self._divergence(position, request, queue is not None))
        self.live_calls.append(position)
        if isinstance(self.live, ScriptedProvider):
            # A script is one entry per model call: the live continuation answers with the entry
            # of this position, as a fresh run of the scenario would.
            self.live.skip_to(position - 1)
        return self.live.stream(request)

    def _divergence(self, position: int, request: StepRequest, used_up: bool) -> str:
        steps = self.record.steps
        if position > len(steps):
            why = f"the recording has only {len(steps)} step(s)"
        else:
            recorded = steps[position - 1]
            why = first_difference(recorded.request, request, self.recorded_settings, self.settings)
            if why == "identical":  # the same request, but the recorded call gave no whole answer
                failure = f" ({recorded.error})" if recorded.error else ""
                why = f"the recorded call ended {recorded.status}{failure}, no answer to reuse"
        if used_up:
            why += " (the request repeats an earlier one, whose recorded answer is used up)"
        return f"replay diverged at step {position}: {why}"


async def _from_recording(step: Step) -> AsyncIterator[ProviderChunk]:
    """The recorded response streamed back: reasoning, text, tool calls, then ``Completed``."""
    response = step.response
    assert response is not None
    if response.reasoning:
        yield ReasoningChunk(text=response.reasoning)
    if response.text:
        yield TextChunk(text=response.text)
    for index, call in enumerate(response.tool_calls):
        yield ToolCallChunk(
            call_index=index, id=call.id, name=call.name, arguments_delta=call.arguments_json()
        )
    yield Completed(response=response, raw=step.raw)


def replay_turn(
    record: RunRecord,
    *,
    overrides: Sequence[str] = (),
    live: Callable[[Scenario], Provider] | None = None,
    sink: EventSink = discard,
) -> Turn:
    """A new turn re-running ``record`` (its scenario as recorded plus ``overrides``), with
    ``replay_of`` set: model answers from the recording where the request is identical, else
    from ``live(scenario)`` (None: offline, a divergence ends the run ``error``); side-effect
    tools answered from the recording. ``ScenarioError`` when the overrides do not apply."""
    scenario = scenario_of(record, overrides)
    provider = ReplayProvider(
        record,
        recorded_settings=model_settings(
            ModelConfig.model_validate(record.scenario_source.get("model", {}))
        ),
        settings=model_settings(scenario.model),
        live=live(scenario) if live is not None else None,
    )
    return Turn(
        scenario,
        provider,
        sink,
        replay_of=record.run_id,
        overrides=list(overrides),
        recorded_tools=RecordedTools(record, step=lambda: provider.calls),
    )


def _steps(positions: list[int]) -> str:
    """``[1, 2, 3, 5]`` → ``"steps 1-3, 5"``; ``[4]`` → ``"step 4"``."""
    spans: list[list[int]] = []
    for p in positions:
        if spans and spans[-1][1] == p - 1:
            spans[-1][1] = p
        else:
            spans.append([p, p])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return f"{'step' if len(positions) == 1 else 'steps'} {text}"
