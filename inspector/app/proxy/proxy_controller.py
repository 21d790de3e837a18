"""``ProxyController``: the Proxy menu. Start asks for the port and upstreams (remembered in the
user config), then hosts a ``RecordingProxy`` on the window's asyncio loop (qasync): the server
never blocks the UI, and its events are written to the store by the proxy's own writer thread
(``StoreSink``), so the window sees proxied runs exactly as it sees runs from a terminal
(``StoreWatch``). Stop ends the open runs and closes the writer.

Inputs: the store path and a notifier; ``ask`` (the settings dialog; tests answer it). Talks back
through ``urlChanged`` (the URL, "" once stopped)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QWidget

from inspector.app.proxy.proxy_dialog import ask_settings
from inspector.app.proxy.proxy_settings import ProxySettings, load_settings, save_settings
from inspector.app.runtime.notifier import Notifier
from inspector.core.errors import InspectorError
from inspector.proxy import RecordingProxy, Upstreams
from inspector.proxy.recording import StoreSink

__all__ = ["ProxyController", "port_problem"]

Ask = Callable[[QWidget | None, ProxySettings], ProxySettings | None]


def port_problem(port: int, exc: OSError) -> str:
    """One line for a port the proxy cannot listen on (in use, not allowed)."""
    return f"Proxy: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"


class ProxyController(QObject):
    urlChanged = Signal(str)

    def __init__(
        self,
        store_path: str | Path,
        notifier: Notifier,
        parent: QWidget | None = None,
        ask: Ask = ask_settings,
    ) -> None:
        super().__init__(parent)
        self._store_path = store_path
        self._notifier = notifier
        self._parent = parent
        self.ask = ask
        self.proxy: RecordingProxy | None = None
        self._sink: StoreSink | None = None
        self._busy = False
        self.start_action = QAction("&Start proxy…", self)
        self.start_action.setToolTip("Record any agent: point its base URL at a local proxy")
        self.start_action.triggered.connect(self.start)
        self.stop_action = QAction("S&top proxy", self)
        self.stop_action.triggered.connect(self.stop)
        self.copy_action = QAction("&Copy proxy URL", self)
        self.copy_action.triggered.connect(self.copy_url)
        self._update()

    def actions(self) -> dict[str, QAction]:
        return {
            "proxy_start": self.start_action,
            "proxy_stop": self.stop_action,
            "proxy_copy_url": self.copy_action,
        }

    @property
    def url(self) -> str:
        return self.proxy.url if self.proxy is not None else ""

    # ---- intents ------------------------------------------------------------------------------

    def start(self) -> None:
        settings = self.ask(self._parent, load_settings())
        if settings is None:
            return
        try:
            save_settings(settings)
        except OSError as exc:  # not remembered; the proxy still starts
            self._notifier.show_status(f"Proxy settings not saved: {exc.strerror or exc}", 5000)
        asyncio.get_event_loop().create_task(self.start_with(settings))

    def stop(self) -> None:
        if self.proxy is not None:
            asyncio.get_event_loop().create_task(self.stop_proxy())

    def copy_url(self) -> None:
        if self.url:
            QGuiApplication.clipboard().setText(f"{self.url}/v1")
            self._notifier.show_status(f"Copied {self.url}/v1", 3000)

    # ---- the proxy's life ----------------------------------------------------------------------

    async def start_with(self, settings: ProxySettings) -> bool:
        """Starts the proxy; False (and one line in the message bar) when it cannot."""
        if self.proxy is not None or self._busy:
            return False
        self._busy = True
        self._update()
        try:
            return await self._start(settings)
        finally:
            self._busy = False
            self._update()

    async def _start(self, settings: ProxySettings) -> bool:
        try:
            sink = StoreSink(self._store_path)
        except InspectorError as exc:
            self._notifier.show_message("error", f"Proxy: {exc}")
            return False
        upstreams = Upstreams.with_keys(settings.upstream, settings.upstream_anthropic)
        proxy = RecordingProxy(sink, port=settings.port, upstreams=upstreams)
        try:
            await proxy.start()
        except OSError as exc:
            await proxy.stop()
            sink.close()
            self._notifier.show_message("error", port_problem(settings.port, exc))
            return False
        self.proxy, self._sink = proxy, sink
        self._notifier.show_status(f"Recording proxy on {proxy.url}  (OpenAI: {proxy.url}/v1)")
        self.urlChanged.emit(proxy.url)
        return True

    async def stop_proxy(self) -> None:
        proxy, sink = self.proxy, self._sink
        if proxy is None or sink is None or self._busy:
            return
        self._busy = True
        self._update()
        try:
            await proxy.stop()  # ends the open runs: their records reach the sink
            await asyncio.to_thread(sink.close)  # the writer empties its queue off the UI thread
        finally:
            self.proxy = self._sink = None
            self._busy = False
            self._update()
        self._notifier.show_status("Recording proxy stopped", 5000)
        self.urlChanged.emit("")

    def _update(self) -> None:
        running = self.proxy is not None
        self.start_action.setEnabled(not running and not self._busy)
        self.stop_action.setEnabled(running and not self._busy)
        self.copy_action.setEnabled(running)
        self.copy_action.setText(f"&Copy {self.url}/v1" if running else "&Copy proxy URL")
