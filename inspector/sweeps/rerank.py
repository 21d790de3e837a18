"""Re-validation across a sweep: every counted run's recorded outputs re-judged by edited
validators (no model call; ``inspector.core.revalidate``), the arms' pass rates recomputed, and
the arms whose place in the pass-rate ranking changes named."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from inspector.sweeps.model import RunFacts, SweepReport


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ArmChange(_Model):
    name: str
    pass_before: float | None
    pass_after: float | None
    rank_before: int  # 1 = the highest pass rate
    rank_after: int


class SweepRevalidation(_Model):
    sweep_id: str
    runs: int  # runs re-judged
    flipped: int  # runs whose pass / not-pass changed
    arms: list[ArmChange] = Field(default_factory=list)
    rank_changed: list[str] = Field(default_factory=list)  # arm names, in arm order


def rejudged(facts: RunFacts, passes: bool) -> RunFacts:
    """The run as if its validators had been the new ones: a candidate that passes them all
    makes it ``succeeded``; a run that succeeded without one ``failed``. Fallback and error
    runs keep their status unless an output now passes (an error run has none to re-judge)."""
    if passes:
        status = "succeeded"
    elif facts.status == "succeeded":
        status = "failed"
    else:
        status = facts.status
    return facts.model_copy(update={"status": status})


def ranks(report: SweepReport) -> dict[str, int]:
    """Competition ranking by pass rate (ties share a place; an arm without runs is last)."""
    rates = {a.name: (a.pass_rate if a.pass_rate is not None else -1.0) for a in report.arms}
    return {name: 1 + sum(r > rate for r in rates.values()) for name, rate in rates.items()}


def compare(
    before: SweepReport, after: SweepReport, passes: Mapping[str, bool], old: Sequence[RunFacts]
) -> SweepRevalidation:
    was = {f.run_id: f.status == "succeeded" for f in old}
    rb, ra = ranks(before), ranks(after)
    arms = [
        ArmChange(
            name=b.name,
            pass_before=b.pass_rate,
            pass_after=a.pass_rate,
            rank_before=rb[b.name],
            rank_after=ra[b.name],
        )
        for b, a in zip(before.arms, after.arms, strict=True)
    ]
    return SweepRevalidation(
        sweep_id=before.sweep_id,
        runs=len(passes),
        flipped=sum(was.get(run_id) != ok for run_id, ok in passes.items()),
        arms=arms,
        rank_changed=[c.name for c in arms if c.rank_before != c.rank_after],
    )


def format_revalidation(result: SweepRevalidation) -> str:
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{v * 100:.1f}%"

    rows = [["arm", "pass before", "pass now", "rank before", "rank now"]]
    rows += [
        [c.name, pct(c.pass_before), pct(c.pass_after), str(c.rank_before), str(c.rank_after)]
        for c in result.arms
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        f"sweep {result.sweep_id} · {result.runs} run(s) re-judged, no model call · "
        f"{result.flipped} run(s) changed pass/fail"
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if result.rank_changed:
        moved = ", ".join(
            f"{c.name} ({c.rank_before} → {c.rank_after})"
            for c in result.arms
            if c.name in result.rank_changed
        )
        lines.append(f"ranking changed: {moved}")
    else:
        lines.append("ranking unchanged")
    return "\n".join(lines)
