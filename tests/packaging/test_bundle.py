"""Builds the standalone app with ``packaging/agent-inspector.spec`` and runs the frozen binary.

Slow (a PyInstaller build: ~40 s on 2 cores): marked ``package``, run by ``make package-test``;
skipped where PyInstaller is not installed (``pip install -e '.[package]'``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import inspector
from inspector.app.shell.about import normalized, runtime_distributions

pytest.importorskip("PyInstaller", reason="PyInstaller is not installed (.[package])")

pytestmark = [pytest.mark.package, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "agent-inspector.spec"
NAME = "agent-inspector"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The built one-dir bundle (built once for this module, outside the checkout's dist/)."""
    out = tmp_path_factory.mktemp("bundle")
    build = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(out / "dist"), "--workpath", str(out / "build"), str(SPEC)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-4000:]
    assert "bundle: " in build.stdout, "the spec reports the bundle size"
    yield out / "dist" / NAME
    shutil.rmtree(out, ignore_errors=True)  # ~200 MB: not kept among pytest's last temp dirs


def _frozen(bundle: Path, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # The frozen app must not lean on the checkout or the venv.
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env |= {"QT_QPA_PLATFORM": "offscreen", "AGENT_INSPECTOR_DB": str(tmp_path / "runs.sqlite3")}
    return subprocess.run(
        [str(bundle / NAME), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_frozen_self_test_passes_headless(bundle: Path, tmp_path: Path) -> None:
    result = _frozen(bundle, "gui", "--self-test", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-test: ok   the run succeeded" in result.stdout
    assert "FAIL" not in result.stdout


def test_frozen_cli_runs_a_demo_from_the_bundled_resources(bundle: Path, tmp_path: Path) -> None:
    result = _frozen(bundle, "run", "demo:retry-feedback", "--json", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["status"] == "succeeded"
    assert record["scenario_origin"] == "demo:retry-feedback"
    # The demo was read from inside the bundle, where a wheel keeps it, not from the checkout.
    assert Path(record["scenario_dir"]).is_relative_to(bundle.resolve())
    assert Path(record["scenario_dir"]).parts[-3:] == ("inspector", "_resources", "demos")


def test_frozen_app_records_and_exports_a_run_as_html(bundle: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "runs.sqlite3")
    result = _frozen(bundle, "run", "demo:step-cap", "--db", db, "--json", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]
    page = _frozen(bundle, "export", run_id, "--format", "html", "--db", db, tmp_path=tmp_path)
    assert page.returncode == 0, page.stderr
    assert "<html" in page.stdout and run_id in page.stdout


def test_frozen_app_runs_user_code_in_a_worker_of_its_own(bundle: Path, tmp_path: Path) -> None:
    # The frozen app has no `python -m`: it starts itself with --user-code-worker.
    (tmp_path / "checks.py").write_text(
        "import os\ndef short(output, ctx):\n    print('judged in', os.getpid())\n"
        "    return len(output) < 100\n",
        encoding="utf-8",
    )
    (tmp_path / "s.toml").write_text(
        'name = "frozen"\n[prompt]\nuser = "hi"\n'
        '[[validators]]\nkind = "python"\nfunction = "checks.py:short"\n'
        '[[script]]\ntext = "hello"\n',
        encoding="utf-8",
    )
    result = _frozen(bundle, "run", str(tmp_path / "s.toml"), "--json", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    [verdict] = json.loads(result.stdout)["steps"][0]["verdicts"]
    assert verdict["status"] == "pass"
    assert verdict["captured"].startswith("judged in ")


def test_frozen_app_lists_every_demo_of_the_checkout(bundle: Path, tmp_path: Path) -> None:
    result = _frozen(bundle, "demos", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    for demo in sorted((ROOT / "resources" / "demos").glob("*.toml")):
        assert f"demo:{demo.stem}" in result.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="library names are Linux's")
def test_bundle_carries_icons_and_licence_metadata_but_no_unused_qt(bundle: Path) -> None:
    internal = bundle / "_internal"
    assert (internal / "inspector" / "_resources" / "icons" / "agent-inspector.svg").is_file()
    # The About dialog reads versions and licences from these: every runtime distribution's.
    bundled = {normalized(p.name.split("-")[0]) for p in internal.glob("*.dist-info")}
    assert set(runtime_distributions()) <= bundled
    assert {"agent-inspector", "pydantic", "httpx", "pyside6-essentials", "keyring"} <= bundled
    qt_libs = {p.name for p in (internal / "PySide6" / "Qt" / "lib").iterdir()}
    assert "libQt6Widgets.so.6" in qt_libs
    assert not [lib for lib in qt_libs if lib.startswith(("libQt6Qml", "libQt6Quick"))]
    assert not (internal / "PySide6" / "Qt" / "translations").exists()
    assert not list(internal.glob("PySide6/QtQml*"))


@pytest.mark.skipif(sys.platform != "linux", reason="Linux desktop integration")
def test_linux_install_script_installs_a_runnable_app_and_removes_it(
    bundle: Path, tmp_path: Path
) -> None:
    prefix = tmp_path / "prefix"
    script = ROOT / "packaging" / "linux" / "install.sh"
    env = os.environ | {"AGENT_INSPECTOR_BUNDLE": str(bundle)}
    subprocess.run([str(script), str(prefix)], env=env, check=True, capture_output=True)
    desktop = (prefix / "share" / "applications" / "agent-inspector.desktop").read_text()
    assert f"Exec={prefix}/lib/agent-inspector/agent-inspector %f" in desktop
    assert (
        prefix / "share" / "icons" / "hicolor" / "48x48" / "apps" / "agent-inspector.png"
    ).is_file()
    assert list((prefix / "share" / "metainfo").glob("*.metainfo.xml"))
    version = _frozen(prefix / "bin", "--version", tmp_path=tmp_path)
    assert version.stdout.strip() == f"agent-inspector {inspector.__version__}"
    subprocess.run([str(script), "--remove", str(prefix)], env=env, check=True, capture_output=True)
    assert not (prefix / "bin" / "agent-inspector").exists()
    assert not (prefix / "lib" / "agent-inspector").exists()
