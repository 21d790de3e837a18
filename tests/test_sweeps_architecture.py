"""inspector.sweeps is pure (a window calls it): no Qt, HTTP or SQLite when imported, and a
scripted sweep from the command line loads neither Qt nor httpx. Its public surface is pinned."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import inspector.sweeps

MODULES = sorted(
    f"inspector.sweeps.{m.name}" for m in pkgutil.iter_modules(inspector.sweeps.__path__)
)


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return {m.split(".")[0] for m in json.loads(out.strip().splitlines()[-1])}


def test_sweeps_import_no_qt_http_or_sqlite() -> None:
    assert "inspector.sweeps.stats" in MODULES
    loaded = _loaded_after("\n".join(f"import {m}" for m in MODULES))
    assert loaded.isdisjoint({"PySide6", "qasync", "httpx", "sqlite3", "_sqlite3"})


def test_a_scripted_sweep_needs_no_qt_and_no_httpx(tmp_path: object) -> None:
    argv = ["sweep", "demo:sweep", "--repeat", "2", "--db", f"{tmp_path}/s.db"]
    code = (
        "import io, contextlib\n"
        "from inspector.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main({argv!r}) == 0\n"
    )
    loaded = _loaded_after(code)
    assert loaded.isdisjoint({"PySide6", "qasync", "httpx"})


def test_the_public_surface() -> None:
    assert inspector.sweeps.__all__ == [
        "Arm", "ArmStats", "Cost", "Job", "Progress", "RunFacts", "SweepReport", "SweepSpec",
        "build_arms", "build_report", "run_jobs", "run_seed",
    ]  # fmt: skip
