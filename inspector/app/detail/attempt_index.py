"""Where each attempt of a run starts and ends, what its tool steps were and which of its other
steps were candidates, kept up to date as steps arrive.

The Attempts tab shows a page of attempts at a time; this index lets it find them without
walking the run. Where attempts start is kept in arrays (two integers an attempt: 10,000
attempts index in a few milliseconds), what an attempt's steps were in a small record made
only for the attempts that have something to say (tool steps, other candidates, a change since
it was first shown). Each step is classified once (tool call or candidate), at most
``CLASSIFY_BUDGET`` steps a call, when it is no longer its attempt's last step — then it is
finished and its kind is final. So a refresh costs the same at step 10 and at step 100,000.
Qt-free: the view and the tests feed it the run's ``LiveStep`` list.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import compress
from operator import lt, ne

from inspector.core.live import LiveStep
from inspector.core.records import Step, step_kind
from inspector.reports.attempt_columns import TOOL_STEPS_SHOWN

CLASSIFY_BUDGET = 20_000  # steps classified per update (~15 ms here)


@dataclass
class _Found:
    """What the index learnt about one attempt beyond where it is."""

    tool_steps: list[Step] = field(default_factory=list)  # the first TOOL_STEPS_SHOWN
    tool_count: int = 0
    candidates: list[int] = field(default_factory=list)  # positions of non-tool, non-last steps
    cleared: bool = False  # one of its classified steps was cleared
    version: int = 0  # bumped whenever what the attempt shows may have changed


_NOTHING = _Found()  # shared, never changed: what an attempt with nothing found reads as


@dataclass(frozen=True)
class AttemptSpan:
    """One attempt: ``steps[start:end]`` of the run; its last step is its candidate."""

    number: int
    start: int
    end: int
    tool_steps: list[Step]
    tool_count: int
    candidates: list[int]
    cleared: bool
    version: int


class AttemptIndex:
    def __init__(self) -> None:
        self.generation = -1  # bumped whenever the index starts again (another steps list)
        self._reset(None)

    def _reset(self, steps: list[LiveStep] | None) -> None:
        self.generation += 1
        self._steps = steps
        self._numbers = array("q")  # attempt number, per attempt in order
        self._starts = array("q")  # position of its first step
        self._end = 0  # steps[:end] are in the arrays
        self._found: dict[int, _Found] = {}  # by position, for the attempts with something
        self.tool_total = 0  # tool steps classified, over every attempt
        self.first_tools: list[Step] = []  # the run's first TOOL_STEPS_SHOWN tool steps
        self._cursor = 0  # steps[:cursor] are classified (or an attempt's last step)

    def __len__(self) -> int:
        return len(self._numbers)

    def update(self, steps: list[LiveStep], budget: int = CLASSIFY_BUDGET) -> bool:
        """Takes in the steps appended since the last call (a new list — another run, or the
        record's steps after ``RunFinished`` — is indexed from scratch). True: steps are left
        to classify; call again."""
        if steps is not self._steps:
            self._reset(steps)
        numbers, starts, begin = self._numbers, self._starts, self._end
        if begin < len(steps):
            # Where the attempt number changes, found in C loops (map, compress), not per step.
            before = numbers[-1:] or array("q", [-1])
            attempts = array("q", [s.attempt for s in steps[begin:]])
            changed = compress(range(begin, len(steps)), map(ne, attempts, before + attempts))
            new = array("q", changed)
            starts.extend(new)
            numbers.extend(map(attempts.__getitem__, map((-begin).__add__, new)))
            self._end = len(steps)
        if numbers:
            self._touch(len(numbers) - 1)  # its last step streams
        cursor, stop = self._cursor, min(len(steps) - 1, self._cursor + budget)
        if cursor < stop:
            first = self.position_of(steps[cursor].attempt)
            assert first is not None
            last = bisect_left(starts, stop, lo=first)  # attempts starting before stop
            after = starts[last] if last < len(starts) else self._end  # where attempt last - 1 ends
            begins, ends = starts[first:last], [*starts[first + 1 : last], after]
            # Only attempts of two steps or more have steps to classify: their steps but the
            # last (the candidate, shown apart; it may still stream).
            many = compress(range(first, last), map(lt, map((1).__add__, begins), ends))
            for position in many:
                start, end = starts[position], ends[position - first]
                for at in range(max(start, cursor), min(end - 1, stop)):
                    self._classify(position, steps[at].as_step(), at)
            self._cursor = stop
        return self._cursor < len(steps) - 1

    def span(self, position: int) -> AttemptSpan:
        """The attempt at ``position`` (0-based, in order; negative counts from the end)."""
        count = len(self._numbers)
        position = position + count if position < 0 else position
        end = self._starts[position + 1] if position + 1 < count else self._end
        found = self._found.get(position, _NOTHING)
        return AttemptSpan(
            self._numbers[position],
            self._starts[position],
            end,
            found.tool_steps,
            found.tool_count,
            found.candidates,
            found.cleared,
            found.version,
        )

    def position_of(self, attempt: int) -> int | None:
        """Where attempt number ``attempt`` is (None: not indexed yet); attempt numbers only
        grow along a run."""
        numbers = self._numbers
        guess = attempt - 1  # attempts numbered 1, 2, 3...: found at once
        if 0 <= guess < len(numbers) and numbers[guess] == attempt:
            return guess
        at = bisect_left(numbers, attempt)
        return at if at < len(numbers) and numbers[at] == attempt else None

    def step_changed(self, live: LiveStep) -> None:
        """Something arrived for step ``live`` (verdicts, cleared...): its attempt shows it
        again; a late ``cleared`` on a step already classified is noted here."""
        position = self.position_of(live.attempt)
        if position is None:
            return
        found = self._touch(position)
        if live.cleared and live.index - 1 < self._cursor:
            found.cleared = True

    def _touch(self, position: int) -> _Found:
        found = self._found.get(position)
        if found is None:
            found = self._found[position] = _Found()
        found.version += 1
        return found

    def _classify(self, position: int, step: Step, at: int) -> None:
        found = self._touch(position)
        found.cleared = found.cleared or step.cleared
        if step_kind(step) != "tool call":
            found.candidates.append(at)
            return
        found.tool_count += 1
        self.tool_total += 1
        if len(found.tool_steps) < TOOL_STEPS_SHOWN:
            found.tool_steps.append(step)
        if len(self.first_tools) < TOOL_STEPS_SHOWN:
            self.first_tools.append(step)
