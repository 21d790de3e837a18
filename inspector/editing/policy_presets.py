"""Policy presets: named policies saved as TOML files (pure, no Qt).

A preset file holds a ``[policy]`` table (the scenario format) and, optionally, a top-level
``name``. Applying it sets the fields it names and leaves the others as they are, so a preset
may name one field ("latest only") or all of them. Saving writes every field that has a value
(a field set to none has no TOML spelling and is left out), so a saved preset gives back exactly
the policy that was saved.

User presets live in ``$AGENT_INSPECTOR_PRESETS``, else ``<user config dir>/presets``, one
``NAME.toml`` each (the file name is the preset's name). Built-in presets ship in
``resources/presets`` and cannot be deleted or overwritten.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector import locations
from inspector.core.errors import InspectorError
from inspector.core.files import write_atomically
from inspector.core.policy import Policy
from inspector.editing.form_fields import field_errors, toml_literal
from inspector.resources import resources_dir

ENV_VAR = locations.PRESETS_ENV
SUFFIX = ".toml"
MAX_NAME_LENGTH = 100


class PresetError(InspectorError):
    """A preset that cannot be read, saved or deleted; the message is one line naming the file
    (and the field, for a bad value)."""


@dataclass(frozen=True)
class PolicyPreset:
    name: str
    path: Path
    built_in: bool


def presets_dir() -> Path:
    """Where user presets are saved (not created here: only saving creates it)."""
    return locations.presets_dir()


def built_in_presets() -> list[PolicyPreset]:
    return list(_built_in_presets())


@functools.cache
def _built_in_presets() -> tuple[PolicyPreset, ...]:
    """Shipped with the app, so read once (each save checks the name against them)."""
    found = sorted((resources_dir() / "presets").glob(f"*{SUFFIX}"))
    return tuple(PolicyPreset(_declared_name(p), p, built_in=True) for p in found)


def user_presets() -> list[PolicyPreset]:
    folder = presets_dir()
    try:
        found = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stem.casefold())
    except OSError as exc:
        raise PresetError(f"{folder}: cannot list the presets: {exc.strerror or exc}") from None
    return [PolicyPreset(p.stem, p, built_in=False) for p in found if p.is_file()]


def all_presets() -> list[PolicyPreset]:
    """The built-in presets, then the user's, each sorted by name."""
    return built_in_presets() + user_presets()


def _declared_name(path: Path) -> str:
    try:
        name = tomllib.loads(path.read_text(encoding="utf-8")).get("name")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        name = None
    return name if isinstance(name, str) and name.strip() else path.stem


def read_preset(preset: PolicyPreset) -> dict[str, Any]:
    """The policy fields ``preset`` sets, validated; ``PresetError`` names the file and field."""
    path = preset.path
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PresetError(f"{path}: cannot read the preset: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PresetError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("policy")
    if not isinstance(table, dict):
        raise PresetError(f"{path}: no [policy] table")
    # Anything else (a [model] table, a whole scenario) would be silently left out: say so.
    for key in data:
        if key not in ("policy", "name"):
            raise PresetError(f"{path}: {key}: not part of a policy preset (only [policy], name)")
    for key in table:
        if key not in Policy.model_fields:
            raise PresetError(f"{path}: policy.{key}: not a policy field")
    # Each value is judged as the form judges a typed one: over the defaults, and only for the
    # fields it names. A rule across fields (on_step_cap = "fallback" wants a fallback) is met
    # by the form's other values or shown there, as for a typed value.
    errors = field_errors(Policy, {**Policy().model_dump(), **table})
    named = [(field, message) for field, message in errors.items() if field in table]
    if named:
        field, message = named[0]
        raise PresetError(f"{path}: policy.{field}: {message}")
    return dict(table)


def check_name(name: str) -> str:
    """``name`` stripped, if it can be a preset's file name; else ``PresetError`` saying why."""
    name = name.strip()
    if not name:
        raise PresetError("a preset needs a name")
    separators = {"/", "\\", os.sep, os.altsep or "/"}
    if any(s in name for s in separators):
        raise PresetError(f"preset name {name!r}: no / or \\ (it is a file name)")
    if name.startswith(".") or any(ord(c) < 32 for c in name):
        raise PresetError(f"preset name {name!r}: no leading dot or control characters")
    if len(name) > MAX_NAME_LENGTH:
        raise PresetError(f"preset name: {MAX_NAME_LENGTH} characters at most")
    if any(p.name.casefold() == name.casefold() for p in built_in_presets()):
        raise PresetError(f"{name!r} is a built-in preset: choose another name")
    return name


def user_preset_path(name: str) -> Path:
    return presets_dir() / f"{check_name(name)}{SUFFIX}"


def preset_text(values: dict[str, Any]) -> str:
    """A preset file holding ``values`` (policy fields; those set to None are left out)."""
    lines = ["# An Agent Inspector policy preset: the [policy] table of a scenario.", "[policy]"]
    lines += [f"{k} = {toml_literal(v)}" for k, v in values.items() if v is not None]
    return "\n".join(lines) + "\n"


def save_preset(name: str, values: dict[str, Any]) -> PolicyPreset:
    """Writes (or overwrites) the user preset ``name``; the caller asks before overwriting."""
    path = user_preset_path(name)
    errors = field_errors(Policy, values)
    if errors:
        field, message = next(iter(errors.items()))
        raise PresetError(f"cannot save preset {name!r}: policy.{field}: {message}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Whole or not at all: an old preset is never left half-written.
        write_atomically(path, [preset_text(values).encode("utf-8")])
    except OSError as exc:
        raise PresetError(f"{path}: cannot save the preset: {exc.strerror or exc}") from None
    return PolicyPreset(path.stem, path, built_in=False)


def delete_preset(preset: PolicyPreset) -> None:
    if preset.built_in:
        raise PresetError(f"{preset.name!r} is a built-in preset: it cannot be deleted")
    try:
        preset.path.unlink(missing_ok=True)
    except OSError as exc:
        raise PresetError(
            f"{preset.path}: cannot delete the preset: {exc.strerror or exc}"
        ) from None
