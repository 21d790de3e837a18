"""A scenario file read as TOML tables, before any validation: the standard library only, so a
command can read the file and look at what it names (``names_user_code``) before the engine and
pydantic are imported. ``inspector.core.scenario`` turns the tables into a ``Scenario``."""

from __future__ import annotations

import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.errors import ScenarioError
from inspector.core.worker.protocol import Target

# A scenario is a hand-written file; anything bigger is a mistake (a log, a device) and reading
# it whole would cost the memory it claims.
MAX_SCENARIO_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ScenarioTables:
    """A scenario file's tables as parsed (no override applied, nothing validated); ``source``
    names it in errors, ``base_dir`` is the folder its relative paths start from."""

    data: dict[str, Any]
    source: str
    base_dir: Path


def read_scenario_file(path: str | Path, source: str | None = None) -> ScenarioTables:
    """``source`` names the scenario in errors (default: the path as given)."""
    p = Path(path)
    name = source or str(p)
    data = read_scenario_toml(read_input_file(p, name), name)
    return ScenarioTables(data, name, p.resolve().parent)


def names_user_code(data: dict[str, Any], overrides: list[str] | None = None) -> bool:
    """Whether a scenario's tables (or its ``--set`` overrides) name a python function that a
    turn loads in a user-code worker: a tool's or a validator's ``function``, a python
    validator, a ``feedback_builder`` or ``fallback_function``. A hint, read before validation:
    a turn checks the functions of the validated scenario."""
    if any(_names_function(key) for text in overrides or [] for key in [text.partition("=")[0]]):
        return True
    policy = data.get("policy")
    if isinstance(policy, dict) and (
        policy.get("feedback_builder") or policy.get("fallback_function")
    ):
        return True
    for section in ("tools", "validators"):
        items = data.get(section)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and (item.get("function") or item.get("kind") == "python"):
                return True
    return False


def user_code_targets(tables: ScenarioTables, overrides: list[str] | None = None) -> list[Target]:
    """The python functions a turn of this scenario checks before it starts, named as its load
    checks name them, in their order (tools, python validators, feedback builder, fallback),
    read from the tables before validation; none when an override may change them (a
    ``--set`` of ``tools``, ``validators`` or ``policy``). A user-code worker can load them
    while the app starts up (``pool.start``); a target named differently here is only loaded
    twice."""
    changed = ("tools", "validators", "policy")
    if any(text.partition("=")[0].strip().startswith(changed) for text in overrides or []):
        return []
    data, source, base = tables.data, tables.source, str(tables.base_dir)
    found: list[Target] = []
    for section, kind in (("tools", None), ("validators", "python")):
        items = data.get(section)
        for i, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, dict) or (kind and item.get("kind") != kind):
                continue
            ref = item.get("function")
            if isinstance(ref, str) and ref:
                found.append(Target(ref, base, f"{source}: {section}[{i}].function"))
    policy = data.get("policy")
    policy = policy if isinstance(policy, dict) else {}
    for key in ("feedback_builder", "fallback_function"):
        ref = policy.get(key)
        used = key == "fallback_function" or policy.get("feedback_history") == "custom"
        if used and isinstance(ref, str) and ref:
            found.append(Target(ref, base, f"{source}: policy.{key}"))
    return found


def _names_function(key: str) -> bool:
    return "function" in key or "feedback_builder" in key or key.strip().endswith("kind")


def read_scenario_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None


# A scenario is a hand-written file; anything bigger is a mistake (a log, a device) and reading
# it whole would cost the memory it claims.
MAX_SCENARIO_BYTES = 4 * 1024 * 1024


def read_input_file(p: Path, name: str) -> str:
    """A scenario-style input file's text; a path that is no regular file (a FIFO would block,
    ``/dev/zero`` never ends) or is too large is bad input, refused before it is opened."""
    try:
        info = p.stat()
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a device, FIFO or socket"
            raise ScenarioError(f"{name}: not a regular file ({kind})")
        if info.st_size > MAX_SCENARIO_BYTES:
            raise ScenarioError(
                f"{name}: {info.st_size} bytes; a scenario file is at most "
                f"{MAX_SCENARIO_BYTES // (1024 * 1024)} MB"
            )
        with p.open("rb") as f:
            data = f.read(MAX_SCENARIO_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except ValueError:  # a NUL byte in the path
        raise ScenarioError(f"{name!r}: not a usable path (it contains a NUL byte)") from None
    if len(data) > MAX_SCENARIO_BYTES:  # it grew while being read
        raise ScenarioError(f"{name}: a scenario file is at most {MAX_SCENARIO_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """``SECTION.KEY=VALUE``: VALUE is read as TOML, and taken as a plain string when it is not
    — unless it starts with ``{`` or ``[``: a broken inline table or array is a mistake, not
    text (``ScenarioError`` with TOML's reason; a string that starts so is written quoted)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes from the command line that are not UTF-8
        raise ScenarioError(f"--set {text!a}: not valid UTF-8 text") from None
    key, sep, raw = text.partition("=")
    path = [p.strip() for p in key.strip().split(".") if p.strip()]
    if not sep or not path:
        raise ScenarioError(f"--set {text!r}: expected SECTION.KEY=VALUE")
    raw = raw.strip()
    try:
        value: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError as exc:
        if raw.startswith(("{", "[")):
            reason = str(exc).split(" (at ")[0]
            raise ScenarioError(
                f"--set {text!r}: not a TOML {'table' if raw[0] == '{' else 'array'}: {reason} "
                "(quote it to set text)"
            ) from None
        value = raw
    return path, value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Sets each ``a.b.c=VALUE`` in ``data``; a number selects an item of an array
    (``validators.1.max=200``)."""
    for text in overrides:
        path, value = parse_override(text)
        node: Any = data
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    where = ".".join(path[:depth]) or "(top level)"
                    raise ScenarioError(
                        f"--set {text!r}: {where} has {len(node)} item(s); {part!r} is not one"
                    )
                if last:
                    node[int(part)] = value
                else:
                    node = node[int(part)]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                raise ScenarioError(f"--set {text!r}: {path[depth - 1]!r} is not a table")
    return data
