"""Where each attempt of a run starts and ends, what its tool steps were and which of its other
steps were candidates, kept up to date as steps arrive.

The Attempts view renders a handful of attempts at a time; this index lets it find them without
walking the run. Spans grow in O(new steps); each step is classified once (tool call or
candidate), at most ``CLASSIFY_BUDGET`` steps a call, when it is no longer its attempt's last
step — then it is finished and its kind is final. So a refresh costs the same at step 10 and at
step 100,000. Qt-free: the view and the tests feed it the run's ``LiveStep`` list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.core.live import LiveStep
from inspector.core.records import Step, step_kind
from inspector.reports.attempt_columns import TOOL_STEPS_SHOWN

CLASSIFY_BUDGET = 20_000  # steps classified per update (~15 ms here)


@dataclass
class AttemptSpan:
    """One attempt: ``steps[start:end]`` of the run; its last step is its candidate."""

    number: int
    start: int
    end: int
    tool_steps: list[Step] = field(default_factory=list)  # the first TOOL_STEPS_SHOWN
    tool_count: int = 0
    candidates: list[int] = field(default_factory=list)  # positions of non-tool, non-last steps
    cleared: bool = False  # one of its classified steps was cleared
    version: int = 0  # bumped whenever what the attempt shows may have changed


class AttemptIndex:
    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, steps: list[LiveStep] | None) -> None:
        self._steps = steps
        self.spans: list[AttemptSpan] = []
        self.tool_total = 0  # tool steps classified, over every attempt
        self.first_tools: list[Step] = []  # the run's first TOOL_STEPS_SHOWN tool steps
        self._by_number: dict[int, AttemptSpan] = {}
        self._positions: dict[int, int] = {}  # attempt number → its position in ``spans``
        self._cursor = 0  # steps[:cursor] are classified (or an attempt's last step)

    def update(self, steps: list[LiveStep], budget: int = CLASSIFY_BUDGET) -> bool:
        """Takes in the steps appended since the last call (a new list — another run, or the
        record's steps after ``RunFinished`` — is indexed from scratch). True: steps are left
        to classify; call again."""
        if steps is not self._steps:
            self._reset(steps)
        spans = self.spans
        for position in range(spans[-1].end if spans else 0, len(steps)):
            attempt = steps[position].attempt
            if not spans or spans[-1].number != attempt:
                spans.append(AttemptSpan(attempt, position, position))
                self._by_number[attempt] = spans[-1]
                self._positions[attempt] = len(spans) - 1
            spans[-1].end = position + 1
        if spans:
            spans[-1].version += 1  # its last step streams
        stop = min(len(steps) - 1, self._cursor + budget)
        for position in range(self._cursor, stop):
            live = steps[position]
            if steps[position + 1].attempt == live.attempt:  # not its attempt's candidate
                self._classify(self._by_number[live.attempt], live.as_step(), position)
        self._cursor = max(self._cursor, stop)
        return self._cursor < len(steps) - 1

    def span_of(self, attempt: int) -> AttemptSpan | None:
        return self._by_number.get(attempt)

    def position_of(self, attempt: int) -> int | None:
        """Where attempt number ``attempt`` is in ``spans`` (None: not indexed yet)."""
        return self._positions.get(attempt)

    def step_changed(self, live: LiveStep) -> None:
        """Something arrived for step ``live`` (verdicts, cleared...): its attempt shows it
        again; a late ``cleared`` on a step already classified is noted here."""
        span = self._by_number.get(live.attempt)
        if span is None:
            return
        span.version += 1
        if live.cleared and live.index - 1 < self._cursor:
            span.cleared = True

    def _classify(self, span: AttemptSpan, step: Step, position: int) -> None:
        span.version += 1
        span.cleared = span.cleared or step.cleared
        if step_kind(step) != "tool call":
            span.candidates.append(position)
            return
        span.tool_count += 1
        self.tool_total += 1
        if len(span.tool_steps) < TOOL_STEPS_SHOWN:
            span.tool_steps.append(step)
        if len(self.first_tools) < TOOL_STEPS_SHOWN:
            self.first_tools.append(step)
