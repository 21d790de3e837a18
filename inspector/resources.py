"""Bundled resources (demo scenarios, icons, themes) via ``importlib.resources``.

A wheel or a frozen bundle carries them as ``inspector/_resources`` (mapped at build time from
the top-level ``resources/`` folder); a source checkout, editable install included, reads that
folder directly.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.core.errors import ScenarioError
from inspector.core.scenario_file import ScenarioTables, read_scenario_file

if TYPE_CHECKING:  # the engine's models are imported when a scenario is validated
    from inspector.core.scenario import Scenario

DEMO_PREFIX = "demo:"


def resources_dir() -> Path:
    bundled = files("inspector") / "_resources"
    if bundled.is_dir():
        return Path(str(bundled))
    return Path(__file__).resolve().parent.parent / "resources"


def demo_names() -> list[str]:
    return sorted(p.stem for p in (resources_dir() / "demos").glob("*.toml"))


def demo_path(name: str) -> Path:
    path = resources_dir() / "demos" / f"{name}.toml"
    if not path.is_file():
        available = ", ".join(demo_names()) or "none"
        raise ScenarioError(f"{DEMO_PREFIX}{name}: no such demo (available: {available})")
    return path


def resolve_scenario(ref: str, overrides: list[str] | None = None) -> Scenario:
    """``ref`` is a path to a scenario TOML file or ``demo:NAME``."""
    from inspector.core.scenario import scenario_from_tables

    return scenario_from_tables(read_scenario_ref(ref), overrides)


def read_scenario_ref(ref: str) -> ScenarioTables:
    """The tables of scenario ``ref`` (a path or ``demo:NAME``), read but not validated."""
    if ref.startswith(DEMO_PREFIX):
        return read_scenario_file(demo_path(ref.removeprefix(DEMO_PREFIX)), source=ref)
    return read_scenario_file(ref)
