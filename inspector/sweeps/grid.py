"""The grid of a sweep from the command line: ``--vary SECTION.KEY=V1,V2`` lists (their product),
``@file`` values (a file's text, e.g. a prompt), ``--arm NAME=preset.toml`` (a named arm from a
preset file's tables). Bad input raises ``ScenarioError`` with one line naming the option, field
and value."""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspector.core.credentials import is_secret_field, is_secret_name
from inspector.core.errors import ScenarioError
from inspector.reports.redact import redact_text
from inspector.sweeps.model import Arm

FILE_PREFIX = "@"
# Top-level keys of a preset file that describe it rather than set a field.
_PRESET_LABELS = frozenset({"name", "description"})


def toml_value(value: Any) -> str:
    """``value`` written as a TOML value (what ``--set`` reads back exactly)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise ScenarioError(f"cannot write {type(value).__name__} value {value!r} as TOML")


def _file_value(field: str, raw: str, base: Path) -> tuple[str, str]:
    """(the TOML value, its short label) of ``@path``: the file's text as a string."""
    path = base / raw.removeprefix(FILE_PREFIX)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"--vary {field}: {raw}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"--vary {field}: {raw}: not UTF-8 text (byte {exc.start})") from None
    return toml_value(text.rstrip("\n")), path.name


def parse_vary(text: str, base: Path = Path(".")) -> tuple[str, list[tuple[str, str]]]:
    """``SECTION.KEY=V1,V2,...`` -> (the field, [(value as given to --set, label)])."""
    field, sep, raw = text.partition("=")
    field = field.strip()
    if not sep or not field or "." not in field:
        raise ScenarioError(f"--vary {text!r}: expected SECTION.KEY=V1,V2,...")
    values: list[tuple[str, str]] = []
    for item in raw.split(","):
        item = item.strip()
        if not item:
            raise ScenarioError(f"--vary {field}: an empty value in {raw!r}")
        if item.startswith(FILE_PREFIX):
            values.append(_file_value(field, item, base))
        else:
            values.append((item, item))
    labels = [label for _, label in values]
    dupes = sorted({v for v in labels if labels.count(v) > 1})
    if dupes:
        raise ScenarioError(f"--vary {field}: value {dupes[0]!r} is given twice")
    return field, values


def _short(fields: Sequence[str]) -> list[str]:
    """Each field's last part, unless two fields share it (then the whole path)."""
    lasts = [f.rpartition(".")[2] for f in fields]
    return [last if lasts.count(last) == 1 else f for f, last in zip(fields, lasts, strict=True)]


def grid_arms(varies: Sequence[str], base: Path = Path(".")) -> list[Arm]:
    """The product of the ``--vary`` lists, in the order given (the last varies fastest)."""
    parsed = [parse_vary(v, base) for v in varies]
    fields = [f for f, _ in parsed]
    dupes = sorted({f for f in fields if fields.count(f) > 1})
    if dupes:
        raise ScenarioError(f"--vary {dupes[0]}: the field is varied twice")
    short = _short(fields)
    arms = []
    for combo in itertools.product(*(values for _, values in parsed)):
        overrides = [f"{f}={value}" for f, (value, _) in zip(fields, combo, strict=True)]
        name = " ".join(f"{s}={label}" for s, (_, label) in zip(short, combo, strict=True))
        arms.append(Arm(name=name, overrides=overrides))
    return arms


def _flatten(prefix: str, table: dict[str, Any]) -> list[str]:
    out = []
    for key, value in table.items():
        if isinstance(value, dict) and value and prefix == "":
            out += _flatten(key, value)  # a section: [policy] -> policy.KEY=...
        elif prefix == "" and key in _PRESET_LABELS:
            continue
        elif prefix == "":
            raise ScenarioError(f"{key}: a preset sets fields in tables like [policy]")
        else:
            out.append(f"{prefix}.{key}={toml_value(value)}")
    return out


def preset_arm(text: str, base: Path = Path(".")) -> Arm:
    """``NAME=preset.toml``: an arm setting every field of the file's tables."""
    name, sep, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not sep or not name or not raw:
        raise ScenarioError(f"--arm {text!r}: expected NAME=preset.toml")
    path = base / raw
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(f"--arm {name}: {raw}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"--arm {name}: {raw}: not valid TOML: {exc}") from None
    try:
        overrides = _flatten("", data)
    except ScenarioError as exc:
        raise ScenarioError(f"--arm {name}: {raw}: {exc}") from None
    if not overrides:
        raise ScenarioError(f"--arm {name}: {raw}: sets no field (expected e.g. [policy])")
    return Arm(name=name, overrides=overrides)


def build_arms(varies: Sequence[str], presets: Sequence[str], base: Path = Path(".")) -> list[Arm]:
    """The grid's arms, then the presets'; the scenario as it is ("base") when nothing varies."""
    arms = grid_arms(varies, base) if varies else []
    extra = [preset_arm(p, base) for p in presets]
    if not varies:
        arms.append(Arm(name="base", overrides=[]))
    arms += extra
    names = [a.name for a in arms]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ScenarioError(f"--arm {dupes[0]}: two arms have this name")
    return arms


def run_seed(sweep_seed: int, arm: str, rep: int) -> int:
    """The scripted model's seed for one run: fixed by the sweep's seed, the arm and the
    repetition (a resumed sweep draws what the first try would have), independent across arms."""
    digest = hashlib.sha256(f"{sweep_seed}:{arm}:{rep}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def refuse_credentials(overrides: Sequence[str]) -> None:
    """A sweep stores its overrides (``--resume`` runs them again): a credential among them would
    reach the store and the exports, so it is refused — keys belong in ``model.api_key_env``."""
    for text in overrides:
        field, _, value = text.partition("=")
        name = field.strip().rpartition(".")[2].lower()
        header = field.strip().lower().startswith("model.headers.")
        secret_name = is_secret_field(name) or (header and is_secret_name(name))
        if secret_name or redact_text(value) != value:
            raise ScenarioError(
                f"{field.strip()}: a sweep stores its settings, so it takes no credential; "
                "name the key's environment variable in model.api_key_env instead"
            )
