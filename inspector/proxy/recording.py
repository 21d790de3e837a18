"""``StoreSink``: the proxy's events written to the store by one thread of its own.

The store's ``Recorder`` is the same subscriber ``agent-inspector run`` uses, so proxied runs are
ordinary runs (the window lists them; a window in another process sees them arrive). It runs on
a writer thread fed in order through a queue: SQLite commits never stall the event loop that
streams replies to clients (a commit is milliseconds; the proxy's budget is under 2 ms a call).
"""

from __future__ import annotations

import os
import queue
import sys
import threading

from inspector.core.events import Event
from inspector.store import Store, StoreError

__all__ = ["StoreSink"]

_STOP = object()


class StoreSink:
    """An ``EventSink``; ``close()`` writes what is queued and closes the store."""

    def __init__(self, db: str | os.PathLike[str] | None) -> None:
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._opened = threading.Event()
        self._open_error: StoreError | None = None
        self.path = ""
        self.errors: list[str] = []
        self._thread = threading.Thread(
            target=self._write, args=(db,), name="proxy-store", daemon=True
        )
        self._thread.start()
        self._opened.wait()
        if self._open_error is not None:
            raise self._open_error

    def __call__(self, event: Event) -> None:
        self._queue.put(event)

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join()

    def _write(self, db: str | os.PathLike[str] | None) -> None:
        try:
            store = Store.open(db)
        except StoreError as exc:
            self._open_error = exc
            self._opened.set()
            return
        self.path = str(store.path)
        self._opened.set()
        recorder = store.recorder()
        with store:
            while (item := self._queue.get()) is not _STOP:
                try:
                    recorder(item)  # type: ignore[arg-type]
                except StoreError as exc:
                    # One run's rows failed (a locked file, a full disk): said once, the proxy
                    # and the other runs go on.
                    self.errors.append(str(exc))
                    print(f"agent-inspector: {exc}", file=sys.stderr)
