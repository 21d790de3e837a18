"""Loads user functions named ``"file.py:name"`` relative to a scenario's folder."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from inspector.core.errors import ScenarioError, last_line

# (resolved path, mtime_ns) -> module: an edited file is loaded afresh, an unchanged one once.
_modules: dict[tuple[Path, int], ModuleType] = {}


def split_ref(ref: str, what: str) -> tuple[str, str]:
    file, sep, name = ref.rpartition(":")
    if not sep or not file or not name.isidentifier():
        raise ScenarioError(f'{what}: {ref!r} is not of the form "file.py:function"')
    return file, name


def load_module(path: Path, what: str) -> ModuleType:
    try:
        resolved = path.resolve(strict=True)
        key = (resolved, resolved.stat().st_mtime_ns)
    except OSError:
        raise ScenarioError(f"{what}: file not found: {path}") from None
    if key in _modules:
        return _modules[key]
    for stale in [k for k in _modules if k[0] == resolved]:  # an older version of the file
        sys.modules.pop(_modules.pop(stale).__name__, None)
    module_name = f"_inspector_user_{abs(hash(key)):x}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise ScenarioError(f"{what}: cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    # The file may import helpers that sit next to it, as it would when run from its folder.
    folder = str(resolved.parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise ScenarioError(f"{what}: {path.name}:{exc.lineno}: syntax error: {exc.msg}") from None
    except KeyboardInterrupt:
        sys.modules.pop(module_name, None)
        raise
    except BaseException as exc:  # even SystemExit at import time is bad input, not an exit
        sys.modules.pop(module_name, None)
        raise ScenarioError(f"{what}: {path.name} raised on import: {last_line(exc)}") from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    _modules[key] = module
    return module


def load_function(ref: str, base_dir: Path, what: str) -> Callable[..., Any]:
    file, name = split_ref(ref, what)
    module = load_module(base_dir / file, what)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ScenarioError(f"{what}: {file} has no function {name!r}")
    return fn  # type: ignore[no-any-return]
