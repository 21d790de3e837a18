"""The window driven by a coroutine instead of a user: ``bench/editor.py`` and
``docs/screenshots/scenes.py`` open it on a throwaway store, act through its public methods and
wait for its signals (``next_emission``), on the same qasync loop the app runs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import SignalInstance

from inspector.app.app import WINDOW_SIZE, application
from inspector.app.runtime.gui_collector import GuiThreadCollector
from inspector.app.runtime.runner import InspectorEventLoop
from inspector.app.shell.main_window import MainWindow
from inspector.store import Store

__all__ = ["drive_window", "next_emission"]

T = TypeVar("T")


async def next_emission(
    signal: SignalInstance, start: Callable[[], Any], timeout_s: float = 120
) -> tuple[Any, ...]:
    """Calls ``start`` and waits for ``signal``'s next emission (its arguments)."""
    done: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def fire(*args: Any) -> None:
        if not done.done():
            done.set_result(args)

    signal.connect(fire)
    try:
        start()
        return await asyncio.wait_for(done, timeout_s)
    finally:
        signal.disconnect(fire)


@contextmanager
def _shown_window(db: Path) -> Iterator[tuple[MainWindow, InspectorEventLoop]]:
    app = application()
    loop = InspectorEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = GuiThreadCollector()
    store = Store.open(db)
    window = MainWindow(store)
    window.resize(*WINDOW_SIZE)
    window.show()
    try:
        yield window, loop
    finally:
        window.close()
        loop.run_until_complete(loop.shutdown_asyncgens())
        # Now, not at interpreter exit: its file watcher must go before Qt does.
        shiboken6.delete(window)
        store.close()
        collector.stop()
        loop.close()  # joins the worker threads


def drive_window(db: Path, script: Callable[[MainWindow], Awaitable[T]]) -> T:
    """Opens the window (1400×900) on store ``db``, runs ``script(window)`` to the end on the
    window's event loop, closes everything and returns what the script returned."""
    with _shown_window(db) as (window, loop):
        result: T = loop.run_until_complete(script(window))
        return result
