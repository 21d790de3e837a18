"""What the window's store watch costs on the UI thread (app/proxy/store_watch.py): one
``PRAGMA data_version`` per tick while the store is quiet, against its peer in the same run, the
read it stands in for (``Store.runs(limit=20)``, what ``note_runs`` does on a change), on a store
of N finished runs.

    .venv/bin/python bench/store_watch.py [--runs N] [--quick] [--write bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from results import write_section  # bench/results.py (this folder is on sys.path)

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


HEADING = "## Window store watch (bench/store_watch.py)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="finished runs in the store")
    parser.add_argument("--quick", action="store_true", help="1,000 runs (smoke test)")
    parser.add_argument("--write", type=Path, help="replace this benchmark's section in the file")
    args = parser.parse_args()
    n = 1_000 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "runs.sqlite3") as store:
        for i in range(n):
            store.save(_record(i))
        pragma = _median_us(store.data_version)
        newest = _median_us(lambda: store.runs(limit=20))
    load = os.getloadavg()[0]
    text = f"""{HEADING}

What the window pays on its UI thread to notice runs recorded by other processes or its own
proxy: one `PRAGMA data_version` per 400 ms tick while the store is quiet, and, only when it
moved, the read of the 20 newest runs. Both measured in the same run on a store of {n:,}
finished runs, median of {REPEAT:,} calls each.

Measured {time.strftime("%Y-%m-%d")}; {platform.platform()}; Python {platform.python_version()};
nproc {os.cpu_count()}; load average {load:.1f}. Reproduce with
`python bench/store_watch.py --write bench/RESULTS.md`.

| call | median |
|---|---:|
| `Store.data_version()` (a quiet tick) | {pragma:.1f} µs |
| `Store.runs(limit=20)` (a change; the peer) | {newest:.1f} µs |
"""
    print(text)
    if args.write:
        write_section(args.write, HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
