"""Where the recorded wire fixtures live: a verbatim copy of ``shared/fixtures/wire`` kept in the
repository (see its SOURCES.md for provenance and licences), so a clean clone tests every
recording; ``test_fixture_copy.py`` checks the copy against the shared originals when present."""

from __future__ import annotations

from pathlib import Path

WIRE = Path(__file__).resolve().parent / "fixtures" / "wire"
SHARED_WIRE = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "wire"


def wire_folder(name: str) -> Path:
    folder = WIRE / name
    if not folder.is_dir():  # fail loudly: a silent skip would hide the provider tests
        raise FileNotFoundError(f"wire fixtures missing: {folder}")
    return folder
