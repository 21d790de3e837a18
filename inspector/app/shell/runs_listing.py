"""The runs list kept in step with the store: the whole list read once on a worker thread at
start-up, the newest runs merged in when one starts or ends, the whole list re-read only when
they are not the newest it shows. A store that cannot be read is one line in the window."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from inspector.app.library.library_panel import LibraryPanel
from inspector.app.runtime.gui_collector import collection_held, settle_loaded
from inspector.app.runtime.notifier import Notifier
from inspector.core.errors import InspectorError
from inspector.store import RunSummary, Store

NEWEST_RUNS = 20  # runs re-read when one starts or ends (others may be recording meanwhile)


def read_runs(path: Path) -> list[RunSummary]:
    """Every run's summary, newest first (on a worker thread, with its own ``Store``)."""
    with Store.open(path) as store:
        return store.runs()


class RunsListing:
    def __init__(self, store: Store, library: LibraryPanel, notify: Notifier) -> None:
        self._store = store
        self._library = library
        self._notify = notify
        self.task: asyncio.Task[None] | None = None  # the first listing (tasks are weak refs)

    def list_soon(self, keep: Callable[[], str | None]) -> None:
        """``refresh`` with the store read on a worker thread (its own ``Store``): reading
        100,000 runs takes ~0.4 s; listing them then takes steps of < 20 ms (``show``).
        ``keep`` says, when they arrive, which run to keep selected."""
        self.task = asyncio.get_event_loop().create_task(self._list(keep))

    async def _list(self, keep: Callable[[], str | None]) -> None:
        loop = asyncio.get_running_loop()
        try:
            with collection_held():  # 100,000 summaries: no collection walks them meanwhile
                runs = await loop.run_in_executor(None, read_runs, self._store.path)
        except InspectorError as exc:
            self._cannot_list(exc)
            return
        self.show(runs, keep=keep())

    def show(self, runs: list[RunSummary], keep: str | None) -> None:
        """Lists ``runs`` read on a worker: the newest at once, the older ones a chunk per
        event-loop turn (``RunsItemModel.CHUNK``); they live as long as the list, so they
        are taken out of the collector's scans (a full collection walked them: ~0.2 s)."""
        self._library.set_runs(runs, keep=keep)
        self.note(keep=keep)  # runs that started or ended while the list was read
        settle_loaded()

    def refresh(self, keep: str | None = None) -> None:
        """The whole list read again, on this thread."""
        try:
            runs = self._store.runs()
        except InspectorError as exc:
            self._cannot_list(exc)
            return
        self._library.set_runs(runs, keep=keep)

    def note(self, keep: str | None = None) -> None:
        """When a run starts or ends: only the store's newest runs are read (an indexed query)
        and merged into the list; the whole list is read again only when they are not the
        newest it shows."""
        try:
            newest = self._store.runs(limit=NEWEST_RUNS)
        except InspectorError as exc:
            self._cannot_list(exc)
            return
        if not self._library.merge_runs(newest, keep=keep):
            self.refresh(keep=keep)

    def _cannot_list(self, exc: InspectorError) -> None:
        self._notify.show_message("error", f"Cannot list the recorded runs: {exc}")
