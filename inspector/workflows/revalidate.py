"""Re-validation, the use case the CLI and the window share: recorded candidate outputs re-judged
by validators, no model call (docs/validator-editor.md, DESIGN §5 ``revalidate``).

``recheck`` and ``revalidate_scenario`` are the command's: a run's own recorded scenario (or the
validators a file gives), strict about a bad file. ``revalidate_runs`` is the window's: the
CURRENT scenario file gives the validators (python files read afresh), each run's recorded
scenario its output plan; a python file that does not compile yields problems at its lines and
``error`` verdicts, and a validator that raises yields a problem at the line it raised. Both are
blocking: the window calls them on a worker thread, with a ``Store`` of that thread's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.asyncrun import run_small
from inspector.core.errors import BadInputError, InspectorError, ScenarioError
from inspector.core.loading import split_ref
from inspector.core.recording import scenario_of
from inspector.core.records import RunRecord
from inspector.core.revalidate import (
    Matrix,
    MatrixRow,
    Revalidation,
    ValidatorSet,
    error_row,
    matrix,
    matrix_row,
    read_validator_file,
    revalidate,
)
from inspector.core.scenario import Scenario
from inspector.core.validators import Python, Validator
from inspector.core.worker.pool import forget
from inspector.resources import resolve_scenario
from inspector.store import RunSummary, Store

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
        rows = run_small(_judge(store, ids, summaries, validators, out, cancelled))
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


def recheck(record: RunRecord, file: Path | None) -> Revalidation:
    """One run re-judged by its scenario's validators, or those ``file`` gives."""
    scenario = scenario_of(record)
    chosen = read_validator_file(file, scenario) if file else ValidatorSet.of(scenario)
    return run_small(revalidate(record, scenario, chosen.compile(scenario)))


def revalidate_scenario(store: Store, scenario: str, file: Path | None) -> Matrix:
    """Every recorded run of ``scenario`` re-judged into a pass/fail matrix; a run that cannot
    be re-validated is an error row, unless ``file`` is at fault (then ``ScenarioError``). The
    caller opens ``store`` (the command, read-only when the disk is full)."""
    rows: list[MatrixRow] = []
    summaries = store.runs(scenario=scenario)
    if not summaries:
        raise BadInputError(f"no recorded run of scenario {scenario!r} in {store.path}")
    for summary in summaries:
        try:
            record = store.load(summary.run_id)
            rows.append(matrix_row(record, recheck(record, file)))
        except ScenarioError as exc:
            if file is not None:
                raise  # the file is at fault, not this run
            rows.append(error_row(summary.run_id, summary.started_at, summary.status, str(exc)))
        except InspectorError as exc:  # e.g. a run still being recorded
            rows.append(error_row(summary.run_id, summary.started_at, summary.status, str(exc)))
    return matrix(scenario, rows)
