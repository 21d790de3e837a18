"""EventPacer: the engine's events reach the window in slices, in order, none lost. A fake
clock makes each call "take" a fixed time, so the slices are counted, never timed."""

from __future__ import annotations

import math

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.runtime.event_pacer import EventPacer


class Clock:
    """Advances ``step`` seconds each time a paced call runs."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 100.0, step

    def __call__(self) -> float:
        return self.now

    def call(self, seen: list[int], n: int) -> None:
        self.now += self.step
        seen.append(n)


def test_calls_run_at_once_while_the_slice_has_time(qtbot: QtBot) -> None:
    pacer, seen = EventPacer(slice_s=math.inf), []
    for n in range(1_000):
        pacer.later(seen.append, n)
    assert seen == list(range(1_000)) and pacer.pending == 0


def test_a_burst_is_cut_into_slices_of_the_slice_time(qtbot: QtBot) -> None:
    clock = Clock(step=0.004)  # each call 4 ms; slices of 10 ms: 3 calls each
    pacer, seen = EventPacer(slice_s=0.010, slice_max_s=0.010, clock=clock), []
    for n in range(10):
        pacer.later(clock.call, seen, n)
    assert seen == [0, 1, 2] and pacer.pending == 7  # the rest waits for the next loop turn
    assert pacer.run_slice() == 3 and seen == list(range(6))
    qtbot.waitUntil(lambda: pacer.pending == 0)
    assert seen == list(range(10))  # in order, none lost


def test_a_slice_stretches_to_the_loops_other_work_within_the_maximum(qtbot: QtBot) -> None:
    clock = Clock(step=0.001)
    pacer = EventPacer(slice_s=0.002, slice_max_s=0.005, clock=clock, yield_after_s=1.0)
    seen: list[int] = []
    for n in range(100):
        pacer.later(clock.call, seen, n)
    pacer._timer.stop()
    assert pacer.run_slice() == 2  # the first slice from the queue: the minimum
    clock.now += 0.004  # a repaint took 4 ms: the next slice gets 4 ms of calls
    assert pacer.run_slice() == 4
    clock.now += 0.050  # a 50 ms repaint: the slice stops at the maximum
    assert pacer.run_slice() == 5


def test_after_a_long_repaint_the_loop_turns_once_before_the_next_slice(qtbot: QtBot) -> None:
    clock = Clock(step=0.001)
    pacer = EventPacer(slice_s=0.002, slice_max_s=0.005, clock=clock, yield_after_s=0.010)
    seen: list[int] = []
    for n in range(100):
        pacer.later(clock.call, seen, n)
    pacer._timer.stop()
    assert pacer.run_slice() == 2
    clock.now += 0.004  # a short repaint: the next slice at once
    assert pacer.run_slice() == 4 and pacer.turns_yielded == 0
    clock.now += 0.030  # a 30 ms repaint ran in this loop turn: events wait one more turn
    assert pacer.run_slice() == 0 and pacer.turns_yielded == 1
    pacer.later(clock.call, seen, 1_000)  # a call meanwhile waits behind the queue
    assert seen == list(range(8))  # two at once, then slices of 2 and 4
    assert pacer.run_slice() == 5  # the turn after: the slice, stretched to the maximum
    assert seen == list(range(13))


def test_an_alone_call_gets_a_loop_turn_without_events(qtbot: QtBot) -> None:
    clock = Clock(step=0.004)
    pacer = EventPacer(slice_s=0.010, slice_max_s=0.010, clock=clock, yield_after_s=1.0)
    seen: list[int] = []
    follows: list[int] = []

    def follow() -> None:
        follows.append(len(seen))

    for n in range(10):
        pacer.later(clock.call, seen, n)
    assert seen == [0, 1, 2]
    pacer.alone(follow)
    pacer.alone(follow)  # asked twice before its turn: runs once
    pacer._timer.stop()
    assert pacer.run_slice() == 0  # the follow's turn: no event
    assert follows == [3] and pacer.turns_alone == 1
    assert pacer.run_slice() == 3 and seen == list(range(6))  # then the events again
    qtbot.waitUntil(lambda: pacer.pending == 0)
    assert seen == list(range(10)) and follows == [3]


def test_calls_made_after_an_alone_call_wait_for_the_turn_after_it(qtbot: QtBot) -> None:
    pacer, seen = EventPacer(slice_s=math.inf), []
    pacer.alone(lambda: seen.append(-1))
    pacer.later(seen.append, 1)  # the slice is open, but the loop turn is the follow's
    assert seen == [] and pacer.pending == 1
    qtbot.waitUntil(lambda: pacer.pending == 0)
    assert seen == [-1, 1]


def test_a_call_that_ends_the_slice_leaves_the_calls_behind_it_for_a_later_turn(
    qtbot: QtBot,
) -> None:
    clock = Clock(step=0.001)
    pacer = EventPacer(slice_s=1.0, slice_max_s=1.0, clock=clock, yield_after_s=0.010)
    seen: list[int] = []

    def shown(n: int) -> None:  # a run shown: its repaint comes before more events
        seen.append(n)
        pacer.end_slice()

    pacer.later(seen.append, 0)
    pacer.later(shown, 1)
    pacer.later(seen.append, 2)  # the slice has time left, but it was ended
    assert seen == [0, 1] and pacer.pending == 1
    pacer._timer.stop()
    clock.now += 0.020  # the repaint: the loop turns once more, then the events
    assert pacer.run_slice() == 0 and seen == [0, 1]
    pacer.later(shown, 3)
    assert pacer.run_slice() == 2 and seen == [0, 1, 2, 3]  # ended after call 3
    pacer.later(seen.append, 4)
    assert pacer.pending == 1
    qtbot.waitUntil(lambda: pacer.pending == 0)
    assert seen == [0, 1, 2, 3, 4]


def test_a_call_that_raises_does_not_stop_the_ones_behind_it(qtbot: QtBot) -> None:
    clock = Clock(step=0.020)
    pacer, seen = EventPacer(slice_s=0.010, clock=clock), []

    def boom() -> None:
        raise RuntimeError("a slot failed")

    pacer.later(clock.call, seen, 0)  # spends the slice: what follows is queued
    pacer.later(boom)
    pacer.later(clock.call, seen, 1)
    with pytest.raises(RuntimeError):
        pacer.run_slice()
    assert pacer.pending == 1
    qtbot.waitUntil(lambda: pacer.pending == 0)
    assert seen == [0, 1]


def test_flush_runs_everything_queued(qtbot: QtBot) -> None:
    clock = Clock(step=0.020)
    pacer, seen = EventPacer(slice_s=0.010, clock=clock), []
    for n in range(5):
        pacer.later(clock.call, seen, n)
    pacer.alone(lambda: seen.append(-1))
    pacer.flush()
    assert seen == [*range(5), -1] and pacer.pending == 0


def test_the_loop_turns_again_while_the_turn_let_go_held_a_repaint(qtbot: QtBot) -> None:
    """A run just shown is laid out in one loop turn and painted in the next: the turn the
    pacer let go after the layout held the paint, so it lets the loop turn again before its
    slice — as long as each turn let go held as much other work, at most ``yields_max``
    turns in a row, then the slice runs whatever the loop does."""
    clock = Clock(step=0.001)
    pacer = EventPacer(
        slice_s=0.002, slice_max_s=0.005, clock=clock, yield_after_s=0.010, yields_max=3
    )
    seen: list[int] = []
    for n in range(100):
        pacer.later(clock.call, seen, n)
    pacer._timer.stop()
    assert pacer.run_slice() == 2
    clock.now += 0.020  # the layout
    assert pacer.run_slice() == 0 and pacer.turns_yielded == 1
    clock.now += 0.015  # the paint, in the turn let go: once more
    assert pacer.run_slice() == 0 and pacer.turns_yielded == 2
    clock.now += 0.001  # a quiet turn: the slice, stretched to the maximum
    assert pacer.run_slice() == 5 and pacer.turns_yielded == 2
    assert seen == list(range(9))  # two at once, then slices of 2 and 5
    for _ in range(3):  # heavy turns, one after another: three are let go, no more
        clock.now += 0.020
        assert pacer.run_slice() == 0
    clock.now += 0.020
    assert pacer.run_slice() == 5 and pacer.turns_yielded == 5
    assert seen == list(range(14))  # in order, none lost
