"""A small sweep report built from hand-made run facts (no runs needed)."""

from __future__ import annotations

from inspector.sweeps import Arm, RunFacts, SweepReport, SweepSpec, build_report


def small_report() -> SweepReport:
    spec = SweepSpec(
        scenario="demo:sweep",
        arms=[Arm(name="feedback_history=accumulate"), Arm(name="feedback_history=none")],
        repeat=3,
        seed=1,
        baseline="feedback_history=accumulate",
        concurrency=2,
    )
    facts = [
        RunFacts(
            arm=arm,
            rep=rep,
            run_id=f"r{arm}{rep}",
            status="succeeded" if arm == 0 or rep == 0 else "failed",
            termination="stop" if arm == 0 or rep == 0 else "validator_exhausted",
            model="gpt-4o-mini",
            provider="openai",
            input_tokens=120,
            output_tokens=30,
            attempts_used=1 + arm,
        )
        for arm in range(2)
        for rep in range(3)
    ]
    return build_report("sw0123456789", "2026-11-25T10:00:00.000+00:00", spec, facts)
