"""File › Import…, Send to collector… and Save as scenario… in the window: off the UI thread,
one line each, the imported run shown with its fidelity report."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from inspector.app.formats.formats_controller import FormatsController
from inspector.app.runtime.runner import InspectorEventLoop
from inspector.app.shell.main_window import MainWindow
from tests.formats.otlp_receiver import otlp_receiver
from tests.helpers.window import run_in_window

FIXTURES = Path(__file__).parents[2] / "formats" / "fixtures"
SECRET = "Bearer s3cret-header-value"


def wait(qtbot: QtBot, coro: Any, timeout_ms: int = 20_000) -> Any:
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=timeout_ms)
    return task.result()


def stored_demo(window: MainWindow, qtbot: QtBot, name: str = "retry-feedback") -> str:
    """A demo run recorded in the window, and shown."""
    record = run_in_window(window, qtbot, f"demo:{name}")
    assert window.focus.shown_run_id() == record.run_id
    return record.run_id


class Said:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def show_message(self, level: str, text: str) -> None:
        self.messages.append((level, text))

    def clear(self) -> None:
        self.messages.clear()

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        del text, timeout_ms

    def clear_status(self) -> None:
        pass


def test_without_a_run_the_run_actions_say_so(qloop: InspectorEventLoop, qtbot: QtBot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    said = Said()
    controller = FormatsController("unused.sqlite3", said, lambda: None, parent)
    controller.save_as_scenario()
    controller.send_to_collector()
    assert said.messages == [
        ("warning", "Save as scenario: pick a recorded run first."),
        ("warning", "Send to collector: pick a recorded run first."),
    ]


def test_import_shows_the_run_with_its_fidelity_report(window: MainWindow, qtbot: QtBot) -> None:
    window.formats.ask_open = lambda _parent: str(FIXTURES / "pydantic_ai_history.json")
    with qtbot.waitSignal(window.formats.runImported, timeout=20_000) as imported:
        window.actions_by_id["import"].trigger()
    run_id = imported.args[0]
    assert window.message_bar.level == "info"
    assert window.message_bar.text.text().startswith(
        "Imported from pydantic_ai_history.json (pydantic-ai): "
    )
    qtbot.waitUntil(lambda: window.focus.shown_run_id() == run_id and not window.focus.loading)
    assert "imported from pydantic_ai_history.json (pydantic-ai)" in window.run_heading.text()
    assert window.library.runs.row_of(run_id) >= 0
    assert window.store.load(run_id).fidelity is not None


def test_a_bad_file_is_one_line_naming_it_and_stores_nothing(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"request": {"messages": []}}\n{not json\n')
    assert wait(qtbot, window.formats.import_path(bad)) is None
    assert window.message_bar.level == "error"
    text = window.message_bar.text.text()
    assert text.startswith(f"{bad}: openai-jsonl: line 1: ") and "\n" not in text
    assert window.store.runs() == []


def test_send_to_collector_pushes_the_shown_run_and_keeps_no_header(
    window: MainWindow, qtbot: QtBot
) -> None:
    run_id = stored_demo(window, qtbot)
    with otlp_receiver() as (url, received):
        window.formats.ask_collector = lambda _parent, _endpoint: (url, [f"Authorization={SECRET}"])
        window.actions_by_id["send_collector"].trigger()
        qtbot.waitUntil(lambda: window.message_bar.level is not None, timeout=20_000)
    assert window.message_bar.level == "info", window.message_bar.text.text()
    assert window.message_bar.text.text().startswith(f"Sent run {run_id} to {url}: ")
    assert received.headers[0]["authorization"] == SECRET
    assert window.formats.endpoint == url  # offered again next time; the headers are not
    store_bytes = b"".join(p.read_bytes() for p in window.store.path.parent.glob("*.sqlite3*"))
    assert SECRET.encode() not in store_bytes


def test_a_collector_that_cannot_be_reached_is_one_line(window: MainWindow, qtbot: QtBot) -> None:
    run_id = stored_demo(window, qtbot)
    with otlp_receiver() as (url, received):
        received.status = 400
        assert wait(qtbot, window.formats.send(run_id, url, [f"Authorization={SECRET}"])) is False
    text = window.message_bar.text.text()
    assert window.message_bar.level == "error" and "\n" not in text
    assert "did not accept the spans" in text and SECRET not in text


def test_save_as_scenario_then_open_and_run_it(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    run_id = stored_demo(window, qtbot)
    target = tmp_path / "saved.toml"
    window.formats.ask_save = lambda _parent, suggested: str(tmp_path / "saved.toml")
    window.formats.ask_open_saved = lambda _parent, _path: True
    with qtbot.waitSignal(window.formats.openRequested, timeout=20_000):
        window.actions_by_id["save_scenario"].trigger()
    assert target.exists() and "[[script]]" in target.read_text()
    record = run_in_window(window, qtbot)  # the scenario just opened
    original = window.store.load(run_id)
    assert record.status == original.status
    assert [s.response.text for s in record.steps if s.response] == [
        s.response.text for s in original.steps if s.response
    ]
