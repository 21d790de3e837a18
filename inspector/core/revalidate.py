"""Re-validation: validators re-run over a recorded run's candidate outputs, with no model call.

A step is re-judged the way the loop judged it (``docs/engine.md``): a step that ended with a
whole response, not a refusal, not empty; its candidate read with the scenario's output plan
(an output that fails the schema keeps its ``output`` verdict — user validators never see it);
a tool-call step only by ``when = "every_step"`` validators. The verdicts are compared with the
recorded ones by validator name: a *flip* is a validator whose status changed on a step; one
that judges a step only now (a newly added validator) gives a *new verdict*, one that judged it
only then (a removed validator) a *dropped verdict* — neither is a flip.

The validators are the scenario's (python files read afresh from disk, so an edited
``validators.py`` shows its effect), a replacement ``[[validators]]`` list from a TOML file, or
a python file whose functions replace the same-named python validators.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inspector.core.errors import ScenarioError
from inspector.core.output import OutputPlan, read_candidate, scenario_plan
from inspector.core.records import RunRecord, RunStatus, Step, Verdict, VerdictStatus
from inspector.core.scenario import (
    Scenario,
    describe_validation_error,
    read_input_file,
    read_scenario_toml,
)
from inspector.core.validators import (
    Python,
    ValidationContext,
    Validator,
    ValidatorSpec,
    compile_validators,
)
from inspector.core.worker import pool

__all__ = [
    "Flip",
    "Matrix",
    "MatrixRow",
    "Revalidation",
    "StepVerdict",
    "ValidatorSet",
    "error_row",
    "matrix",
    "read_validator_file",
    "revalidate",
]

# Steps whose response is whole: what the loop judged.
_JUDGED_STATUSES = frozenset({"success", "empty", "failed_validation", "validator_error"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepVerdict(Verdict):
    """A verdict of the re-validation, with the step and attempt it judged."""

    step: int
    attempt: int


class Flip(_Model):
    step: int
    validator: str
    before: VerdictStatus | None  # None: the validator did not judge this step then / now
    after: VerdictStatus | None

    @property
    def kind(self) -> str:
        """``flip`` (the status changed), ``new`` (judged only now) or ``dropped`` (only then)."""
        return "new" if self.before is None else "dropped" if self.after is None else "flip"


class Revalidation(_Model):
    """DESIGN §5 ``{run_id, verdicts, flips}``, plus what the verdicts mean for the turn."""

    run_id: str
    verdicts: list[StepVerdict] = Field(default_factory=list)
    flips: list[Flip] = Field(default_factory=list)  # before and after both known, and differ
    new_verdicts: list[Flip] = Field(default_factory=list)  # before is None: a new validator
    dropped_verdicts: list[Flip] = Field(default_factory=list)  # after is None: one removed
    scenario: str = ""
    outputs: int = 0  # candidate outputs re-judged
    accepted_before: int | None = None  # the first step whose recorded verdicts all passed
    accepted_after: int | None = None  # the first step the re-run validators all pass


# ---- which validators ------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidatorSet:
    """Validator specs and the folder their relative ``file.py:name`` references resolve in."""

    specs: Sequence[ValidatorSpec]
    base_dir: Path
    source: str

    @classmethod
    def of(cls, scenario: Scenario) -> ValidatorSet:
        return cls(scenario.validators, scenario.base_dir, scenario.source)

    def compile(self, scenario: Scenario, *, tolerant: bool = False) -> list[Validator]:
        """``tolerant``: a python validator whose file does not load judges ``error``."""
        return compile_validators(
            self.specs,
            self.base_dir,
            scenario.policy.validator_timeout_s,
            source=self.source,
            tool_names=[t.name for t in scenario.tools],
            tolerant=tolerant,
        )


class _ValidatorFile(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a scenario-style file: other tables are ignored

    validators: list[ValidatorSpec]


def _validators_from_toml(path: Path) -> ValidatorSet:
    source = str(path)
    data = read_scenario_toml(read_input_file(path, source), source)
    if "validators" not in data:
        raise ScenarioError(f"{source}: validators: no [[validators]] list in the file")
    try:
        parsed = _ValidatorFile.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(describe_validation_error(source, exc)) from None
    return ValidatorSet(parsed.validators, path.resolve().parent, source)


def _validators_from_python(path: Path, scenario: Scenario) -> ValidatorSet:
    """The scenario's validators, each python one whose name (or function name) is a function
    of ``path`` pointing at that function instead; its name is kept, so verdicts compare."""
    defined = set(pool.function_names(str(path)))  # loaded in a worker, never here
    resolved = path.resolve()
    specs: list[ValidatorSpec] = []
    replaced: list[str] = []
    for spec in scenario.validators:
        if isinstance(spec, Python):
            function = spec.function.rpartition(":")[2]
            name = spec.name or function
            new = next((n for n in (name, function) if n in defined), None)
            if new is not None:
                spec = spec.model_copy(update={"function": f"{resolved}:{new}", "name": name})
                replaced.append(name)
        specs.append(spec)
    if not replaced:
        names = [
            v.name or v.function.rpartition(":")[2]
            for v in scenario.validators
            if isinstance(v, Python)
        ]
        has = f"its python validators: {', '.join(names)}" if names else "it has none"
        raise ScenarioError(
            f"{path}: no function replaces a python validator of {scenario.source} ({has})"
        )
    return ValidatorSet(specs, scenario.base_dir, scenario.source)


def read_validator_file(path: Path, scenario: Scenario) -> ValidatorSet:
    """``--validators FILE``: a ``.toml`` with ``[[validators]]`` replaces the whole list; a
    ``.py`` replaces the same-named python validators. Bad input: ``ScenarioError``, one line."""
    if path.suffix == ".toml":
        return _validators_from_toml(path)
    if path.suffix == ".py":
        return _validators_from_python(path, scenario)
    raise ScenarioError(f"{path}: expected a .toml file with [[validators]] or a .py file")


# ---- re-judging one run ----------------------------------------------------------------------


def _accepted(verdicts: Sequence[Verdict]) -> bool:
    return all(v.ok for v in verdicts)


def _flips(step: int, before: Sequence[Verdict], after: Sequence[Verdict]) -> list[Flip]:
    if len(before) == len(after) and all(
        a.validator == b.validator and a.status == b.status
        for a, b in zip(before, after, strict=True)
    ):
        return []  # the common case, without building dictionaries
    old = {v.validator: v.status for v in before}
    new = {v.validator: v.status for v in after}
    names = list(new) + [n for n in old if n not in new]
    return [
        Flip(step=step, validator=n, before=old.get(n), after=new.get(n))
        for n in names
        if old.get(n) != new.get(n)
    ]


@dataclass
class _ToJudge:
    """A step the loop judged: its candidate (or a tool-call step's text), its context, and
    its verdicts as they come in (the schema check's at once)."""

    step: Step
    is_candidate: bool
    value: Any = None
    ctx: ValidationContext | None = None
    verdicts: list[Verdict] = field(default_factory=list)


def _to_judge(step: Step, plan: OutputPlan, every_step: bool, name: str) -> _ToJudge | None:
    """What re-judging ``step`` takes; None for a step the loop did not judge."""
    response = step.response
    if step.status not in _JUDGED_STATUSES or response is None or response.refusal:
        return None
    if not response.text.strip() and not response.tool_calls:
        return None  # an empty reply: its verdict is the loop's, not a validator's
    candidate = read_candidate(plan, response)
    if candidate.present and candidate.problem is not None:
        # The schema check; user validators never saw it.
        return _ToJudge(step, True, verdicts=[candidate.problem])
    if not candidate.present and not every_step:
        return None
    calls = [] if candidate.present else [c.model_dump() for c in response.tool_calls]
    ctx = ValidationContext(
        attempt=step.attempt,
        step=step.index,
        messages=step.request.messages,
        pending_tool_calls=calls,
        scenario=name,
    )
    value = candidate.value if candidate.present else response.text
    return _ToJudge(step, candidate.present, value, ctx)


async def revalidate(
    record: RunRecord, scenario: Scenario, validators: Sequence[Validator]
) -> Revalidation:
    """Re-judges every recorded candidate output of ``record`` (``scenario``: what it was run
    with, for its output plan) with ``validators``. Each validator judges every output before
    the next one does (``Validator.judge_many``: a python validator's calls go to its worker
    in batches); the verdicts of a step stay in validator order."""
    plan = scenario_plan(scenario)
    every_step = any(v.spec.when == "every_step" for v in validators)
    judged = [
        j
        for j in (_to_judge(step, plan, every_step, scenario.name) for step in record.steps)
        if j is not None
    ]
    for validator in validators:
        # A tool-call step is judged by `every_step` validators only, as the loop does.
        mine = [
            j
            for j in judged
            if j.ctx is not None and (j.is_candidate or validator.spec.when == "every_step")
        ]
        got = await validator.judge_many([(j.value, j.ctx) for j in mine if j.ctx is not None])
        for j, verdict in zip(mine, got, strict=True):
            j.verdicts.append(verdict)
    # Plain dicts, validated into the result once at the end: building one pydantic object per
    # verdict (even with model_construct) cost more than judging it (bench/replay.py).
    verdicts: list[dict[str, Any]] = []
    changes: list[Flip] = []
    outputs = 0
    accepted_before: int | None = None
    accepted_after: int | None = None
    for j in judged:
        step, new = j.step, j.verdicts
        where = {"step": step.index, "attempt": step.attempt}
        verdicts += [{**v.__dict__, **where} for v in new]
        changes += _flips(step.index, step.verdicts, new)
        if j.is_candidate:
            outputs += 1
            if accepted_before is None and _accepted(step.verdicts):
                accepted_before = step.index
            if accepted_after is None and _accepted(new):
                accepted_after = step.index
    return Revalidation.model_validate(
        {
            "run_id": record.run_id,
            "verdicts": verdicts,
            "flips": [c for c in changes if c.kind == "flip"],
            "new_verdicts": [c for c in changes if c.kind == "new"],
            "dropped_verdicts": [c for c in changes if c.kind == "dropped"],
            "scenario": record.scenario,
            "outputs": outputs,
            "accepted_before": accepted_before,
            "accepted_after": accepted_after,
        }
    )


# ---- across runs: the pass/fail matrix ------------------------------------------------------


class MatrixRow(_Model):
    run_id: str
    started_at: str
    status: RunStatus  # as recorded
    passed_before: bool = False  # a recorded candidate passed every validator
    passed_after: bool = False  # a candidate passes every re-run validator
    accepted_after: int | None = None  # the step of the first such candidate
    cells: dict[str, list[VerdictStatus]] = Field(default_factory=dict)  # per judged step
    flips: int = 0
    error: str | None = None  # why this run could not be re-validated (e.g. a file is gone)


class Matrix(_Model):
    """Every recorded run of one scenario re-validated: rows are runs, columns validators."""

    scenario: str
    validators: list[str] = Field(default_factory=list)
    rows: list[MatrixRow] = Field(default_factory=list)


def matrix_row(record: RunRecord, result: Revalidation) -> MatrixRow:
    cells: dict[str, list[VerdictStatus]] = {}
    for v in result.verdicts:
        cells.setdefault(v.validator, []).append(v.status)
    return MatrixRow(
        run_id=record.run_id,
        started_at=record.started_at,
        status=record.status,
        passed_before=result.accepted_before is not None,
        passed_after=result.accepted_after is not None,
        accepted_after=result.accepted_after,
        cells=cells,
        flips=len(result.flips),
    )


def error_row(run_id: str, started_at: str, status: str, error: str) -> MatrixRow:
    """The row of a run that could not be re-validated (still being recorded, a file gone):
    ``error`` says why; a store status that is no run's ending ("running") reads ``error``."""
    known: RunStatus = status if status in get_args(RunStatus) else "error"  # type: ignore[assignment]
    return MatrixRow(run_id=run_id, started_at=started_at, status=known, error=error)


def matrix(scenario: str, rows: Sequence[MatrixRow]) -> Matrix:
    """The columns are every validator name, in order of first appearance."""
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row.cells))
    return Matrix(scenario=scenario, validators=list(names), rows=list(rows))
