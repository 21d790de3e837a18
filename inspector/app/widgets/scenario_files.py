"""Which file an editor writes to: a scenario path, or a built-in demo that is saved as a copy.

The demos ship inside the app (and a frozen bundle) and are never written in place: saving one
asks where to put a copy, copies the python files it references beside it (so its
``"file.py:name"`` references still resolve), and the editor edits the copy from then on.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from inspector.core.errors import ScenarioError
from inspector.editing import ScenarioDocument
from inspector.resources import DEMO_PREFIX, demo_path, resources_dir

SCENARIO_FILTER = "Scenarios (*.toml);;All files (*)"


def is_builtin_demo(path: Path) -> bool:
    try:
        return path.resolve().parent == (resources_dir() / "demos").resolve()
    except OSError:
        return False


def scenario_file(ref: str | Path) -> tuple[Path, str, bool]:
    """``(path, source, read_only)`` for a path or ``demo:NAME`` (``ScenarioError`` if none)."""
    text = str(ref)
    if text.startswith(DEMO_PREFIX):
        return demo_path(text.removeprefix(DEMO_PREFIX)), text, True
    path = Path(ref)
    return path, text, is_builtin_demo(path)


def ask_copy_path(parent: QWidget, original: Path) -> Path | None:
    """ "Save as…": where the editable copy of a demo goes (None: cancelled)."""
    chosen, _ = QFileDialog.getSaveFileName(
        parent, f"Save a copy of {original.name}", str(Path.home() / original.name),
        SCENARIO_FILTER,
    )  # fmt: skip
    return Path(chosen) if chosen else None


def copy_referenced_files(doc: ScenarioDocument, source_dir: Path, target_dir: Path) -> None:
    """Copies the python files ``doc`` names (relative ones) next to its new place; a file
    already there is left as it is (it may be the user's own)."""
    for name in doc.referenced_files():
        if Path(name).is_absolute():
            continue
        src, dst = source_dir / name, target_dir / name
        if not src.is_file() or dst.exists():
            continue
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        except OSError as exc:
            raise ScenarioError(f"{dst}: cannot copy {name}: {exc.strerror or exc}") from None


def save_document(doc: ScenarioDocument, read_only: bool, target: Path) -> Path:
    """Saves ``doc`` to its file, or — ``read_only`` — to the copy ``target``, with the python
    files it references. ``ScenarioError`` (one line) when it cannot."""
    if read_only:
        if doc.path is not None and target.resolve() == doc.path.resolve():
            raise ScenarioError(f"{target}: a built-in demo cannot be overwritten; save a copy")
        if doc.path is not None:
            copy_referenced_files(doc, doc.path.parent, target.parent)
        return doc.save(target)
    return doc.save()
