"""``release_soon``: what the views no longer show is freed on a worker thread, a slice at a time.

A big list freed by reference counting is one C call that holds the GIL throughout, on the UI
thread that let go of it: 100,000 run summaries replaced by a new listing took ~40 ms, a
stored run of 10,000 attempts 60–110 ms. One worker thread frees them instead, a slice with a
pause between two (``workflows.runs.release_items``), so the UI thread gets the GIL in between.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from inspector.workflows.runs import release_items

_RELEASER: ThreadPoolExecutor | None = None


def releaser() -> ThreadPoolExecutor:
    """The one worker thread that frees what the window let go of (made when first needed)."""
    global _RELEASER
    if _RELEASER is None:
        _RELEASER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="release")
    return _RELEASER


def release_soon(items: list[Any] | dict[Any, Any]) -> None:
    """Frees ``items`` on the worker: the caller hands over its last reference."""
    if items:
        releaser().submit(release_items, items)
