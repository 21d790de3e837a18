""" "Edit a copy" of a built-in demo: the demo's TOML and every file it names (python validators,
tool functions, a fallback function, a feedback builder) copied into a folder of the user's, so
the editing loop (edit, save, re-validate, replay) works on files the user may change. Demos
themselves are read-only resources."""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

from inspector.core.errors import ScenarioError
from inspector.core.scenario import Scenario
from inspector.locations import user_scenarios_dir
from inspector.resources import demo_path, resolve_scenario


def named_files(scenario: Scenario) -> list[str]:
    """The relative files a scenario's ``"file.py:name"`` references name, once each, in order."""
    targets = [getattr(v, "function", "") or "" for v in scenario.validators]
    targets += [t.function or "" for t in scenario.tools]
    targets += [scenario.policy.fallback_function, scenario.policy.feedback_builder]
    files: dict[str, None] = {}
    for target in targets:
        file = target.rpartition(":")[0] if ":" in target else ""
        if file and not PurePosixPath(file).is_absolute():
            files[file] = None
    return list(files)


def free_folder(parent: Path, name: str) -> Path:
    """``parent/name``, or ``name-2``, ``name-3`` … when taken: a copy never overwrites."""
    candidate, n = parent / name, 1
    while candidate.exists():
        n += 1
        candidate = parent / f"{name}-{n}"
    return candidate


def copy_demo(name: str, parent: Path | None = None) -> Path:
    """Copies ``demo:name`` and its files into a new folder under ``parent`` (default: the
    user's scenarios folder) and returns the copied TOML's path. Raises ``ScenarioError`` naming
    the problem (no such demo, a file it names is missing, the folder cannot be written)."""
    source = demo_path(name)
    scenario = resolve_scenario(f"demo:{name}")
    folder = free_folder(parent or user_scenarios_dir(), name)
    try:
        folder.mkdir(parents=True)
        for file in named_files(scenario):
            origin = source.parent / file
            if not origin.is_file():
                raise ScenarioError(f"demo:{name}: the file it names is missing: {file}")
            destination = folder / file
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(origin, destination)
        target = folder / source.name
        shutil.copyfile(source, target)
    except OSError as exc:
        raise ScenarioError(f"cannot copy demo:{name} to {folder}: {exc.strerror or exc}") from None
    return target
