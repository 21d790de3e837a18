"""What the window's store watch costs on the UI thread (app/proxy/store_watch.py): one
``PRAGMA data_version`` per tick while the store is quiet, against its peer in the same run, the
read it stands in for (``Store.runs(limit=20)``, what ``note_runs`` does on a change), on a store
of N finished runs.

    .venv/bin/python bench/store_watch.py [N]
"""

from __future__ import annotations

import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from inspector.core.records import RunRecord
from inspector.store import Store

REPEAT = 2000


def _record(i: int) -> RunRecord:
    return RunRecord.model_validate(
        {
            "run_id": f"run{i:08d}",
            "scenario": "bench",
            "started_at": f"2026-11-25T00:{i // 3600 % 60:02d}:{i % 60:02d}+00:00",
            "duration_ms": 1.0,
            "policy": {},
            "status": "succeeded",
            "termination": "stop",
            "budgets": {"attempts_used": 1, "max_attempts": 1, "steps_used": 0, "max_steps": 1},
        }
    )


def _median_us(call: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "runs.sqlite3") as store:
        for i in range(n):
            store.save(_record(i))
        pragma = _median_us(store.data_version)
        newest = _median_us(lambda: store.runs(limit=20))
    print(f"{platform.platform()}; Python {platform.python_version()}; {n} runs in the store")
    print(f"data_version (a quiet tick): median {pragma:.1f} µs")
    print(f"runs(limit=20) (a change):   median {newest:.1f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
