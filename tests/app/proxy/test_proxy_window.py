"""The Proxy menu and the store watch: a proxy hosted in the window, driven by the real
``openai`` SDK against a loopback upstream, and runs another process records into the same
store, appear in the runs list while they record."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from inspector.app.library.runs_item_model import SCENARIO
from inspector.app.proxy.proxy_controller import ProxyController
from inspector.app.proxy.proxy_settings import ProxySettings, check_settings, load_settings
from inspector.app.proxy.store_watch import StoreWatch
from inspector.app.runtime.runner import InspectorEventLoop
from inspector.app.shell.main_window import MainWindow
from inspector.store import Store
from tests.helpers.demo_events import demo_run
from tests.providers.loopback import LoopbackServer
from tests.proxy.conftest import KEY, OPENAI, fixture_reply


class Said:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []
        self.statuses: list[str] = []

    def show_message(self, level: str, text: str) -> None:
        self.messages.append((level, text))

    def clear(self) -> None:
        self.messages.clear()

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        self.statuses.append(text)

    def clear_status(self) -> None:
        pass


@pytest.fixture(autouse=True)
def settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config" / "proxy.json"
    monkeypatch.setenv("AGENT_INSPECTOR_PROXY_SETTINGS", str(path))
    return path


@pytest.fixture
def upstream() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def wait(qtbot: QtBot, coro: Any, timeout_ms: int = 10_000) -> Any:
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=timeout_ms)
    return task.result()


def scenario_cells(window: MainWindow) -> list[str]:
    model = window.library.runs
    return [str(model.data(model.index(row, SCENARIO))) for row in range(model.rowCount())]


def test_settings_are_checked_and_remembered(settings_file: Path) -> None:
    assert load_settings() == ProxySettings()  # nothing saved yet: the defaults
    assert check_settings(ProxySettings(port=70000)) == "port 70000: expected 0-65535"
    problem = check_settings(ProxySettings(upstream="ftp://x"))
    assert problem == "upstream 'ftp://x': expected an http:// or https:// URL"
    settings_file.parent.mkdir()
    settings_file.write_text("{not json")
    assert load_settings() == ProxySettings()  # unreadable: the defaults, no traceback


def test_a_port_in_use_is_one_line_and_the_controller_stays_stopped(
    qloop: InspectorEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    said = Said()
    controller = ProxyController(tmp_path / "runs.sqlite3", said, parent)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert wait(qtbot, controller.start_with(ProxySettings(port=port))) is False
    ((level, text),) = said.messages
    assert level == "error"
    assert text.startswith(f"Proxy: cannot listen on 127.0.0.1:{port}: ")
    assert "\n" not in text
    assert controller.proxy is None and controller.start_action.isEnabled()
    assert not controller.stop_action.isEnabled()


def test_start_from_the_menu_records_an_sdk_call_live_with_the_badge(
    window: MainWindow, qtbot: QtBot, upstream: LoopbackServer, settings_file: Path
) -> None:
    asked: list[ProxySettings] = []

    def ask(_parent: object, saved: ProxySettings) -> ProxySettings:
        asked.append(saved)
        return ProxySettings(
            port=0, upstream=upstream.base_url, upstream_anthropic=upstream.base_url
        )

    window.proxy.ask = ask
    with qtbot.waitSignal(window.proxy.urlChanged, timeout=10_000) as started:
        window.actions_by_id["proxy_start"].trigger()
    url = started.args[0]
    assert url.startswith("http://127.0.0.1:") and url == window.proxy.url
    assert asked == [ProxySettings()]
    assert load_settings().upstream == upstream.base_url  # remembered for the next start
    assert url in window.statusBar().currentMessage()
    assert window.actions_by_id["proxy_stop"].isEnabled()
    assert not window.actions_by_id["proxy_start"].isEnabled()
    assert url in window.actions_by_id["proxy_copy_url"].text()

    reply, _ = fixture_reply(OPENAI, "text-basic-gpt35")
    upstream.queue(reply)

    messages: list[Any] = [{"role": "user", "content": "Hi"}]

    async def call() -> str | None:
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0) as sdk:
            answer = await sdk.chat.completions.create(model="gpt-3.5-turbo", messages=messages)
        return answer.choices[0].message.content

    first = wait(qtbot, call())
    assert first
    # The run is still open (the proxy waits for a continuation) and already listed, badged.
    qtbot.waitUntil(lambda: any("via proxy" in c for c in scenario_cells(window)), timeout=10_000)
    (listed,) = window.store.runs()
    window.library.select_run(listed.run_id)
    qtbot.waitUntil(lambda: "via proxy" in window.run_heading.text(), timeout=10_000)
    assert window.shown is not None and len(window.shown.steps) == 1

    # A continuation (feedback after the answer) is a second attempt, shown as it is recorded.
    upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    messages += [{"role": "assistant", "content": first}, {"role": "user", "content": "Shorter."}]
    assert wait(qtbot, call())
    qtbot.waitUntil(
        lambda: window.shown is not None and len(window.shown.steps) == 2, timeout=10_000
    )

    with qtbot.waitSignal(window.proxy.urlChanged, timeout=10_000) as stopped:
        window.actions_by_id["proxy_stop"].trigger()
    assert stopped.args == [""]
    assert window.actions_by_id["proxy_start"].isEnabled()
    (summary,) = window.store.runs()
    assert summary.via == "proxy" and summary.model == "gpt-3.5-turbo"


def test_a_run_recorded_by_another_process_appears_in_the_list(
    window: MainWindow, qtbot: QtBot
) -> None:
    assert window.library.runs.rowCount() == 0
    db = str(window.store.path)
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "run", "demo:retry-feedback", "--db", db],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    qtbot.waitUntil(lambda: window.library.runs.rowCount() == 1, timeout=10_000)
    assert scenario_cells(window) == ["retry-feedback"]  # no badge: not proxied


def test_store_watch_signals_only_when_the_version_moves(qtbot: QtBot, tmp_path: Path) -> None:
    record = demo_run("retry-feedback")[1]
    with Store.open(tmp_path / "a.sqlite3") as mine, Store.open(tmp_path / "a.sqlite3") as other:
        watch = StoreWatch(mine.data_version, interval_ms=60_000)
        seen: list[None] = []
        watch.changed.connect(lambda: seen.append(None))
        watch.start()
        assert watch.check() is False and seen == []
        other.save(record)
        assert watch.check() is True and len(seen) == 1
        assert watch.check() is False and len(seen) == 1
        watch.stop()
