"""The dependency direction of STYLE.md, checked in a fresh interpreter: the engine imports no
Qt, HTTP or SQLite, and the CLI runs a turn without Qt (so it works with no display)."""

from __future__ import annotations

import json
import pathlib
import pkgutil
import subprocess
import sys

import inspector.core

CORE_MODULES = sorted(
    f"inspector.core.{m.name}" for m in pkgutil.iter_modules(inspector.core.__path__)
)
GUI = ("PySide6", "qasync")
IO = ("httpx", "sqlite3", "_sqlite3")


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return {m.split(".")[0] for m in json.loads(out.strip().splitlines()[-1])}


def test_core_modules_are_all_checked() -> None:
    assert "inspector.core.loop" in CORE_MODULES
    assert len(CORE_MODULES) >= 10


def test_core_imports_no_qt_http_or_sqlite() -> None:
    loaded = _loaded_after("\n".join(f"import {m}" for m in CORE_MODULES))
    assert loaded.isdisjoint(GUI + IO), loaded & set(GUI + IO)


def test_cli_run_needs_no_qt() -> None:
    code = (
        "import io, contextlib\n"
        "from inspector.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['run', 'demo:empty-final', '--json']) == 0\n"
    )
    loaded = _loaded_after(code)
    assert loaded.isdisjoint(GUI), loaded & set(GUI)


def test_core_sources_never_name_forbidden_imports() -> None:
    # Belt and braces for lazy imports inside functions, which the probes above would miss.
    import pathlib
    import re

    pattern = re.compile(r"^\s*(from|import)\s+(PySide6|qasync|httpx|sqlite3)\b", re.M)
    root = pathlib.Path(inspector.core.__path__[0])
    offenders = [p.name for p in root.glob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_the_window_package_has_no_import_cycle() -> None:
    """Features never import back into the window (import-linter's contracts say who may import
    whom; this says no chain of imports inside ``inspector.app`` comes back to where it began)."""
    import grimp

    graph = grimp.build_graph("inspector")
    app = sorted(m for m in graph.modules if m == "inspector.app" or m.startswith("inspector.app."))
    cycles = []
    for module in app:
        for imported in graph.find_modules_directly_imported_by(module):
            if not imported.startswith("inspector.app") or imported == "inspector.app":
                continue
            if graph.chain_exists(importer=imported, imported=module):
                cycles.append(f"{module} -> {imported} -> … -> {module}")
    assert cycles == []


def test_help_imports_no_engine_store_or_event_loop() -> None:
    """``agent-inspector --help`` stays fast: every command module imports its heavy things
    inside ``main`` (an ``import asyncio`` at the top of one cost ~50 ms, a third of --help)."""
    code = (
        "import io, contextlib, sys, json\n"
        "from inspector.cli import main\n"
        "try:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    heavy = {"asyncio", "sqlite3", "pydantic", "httpx", "PySide6", "inspector.core.loop", "tomllib"}
    assert loaded.isdisjoint(heavy), loaded & heavy
    assert not [m for m in loaded if m.startswith("inspector.store")]


def _probe(code: str) -> object:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nprint(json.dumps(result))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_run_without_user_code_starts_no_worker(tmp_path: pathlib.Path) -> None:
    """A scripted scenario with no python function: no worker process, and neither the regex
    engine (no regex validator) nor multiprocessing is imported."""
    code = (
        "import io, contextlib, json, sys\n"
        "from inspector.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['run', 'demo:empty-final', '--db', {str(tmp_path / 'r.db')!r}]) == 0\n"
        "from inspector.core.worker import pool\n"
        "heavy = ('regex', 'multiprocessing')\n"
        "result = [pool.live_workers(), [m for m in heavy if m in sys.modules]]"
    )
    assert _probe(code) == [[], []]


def test_a_worker_starts_before_the_engine_is_imported(tmp_path: pathlib.Path) -> None:
    """A scenario naming a python function has its worker started (loading the function) as
    soon as the file is read, before pydantic, jsonschema, the engine and the store are
    imported (their imports then overlap the worker's start-up), and the turn uses that
    worker."""
    (tmp_path / "checks.py").write_text("def ok(output, ctx):\n    return None\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'name = "s"\n[prompt]\nuser = "hi"\n'
        '[[validators]]\nkind = "python"\nfunction = "checks.py:ok"\n'
        '[[script]]\ntext = "done"\n',
        encoding="utf-8",
    )
    code = (
        "import io, contextlib, json, sys\n"
        "from inspector.core.worker import pool\n"
        "heavy = ('pydantic', 'jsonschema', 'inspector.core.scenario', 'inspector.core.loop',\n"
        "         'inspector.store')\n"
        "seen, started, real = [], [], pool.start\n"
        "def start(targets=()):\n"
        "    seen.append([m for m in heavy if m in sys.modules])\n"
        "    real(targets)\n"
        "    started.extend(pool.live_workers())\n"
        "pool.start = start\n"
        "from inspector.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['run', {str(scenario)!r}, '--db', {str(tmp_path / 'r.db')!r}]) == 0\n"
        "result = [seen, pool.live_workers() == started]"
    )
    assert _probe(code) == [[[]], True]
