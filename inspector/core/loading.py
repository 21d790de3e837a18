"""Loads user functions named ``"file.py:name"`` relative to a scenario's folder — inside a
user-code worker process (``inspector.core.worker.child``); the app itself never imports user
files."""

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
    if "\0" in file:
        raise ScenarioError(f"{what}: {ref!r}: a file name cannot contain a NUL byte")
    if not sep or not file or not name.isidentifier():
        raise ScenarioError(f'{what}: {ref!r} is not of the form "file.py:function"')
    return file, name


class ModuleLoadError(ScenarioError):
    """A python file that does not load (syntax error, raised on import); ``file`` and ``line``
    say where, when known (an editor shows the message there)."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line


def line_in(exc: BaseException, file: str) -> int | None:
    """The deepest line of ``file`` in ``exc``'s traceback: where the code of ``file`` raised
    (or called what raised); None when the traceback never passes through it."""
    line: int | None = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def load_module(path: Path, what: str) -> ModuleType:
    try:
        resolved = path.resolve(strict=True)
        key = (resolved, resolved.stat().st_mtime_ns)
    except (OSError, ValueError):  # ValueError: a NUL byte
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
        raise ModuleLoadError(
            f"{what}: {path.name}:{exc.lineno}: syntax error: {exc.msg}",
            exc.filename or str(resolved),
            exc.lineno,
        ) from None
    except KeyboardInterrupt:
        sys.modules.pop(module_name, None)
        raise
    except BaseException as exc:  # even SystemExit at import time is bad input, not an exit
        sys.modules.pop(module_name, None)
        raise ModuleLoadError(
            f"{what}: {path.name} raised on import: {last_line(exc)}",
            str(resolved),
            line_in(exc, str(resolved)),
        ) from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    _modules[key] = module
    return module


def forget(path: Path) -> None:
    """Drops the loaded versions of ``path``: the next load reads it afresh even when its mtime
    did not change (two saves within the file system's timestamp granularity)."""
    with contextlib.suppress(OSError):
        resolved = path.resolve()
        for stale in [k for k in list(_modules) if k[0] == resolved]:
            module = _modules.pop(stale, None)
            if module is not None:
                sys.modules.pop(module.__name__, None)


def reset() -> None:
    """Drops every loaded user file: the next load of each reads it afresh."""
    for module in _modules.values():
        sys.modules.pop(module.__name__, None)
    _modules.clear()


def load_function(ref: str, base_dir: Path, what: str) -> Callable[..., Any]:
    file, name = split_ref(ref, what)
    module = load_module(base_dir / file, what)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ScenarioError(f"{what}: {file} has no function {name!r}")
    return fn  # type: ignore[no-any-return]
