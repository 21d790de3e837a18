"""Instant re-validation in the window: the recorded candidate outputs of the shown run (or of
every run of the scenario) re-judged by the validators as they are on disk now, no model call.

``revalidate_runs`` is the whole job, run on a worker thread with a ``Store`` of its own: the
CURRENT scenario file gives the validators (python files read afresh), each run's recorded
scenario gives its output plan (``inspector.core.revalidate``). A python validators file that
does not compile yields problems at its lines and ``error`` verdicts, not a failure; a
validator that raises yields an ``error`` verdict and a problem at the line it raised.

``Revalidator`` is the Qt side: a newer request supersedes an older one, which stops at its next
run and whose result is dropped. The job runs on a daemon thread, not the loop's executor: user
code that hangs on import must neither take a thread the window's store reads need nor hold up
the app's exit.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.app.runner import error_line
from inspector.core.errors import InspectorError
from inspector.core.loading import split_ref
from inspector.core.recording import scenario_of
from inspector.core.revalidate import (
    Matrix,
    MatrixRow,
    Revalidation,
    ValidatorSet,
    error_row,
    matrix,
    matrix_row,
    revalidate,
)
from inspector.core.scenario import Scenario
from inspector.core.threads import in_daemon_thread
from inspector.core.validators import Python, Validator
from inspector.core.worker.pool import forget
from inspector.resources import resolve_scenario
from inspector.store import RunSummary, Store

__all__ = [
    "Problem",
    "RevalidationResult",
    "Revalidator",
    "python_files",
    "revalidate_runs",
    "syntax_problem",
]

Problem = tuple[int, str]  # (1-based line, message), as PythonFileEditor.show_problems takes


@dataclass
class RevalidationResult:
    scenario: str  # its name
    ref: str  # the scenario reference re-validated against (path or demo:NAME)
    runs: list[Revalidation] = field(default_factory=list)  # in the order asked
    matrix: Matrix | None = None  # when several runs were asked
    problems: dict[Path, list[Problem]] = field(default_factory=dict)  # per python file
    errors: list[str] = field(default_factory=list)  # runs that could not be re-validated

    @property
    def flips(self) -> int:
        return sum(len(r.flips) for r in self.runs)


def python_files(scenario: Scenario) -> list[Path]:
    """The python files the scenario's python validators reference, resolved, in order."""
    files: dict[Path, None] = {}
    for spec in scenario.validators:
        if isinstance(spec, Python):
            try:
                file, _ = split_ref(spec.function, "validator")
            except InspectorError:
                continue  # the re-validation reports it as that validator's error verdict
            files[(scenario.base_dir / file).resolve()] = None
    return list(files)


def syntax_problem(text: str, path: Path) -> Problem | None:
    """The line and message of ``text``'s syntax error, or None when it compiles."""
    try:
        compile(text, str(path), "exec")
    except SyntaxError as exc:
        return exc.lineno or 1, f"SyntaxError: {exc.msg}"
    except ValueError as exc:  # e.g. a NUL byte
        return 1, f"{type(exc).__name__}: {exc}"
    return None


def _file_problems(files: list[Path]) -> dict[Path, list[Problem]]:
    problems: dict[Path, list[Problem]] = {}
    for path in files:
        forget(path)  # two saves within one mtime tick must still load the new text
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # the validators' error verdicts say the file cannot be loaded
        problem = syntax_problem(text, path)
        problems[path] = [problem] if problem else []
    return problems


def _raise_problems(result: Revalidation, problems: dict[Path, list[Problem]]) -> None:
    """A problem at the line each python validator raised (or its file failed to load), unless
    that line has one already (the syntax error found by compiling the file)."""
    for v in result.verdicts:
        if v.location is None:
            continue
        found = problems.setdefault(Path(v.location.file), [])
        if all(line != v.location.line for line, _ in found):
            found.append((v.location.line, f"{v.validator}: {v.reason}"))


def revalidate_runs(
    db: Path,
    ref: str,
    run_ids: list[str],
    *,
    every_run: bool = False,
    cancelled: Callable[[], bool] = lambda: False,
) -> RevalidationResult:
    """Re-judges ``run_ids`` (``every_run``: every recorded run of the scenario, into a matrix)
    with the validators of scenario ``ref`` as they are on disk now. No run: only the files'
    problems. ``cancelled`` is asked before each run (true: the rest are skipped). Blocking:
    call it on a worker thread. Bad scenario input: ``InspectorError``."""
    current = resolve_scenario(ref)
    problems = _file_problems(python_files(current))
    validators = ValidatorSet.of(current).compile(current, tolerant=True)
    out = RevalidationResult(scenario=current.name, ref=ref, problems=problems)
    with Store.open(db) as store:
        summaries = {s.run_id: s for s in store.runs(scenario=current.name)} if every_run else {}
        ids = list(summaries) if every_run else run_ids
        rows = asyncio.run(_judge(store, ids, summaries, validators, out, cancelled))
    if every_run or len(ids) > 1:
        out.matrix = matrix(current.name, rows)
    return out


async def _judge(
    store: Store,
    run_ids: list[str],
    summaries: dict[str, RunSummary],
    validators: list[Validator],
    out: RevalidationResult,
    cancelled: Callable[[], bool],
) -> list[MatrixRow]:
    rows: list[MatrixRow] = []
    for run_id in run_ids:
        if cancelled():
            break
        try:
            record = store.load(run_id)
            result = await revalidate(record, scenario_of(record), validators)
        except InspectorError as exc:  # a run still recording, a recorded file gone...
            out.errors.append(f"run {run_id}: {exc}")
            summary = summaries.get(run_id)
            started, status = (summary.started_at, summary.status) if summary else ("", "")
            rows.append(error_row(run_id, started, status, str(exc)))
            continue
        _raise_problems(result, out.problems)
        out.runs.append(result)
        rows.append(matrix_row(record, result))
    return rows


class Revalidator(QObject):
    """Runs ``revalidate_runs`` off the UI thread; emits ``finished(RevalidationResult)`` or
    ``failed(one line)`` for the newest request only."""

    finished = Signal(object)  # RevalidationResult
    failed = Signal(str)

    def __init__(self, db: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._db = db
        self._request = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def revalidate(self, ref: str, run_ids: list[str], *, every_run: bool = False) -> None:
        """``run_ids`` re-judged by scenario ``ref``'s validators (``every_run``: all of the
        scenario's recorded runs instead)."""
        self._request += 1
        request = self._request
        job = functools.partial(
            revalidate_runs,
            self._db,
            ref,
            list(run_ids),
            every_run=every_run,
            cancelled=lambda: request != self._request,
        )
        self._task = asyncio.get_event_loop().create_task(self._run(request, job))

    def cancel(self) -> None:
        """Forgets the request in flight: it stops at its next run; its result is dropped."""
        self._request += 1

    async def _run(self, request: int, job: Callable[[], RevalidationResult]) -> None:
        try:
            result: RevalidationResult = await in_daemon_thread(job)
        except (InspectorError, OSError) as exc:
            if request == self._request:
                self.failed.emit(f"Cannot re-validate: {exc}")
            return
        except Exception as exc:  # a bug of ours, say: one line, never "Re-validating…" forever
            if request == self._request:
                self.failed.emit(f"Cannot re-validate: {error_line(exc)}")
            return
        if request == self._request:
            self.finished.emit(result)
