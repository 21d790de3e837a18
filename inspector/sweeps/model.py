"""A sweep's records: its spec (stored, so ``--resume`` runs the same grid), the facts of each
run the statistics read, and the report whose ``model_dump`` is ``sweep --json`` and the JSON
export."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from inspector.sweeps.stats import Interval, Summary

SWEEP_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Arm(_Model):
    """One variant: a name and the overrides (``SECTION.KEY=VALUE``) it applies."""

    name: str
    overrides: list[str] = Field(default_factory=list)


class SweepSpec(_Model):
    version: int = SWEEP_VERSION
    scenario: str  # the scenario as given: demo:NAME or an absolute path
    overrides: list[str] = Field(default_factory=list)  # --set, for every arm
    arms: list[Arm]
    repeat: int = Field(ge=1)
    seed: int
    baseline: str  # an arm's name
    concurrency: int = Field(ge=1)

    def slots(self) -> list[tuple[int, int]]:
        """Every (arm, repetition), repetition-major: a sweep cut short has every arm at about
        the same count."""
        return [(arm, rep) for rep in range(self.repeat) for arm in range(len(self.arms))]


class RunFacts(_Model):
    """One run of a sweep as the store lists it (``Store.sweep_runs``)."""

    arm: int
    rep: int
    run_id: str
    status: str  # a RunStatus, or "running"
    termination: str | None = None
    started_at: str = ""
    duration_ms: float = 0.0
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    provider: str = ""
    model: str = ""
    attempts_used: int | None = None
    transport_retries: int | None = None


class Cost(_Model):
    """US dollars from the genai-prices table; ``None`` = unknown (``note`` says why)."""

    per_run: float | None = None
    per_accepted: float | None = None
    total: float | None = None
    note: str = ""


class VersusBaseline(_Model):
    """This arm's pass rate minus the baseline's, its 95% interval, and Fisher's exact p."""

    baseline: str
    difference: float
    interval: Interval
    p_value: float


class ArmStats(_Model):
    name: str
    overrides: list[str] = Field(default_factory=list)
    runs: int = 0  # finished runs counted (one per repetition)
    missing: int = 0  # repetitions without a finished run (cancelled, interrupted, not run)
    passed: int = 0  # status succeeded
    pass_rate: float | None = None
    pass_interval: Interval = Field(default_factory=lambda: Interval(low=0.0, high=1.0))
    rates: dict[str, float] = Field(default_factory=dict)  # fallback, failed, error
    terminations: dict[str, int] = Field(default_factory=dict)
    attempts: Summary = Field(default_factory=Summary)
    steps: Summary = Field(default_factory=Summary)
    input_tokens: Summary = Field(default_factory=Summary)
    output_tokens: Summary = Field(default_factory=Summary)
    latency_ms: Summary = Field(default_factory=Summary)
    transport_retries: int = 0
    cost: Cost = Field(default_factory=Cost)
    versus_baseline: VersusBaseline | None = None
    pareto: bool = False  # on the cost / pass-rate front


class SweepReport(_Model):
    version: int = SWEEP_VERSION
    sweep_id: str
    scenario: str
    created_at: str
    repeat: int
    seed: int
    baseline: str
    runs: int  # finished runs counted over all arms
    expected: int  # arms x repeat
    pareto_axis: Literal["cost", "tokens"] = "cost"  # tokens when some arm's cost is unknown
    arms: list[ArmStats]
    spec: dict[str, Any] = Field(default_factory=dict)
