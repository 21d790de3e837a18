"""The recording store: every run in one SQLite file (see docs/store.md).

Knows ``inspector.core`` and ``sqlite3`` only.
"""

from __future__ import annotations

from inspector.locations import default_db_path, resolve_db_path
from inspector.store.database import StoreError, StoreMissing, StoreUnusable
from inspector.store.models import RunNotFound, RunSummary, StoredEvent
from inspector.store.reader import RunStillRecording
from inspector.store.recorder import Recorder
from inspector.store.store import Store
from inspector.store.sweeps import StoredSweep, SweepNotFound

__all__ = [
    "Recorder",
    "RunNotFound",
    "RunStillRecording",
    "RunSummary",
    "Store",
    "StoreError",
    "StoreMissing",
    "StoreUnusable",
    "StoredEvent",
    "StoredSweep",
    "SweepNotFound",
    "default_db_path",
    "resolve_db_path",
]
