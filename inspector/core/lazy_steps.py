"""A long stored run's steps, built when asked for: what the window shows first when it opens
a run of many steps (docs/window-speed.md, "Opening a long stored run").

``StepRows`` holds, per step, the few columns the timeline lays its rows out from (attempt,
cleared, whether it has notes, the slowest latency) and a way to build each ``Step`` on demand
(the store's light read: its body without the request, which is a shared stand-in). Building
100,000 steps' pydantic objects takes seconds; the timeline's first page needs ~30 of them.
``LazyLiveSteps`` is the ``LiveStep`` view of the same rows. Both are read-only sequences:
the full record replaces them (``LiveRun.fill``) once it is read.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast, overload

from inspector.core.errors import InspectorError
from inspector.core.live import LiveRun, LiveStep
from inspector.core.records import RunRecord, Step, Verdict

T = TypeVar("T")

RELEASE_SLICE = 5_000  # stored bodies freed per call (``StepRows.release``)
# Built steps freed per call (``BuiltWhenRead.release``, workflows/runs.release_run's lists):
# ~0.5 ms of the GIL each (10,000 built `Step`s and their `LiveStep`s freed at once held it
# ~20–26 ms).
RELEASE_BUILT = 250
# A releasing worker sleeps this long between two slices: a thread waiting for the GIL (the UI
# thread) takes it then, instead of after the interpreter's 5 ms switch interval.
RELEASE_PAUSE_S = 0.0005
# A step whose request holds more messages is not read alone while the run is light: its
# messages would cost what the whole read's do (and freeing them holds the GIL).
ALONE_MAX = 5_000


class BuiltWhenRead(Sequence[T]):
    """A read-only sequence of ``size`` items, each made by ``_make`` when first read and kept."""

    def __init__(self, size: int) -> None:
        self._items: list[T | None] = [None] * size

    def _make(self, position: int) -> T:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, position: int) -> T: ...
    @overload
    def __getitem__(self, position: slice) -> list[T]: ...
    def __getitem__(self, position: int | slice) -> T | list[T]:
        if isinstance(position, slice):
            return [self[n] for n in range(*position.indices(len(self._items)))]
        item = self._items[position]
        if item is None:
            if position < 0:
                position += len(self._items)
            item = self._items[position] = self._make(position)
        return item

    def __iter__(self) -> Iterator[T]:
        for n in range(len(self._items)):
            yield self[n]

    def release(self) -> None:
        """Drops the items built so far, ``RELEASE_BUILT`` at a time: for a worker thread, once
        nothing reads this sequence (the full steps replaced it, or nobody shows its run)."""
        items = self._items
        for end in range(len(items), 0, -RELEASE_BUILT):
            start = max(end - RELEASE_BUILT, 0)
            if any(item is not None for item in items[start:end]):
                items[start:end] = [None] * (end - start)
                time.sleep(RELEASE_PAUSE_S)

    def built(self) -> int:
        """How many items were built and are kept (tests, benchmarks)."""
        return len(self._items) - self._items.count(None)


class StepRows(BuiltWhenRead[Step]):
    """Steps 1..n of a stored run, each built once, when first read. ``attempts[n]``,
    ``cleared[n]``: step n + 1's attempt and cleared flag; ``noted``: the 0-based positions of
    the steps with verdicts, feedback, a forced request or an error; ``notes``: per step, how
    many notes it has when the store could count them (-1: counted from the built step; empty:
    none counted); ``slowest``: the largest latency (0 when none); ``held``: the list ``build``
    reads from, emptied by ``release``; ``verdicts``: the run's verdicts by step index, as
    ``build`` attaches them (``parts``: the whole read of the run reuses both)."""

    def __init__(
        self,
        attempts: array[int],
        cleared: bytes,
        noted: list[int],
        slowest: float,
        build: Callable[[int], Step],
        held: list[Any] | None = None,
        sizes: array[int] | None = None,
        notes: array[int] | None = None,
        verdicts: Mapping[int, list[Verdict]] | None = None,
    ) -> None:
        super().__init__(len(attempts))
        self.attempts, self.cleared, self.noted, self.slowest = attempts, cleared, noted, slowest
        self._build = build
        self._held = held if held is not None else []  # what ``build`` reads (the bodies)
        self._whole: set[int] = set()
        self.sizes = sizes if sizes is not None else array("q")  # messages per request
        self.notes = notes if notes is not None else array("q")
        self.verdicts = verdicts

    def note_count(self, position: int) -> int:
        """Step ``position``'s (0-based) note count as the store counted it; -1: unknown
        (``reports.step_notes.note_count`` of the built step says)."""
        notes = self.notes
        return notes[position] if len(notes) == len(self._items) else -1

    def release(self) -> None:
        """Empties what the steps are built from, a slice at a time (the full steps replaced
        them; 100,000 bodies freed at once hold the GIL ~50 ms), then the steps built: on a
        worker thread."""
        while self._held:
            del self._held[-RELEASE_SLICE:]
            time.sleep(RELEASE_PAUSE_S)
        super().release()

    def _make(self, position: int) -> Step:
        return self._build(position)

    def held(self) -> int:
        """How many stored bodies are still held (tests: ``release`` emptied them)."""
        return len(self._held)

    def parts(self) -> LightParts | None:
        """What the whole read of this run can take from the light read instead of reading
        and validating it again (None: the bodies were released, or no verdicts were kept)."""
        if self.verdicts is None or len(self._held) != len(self._items):
            return None
        return LightParts(list(self._held), self.verdicts)

    def put(self, step: Step) -> None:
        """``step``, read whole (``Store.load_step``), replaces its light one."""
        self._items[step.index - 1] = step
        self._whole.add(step.index)

    def light_request(self, index: int) -> bool:
        """Whether step ``index``'s request is small enough (``ALONE_MAX`` messages) to be
        read alone before the whole run: a growing history's last request is all of it."""
        return 0 < index <= len(self.sizes) and self.sizes[index - 1] <= ALONE_MAX

    def whole(self, index: int) -> bool:
        """Whether step ``index`` (1-based) was read whole (``put``)."""
        return index in self._whole


@dataclass(frozen=True)
class LightParts:
    """What a run's light read produced that its whole read reuses (``Store.load(run_id,
    reuse)``): each step's stored body as the light read holds it (its JSON text, or the dict
    with its large texts resolved, left as it is; the list is a copy, which the read empties)
    and the run's verdicts by step index (read-only: each step gets a list of its own).
    Reading and validating the verdicts again was ~50-70 ms of the whole read's GIL-holding
    CPU beside a 10,000-attempt run's first paint."""

    bodies: list[Any]
    verdicts: Mapping[int, list[Verdict]]


class LazyLiveSteps(BuiltWhenRead[LiveStep]):
    """``LiveStep.from_step`` of each of ``rows``, made when first read."""

    def __init__(self, rows: StepRows) -> None:
        super().__init__(len(rows))
        self.rows = rows

    def _make(self, position: int) -> LiveStep:
        return LiveStep.from_step(self.rows[position])

    def release(self) -> None:
        """Drops the ``LiveStep``s built, then the rows' bodies and steps (``StepRows.release``):
        for a worker thread, once nothing reads them."""
        super().release()
        self.rows.release()

    def put(self, step: Step) -> None:
        """``step``, read whole, replaces its light one (``StepRows.put``)."""
        self.rows.put(step)
        self._items[step.index - 1] = LiveStep.from_step(step)


class LightRecordNotDumped(InspectorError):
    """A light record was asked for its JSON: it lacks what the JSON holds."""


class LightRunRecord(RunRecord):
    """The store's light read of a run (``Store.load_light``): its ``steps`` are ``StepRows``
    (stand-in requests, no raw exchanges), and it has no transcript and no scenario source.
    Its JSON would not be the run's, and getting the rest is the full read (``Store.load``:
    seconds and a GB for a 100,000-step run, on a store connection of the caller's thread),
    which a dump must not do behind its caller's back. So ``model_dump`` and
    ``model_dump_json`` (and ``reports/record_json.py``, the HTML report: they call them) raise
    ``LightRecordNotDumped`` in one line unless they leave out all of ``LACKS``
    (docs/store.md, "A light record is not dumped")."""

    LACKS: ClassVar[frozenset[str]] = frozenset({"steps", "transcript", "scenario_source"})

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        self._check_dumped(kwargs.get("include"), kwargs.get("exclude"))
        return super().model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:
        self._check_dumped(kwargs.get("include"), kwargs.get("exclude"))
        return super().model_dump_json(**kwargs)

    def _check_dumped(self, include: Any, exclude: Any) -> None:
        dumped = set(type(self).model_fields if include is None else include)
        if isinstance(exclude, dict):
            dumped -= {name for name, value in exclude.items() if value is True}
        elif exclude is not None:
            dumped -= set(exclude)
        if dumped & self.LACKS:
            raise LightRecordNotDumped(
                f"run {self.run_id} was read light (no requests, raw exchanges, transcript or"
                " scenario source): dump the record Store.load reads, not this one"
            )


def light_run(record: RunRecord) -> LiveRun:
    """``record`` (whose ``steps`` are ``StepRows``: the store's light read) as a ``LiveRun``
    the views can show at once; ``LiveRun.fill`` puts the full record in later."""
    rows = record.steps
    assert isinstance(rows, StepRows)
    # Read-only sequences standing in for the lists a LiveRun holds: nothing appends to a
    # finished run's steps, and every reader indexes, slices, iterates or takes ``len``.
    steps = cast(list[LiveStep], LazyLiveSteps(rows))
    finals = cast(list[Step | None], rows)
    return LiveRun(run_id=record.run_id, steps=steps, record=record, finals=finals, light=True)


def put_whole(run: LiveRun, step: Step) -> bool:
    """Puts ``step`` (read whole) into the light ``run``; False when ``run`` is not light."""
    steps: object = run.steps
    if not isinstance(steps, LazyLiveSteps) or not 1 <= step.index <= len(steps):
        return False
    steps.put(step)
    return True


def light_parts(run: LiveRun) -> LightParts | None:
    """What the whole read of the light ``run`` can reuse (``StepRows.parts``); None: ``run``
    is not light, or its light read kept nothing to reuse. On the thread that shows ``run``,
    before the whole read starts: the bodies are copied out of what ``release`` empties."""
    rows = light_rows(run)
    return rows.parts() if rows is not None else None


def light_steps(run: LiveRun) -> LazyLiveSteps | None:
    """A light run's steps (None: its steps are plain lists): ``release`` them off the UI
    thread once the full steps replace them."""
    steps: object = run.steps
    return steps if isinstance(steps, LazyLiveSteps) else None


def light_rows(run: LiveRun) -> StepRows | None:
    """The ``StepRows`` behind a light run's steps (None: its steps are plain lists)."""
    steps: object = run.steps
    return steps.rows if isinstance(steps, LazyLiveSteps) else None
