"""Live verdicts: ``--validators FILE`` judges each final answer as it arrives.

The file is what ``revalidate --validators`` takes — a TOML file with ``[[validators]]``, or a
python file; with no scenario to replace validators in, every public function a python file
defines is a validator (``def check(output, ctx)``, as in a scenario). The specs go into each
proxied run's scenario, so ``revalidate RUN_ID`` re-judges it later like any run — with the file
as it is then.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.errors import ScenarioError
from inspector.core.loading import load_module
from inspector.core.output import read_candidate, scenario_plan
from inspector.core.records import StepRequest, StepResponse, Verdict
from inspector.core.revalidate import ValidatorSet, read_validator_file
from inspector.core.scenario import Scenario
from inspector.core.validators import Python, ValidationContext, Validator, judge_all

__all__ = ["ValidatorFile", "judge_reply", "load_validators"]


@dataclass(frozen=True)
class ValidatorFile:
    """The specs of ``--validators FILE`` and the folder their relative references resolve in."""

    specs: list[dict[str, Any]]  # as a scenario's [[validators]] holds them
    base_dir: Path


def _python_specs(path: Path) -> list[dict[str, Any]]:
    module = load_module(path, str(path))
    resolved = path.resolve()
    names = [
        name
        for name, obj in vars(module).items()
        if inspect.isfunction(obj)
        and obj.__module__ == module.__name__
        and not name.startswith("_")
    ]
    if not names:
        raise ScenarioError(f"{path}: defines no public function to use as a validator")
    return [Python(kind="python", function=f"{resolved}:{n}", name=n).model_dump() for n in names]


def load_validators(path: Path) -> ValidatorFile:
    """Reads ``path`` once at start; bad input is a one-line ``ScenarioError``."""
    if path.suffix == ".py":
        return ValidatorFile(_python_specs(path), path.resolve().parent)
    if path.suffix != ".toml":
        raise ScenarioError(f"{path}: expected a .toml file with [[validators]] or a .py file")
    # read_validator_file needs no scenario for a TOML file.
    chosen: ValidatorSet = read_validator_file(path, None)  # type: ignore[arg-type]
    return ValidatorFile([s.model_dump(exclude_none=True) for s in chosen.specs], chosen.base_dir)


async def judge_reply(
    scenario: Scenario,
    validators: list[Validator],
    request: StepRequest,
    response: StepResponse,
    *,
    attempt: int,
    index: int,
) -> list[Verdict]:
    """The verdicts on a final answer, read as the run's scenario reads outputs (its schema, if
    the request asked for one); none for an empty reply or a refusal (the loop's rule)."""
    if not validators or response.refusal or not (response.text.strip() or response.tool_calls):
        return []
    candidate = read_candidate(scenario_plan(scenario), response)
    if candidate.problem is not None:
        return [candidate.problem]
    ctx = ValidationContext(
        attempt=attempt, step=index, messages=request.messages, scenario=scenario.name
    )
    return await judge_all(validators, candidate.value, ctx)
