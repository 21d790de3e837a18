"""Policy sweeps (issue 15): N runs per arm of a grid of scenario settings, and their statistics.

Pure: no Qt, HTTP or SQLite (an import-linter contract). The command line and a window read a
sweep's runs through the store (``Store.sweep`` for the spec, ``Store.sweep_runs`` for the runs)
and call ``build_report`` over them, so both show the same numbers; ``run_jobs`` runs a sweep on
any event loop (qasync's too) with injected providers and sink.
"""

from inspector.sweeps.grid import build_arms, run_seed
from inspector.sweeps.model import Arm, ArmStats, Cost, RunFacts, SweepReport, SweepSpec
from inspector.sweeps.report import build_report
from inspector.sweeps.runner import Job, Progress, run_jobs

__all__ = [
    "Arm",
    "ArmStats",
    "Cost",
    "Job",
    "Progress",
    "RunFacts",
    "SweepReport",
    "SweepSpec",
    "build_arms",
    "build_report",
    "run_jobs",
    "run_seed",
]
