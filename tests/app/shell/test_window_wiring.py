"""The window's wiring of the local model (Local model menu, provider presets), the first-run
welcome page, Help › About and File › Provider settings.

``inspector.localmodel``'s blocking functions are replaced by fakes: no server is started."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import keyring
import keyring.core
import pytest
from keyring.backends import fail
from PySide6.QtWidgets import QApplication, QDialog
from pytestqt.qtbot import QtBot

from inspector import localmodel
from inspector.app.local_model.local_model_control import failure_message
from inspector.app.policy.policy_panel import PolicyPanel
from inspector.app.runtime.runner import InspectorEventLoop
from inspector.app.shell.about import AboutDialog
from inspector.app.shell.main_window import MainWindow
from inspector.app.shell.provider_settings import ProviderSettingsDialog
from inspector.core.records import RunRecord
from inspector.editing.provider_presets import (
    LOCAL_MODEL_URL,
    local_preset,
    matching_preset,
    preset_values,
    presets,
)
from inspector.resources import resolve_scenario
from inspector.store import Store

FAKE_URL = "http://127.0.0.1:9911/v1"


def _server(url: str = FAKE_URL, pid: int = 4242) -> localmodel.ServerState:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    return localmodel.ServerState(pid=pid, port=port, model="m.gguf", log="l.log", started_at=0)


def _top_dialogs(kind: type[QDialog]) -> list[QDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]


# ---- presets (pure) ---------------------------------------------------------------------------


def test_a_preset_keeps_the_scenarios_own_value_where_it_has_none() -> None:
    scenario = {"provider": "openai", "name": "x", "base_url": None, "api_key_env": "MY_KEY"}
    local = local_preset()
    assert preset_values(local, scenario) == {
        "provider": "openai",
        "name": "gemma-3-270m",
        "base_url": f"{LOCAL_MODEL_URL}#server=llama.cpp",
        "api_key_env": "MY_KEY",  # an override cannot clear it: the scenario's stays
    }
    own = presets()[0]
    assert own.key == "scenario" and preset_values(own, scenario) == scenario


def test_the_local_preset_follows_the_running_servers_url() -> None:
    assert local_preset(FAKE_URL).base_url == f"{FAKE_URL}#server=llama.cpp"
    assert local_preset(f"{FAKE_URL}#server=other").base_url == f"{FAKE_URL}#server=llama.cpp"
    assert FAKE_URL in local_preset(FAKE_URL).label
    assert "running" not in local_preset().label
    assert [p.key for p in presets()] == ["scenario", "local", "ollama", "openai", "anthropic"]


def test_matching_preset_names_the_preset_the_fields_hold() -> None:
    scenario = {"provider": "scripted", "name": "demo", "base_url": None, "api_key_env": None}
    openai = next(p for p in presets() if p.key == "openai")
    assert matching_preset(presets(), scenario, scenario) == presets()[0]
    assert matching_preset(presets(), scenario, preset_values(openai, scenario)) == openai
    edited = {**preset_values(openai, scenario), "name": "gpt-5"}
    assert matching_preset(presets(), scenario, edited) is None


def test_failure_message_always_names_the_install_command() -> None:
    assert "make local-model" in failure_message(localmodel.NotInstalled("llama_cpp is missing"))
    message = failure_message(localmodel.NotInstalled("missing; run `make local-model`"))
    assert message.count("make local-model") == 1
    assert failure_message(localmodel.LocalModelError("port 8642 in use")).endswith("in use")


# ---- presets in the policy panel -------------------------------------------------------------


def _choose(panel: PolicyPanel, key: str) -> None:
    index = panel.preset_box.findData(key)
    assert index >= 0, key
    panel.preset_box.setCurrentIndex(index)
    panel.preset_box.activated.emit(index)  # what a user's pick emits


def test_choosing_a_preset_sets_the_overrides_of_the_next_run(qtbot: QtBot) -> None:
    panel = PolicyPanel()
    qtbot.addWidget(panel)
    panel.set_scenario(resolve_scenario("demo:retry-feedback"))
    assert panel.preset_box.currentData() == "scenario" and panel.overrides() == []

    _choose(panel, "openai")
    assert panel.overrides() == [
        'model.provider="openai"',
        'model.name="gpt-4o-mini"',
        'model.base_url="https://api.openai.com/v1"',
        'model.api_key_env="OPENAI_API_KEY"',
    ]
    assert panel.errors() == {}
    # The overrides are ones the engine takes: the scenario loads with them.
    scenario = resolve_scenario("demo:retry-feedback", panel.overrides())
    assert (scenario.model.provider, scenario.model.api_key_env) == ("openai", "OPENAI_API_KEY")

    panel.model_form.editors["name"].set_value("gpt-5")  # a hand edit: no preset matches now
    assert panel.preset_box.currentIndex() == -1  # shows its "Custom" placeholder

    _choose(panel, "scenario")
    assert panel.overrides() == []


def test_the_anthropic_preset_replaces_a_scenarios_base_url(qtbot: QtBot) -> None:
    panel = PolicyPanel()
    qtbot.addWidget(panel)
    panel.set_scenario(resolve_scenario("demo:local-model"))
    _choose(panel, "anthropic")
    assert 'model.provider="anthropic"' in panel.overrides()
    assert 'model.base_url="https://api.anthropic.com/v1"' in panel.overrides()
    assert panel.errors() == {}


# ---- the Local model menu ---------------------------------------------------------------------


def test_start_not_installed_says_how_to_install_and_the_window_keeps_working(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def not_installed(*, progress: Callable[[str], None] | None = None, **_: Any) -> None:
        assert progress is not None
        progress("checking the install")
        release.wait(30)  # blocks like the real check would, until the test has looked around
        raise localmodel.NotInstalled("the local model server is not installed (missing: x)")

    monkeypatch.setattr(localmodel, "start", not_installed)
    window.local_start_action.trigger()
    qtbot.waitUntil(lambda: "checking the install" in window.statusBar().currentMessage())
    assert not window.local_start_action.isEnabled()  # one job at a time

    # The start blocks its worker, not the window: a whole demo runs meanwhile.
    window.library.select_scenario("demo:step-cap")
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        window.run_turn()
    record: RunRecord = finished.args[0]
    assert record.status in ("succeeded", "fallback", "failed")
    assert window.local_model.busy

    release.set()
    qtbot.waitUntil(lambda: window.message_bar.level == "error")
    message = window.message_bar.text.text()
    assert "make local-model" in message and "not installed" in message
    assert "\n" not in message
    qtbot.waitUntil(window.local_start_action.isEnabled)
    assert window.local_model_url is None and not window.local_model_label.isVisible()


def test_a_started_local_model_shows_its_url_and_becomes_the_local_preset(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fake_start(
        *, progress: Callable[[str], None] | None = None, **_: Any
    ) -> localmodel.ServerState:
        assert progress is not None
        progress("starting llama.cpp server on 127.0.0.1:9911 with m.gguf")
        progress("loading the model... 1 s")
        progress(f"ready at {FAKE_URL} after 1.2 s")
        return _server()

    monkeypatch.setattr(localmodel, "start", fake_start)
    lines: list[str] = []
    window.local_model.progress.connect(lines.append)
    window.library.select_scenario("demo:retry-feedback")
    with qtbot.waitSignal(window.local_model.running, timeout=10_000) as running:
        window.local_start_action.trigger()
    assert running.args == [FAKE_URL]
    assert lines == [
        "starting llama.cpp server on 127.0.0.1:9911 with m.gguf",
        "loading the model... 1 s",
        f"ready at {FAKE_URL} after 1.2 s",
    ]
    assert window.local_model_url == FAKE_URL
    assert window.local_model_label.isVisible() and FAKE_URL in window.local_model_label.text()
    assert FAKE_URL in window.message_bar.text.text() and window.message_bar.level == "info"

    local = next(p for p in window.policy.presets if p.key == "local")
    assert local.base_url == f"{FAKE_URL}#server=llama.cpp"
    labels = [window.policy.preset_box.itemText(i) for i in range(window.policy.preset_box.count())]
    assert any(FAKE_URL in label for label in labels)
    _choose(window.policy, "local")
    assert f'model.base_url="{FAKE_URL}#server=llama.cpp"' in window.policy.overrides()
    assert 'model.provider="openai"' in window.policy.overrides()


def test_status_and_stop_report_in_the_window(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localmodel, "status", lambda: localmodel.Status("running", _server()))
    with qtbot.waitSignal(window.local_model.running, timeout=10_000):
        window.local_status_action.trigger()
    assert window.local_model_url == FAKE_URL

    monkeypatch.setattr(localmodel, "stop", lambda: _server())
    qtbot.waitUntil(window.local_stop_action.isEnabled)
    with qtbot.waitSignal(window.local_model.notRunning, timeout=10_000):
        window.local_stop_action.trigger()
    assert "stopped" in window.message_bar.text.text() and "4242" in window.message_bar.text.text()
    assert window.local_model_url is None and not window.local_model_label.isVisible()
    assert "running" not in next(p for p in window.policy.presets if p.key == "local").label

    monkeypatch.setattr(localmodel, "status", lambda: localmodel.Status("stopped"))
    qtbot.waitUntil(window.local_status_action.isEnabled)
    with qtbot.waitSignal(window.local_model.notRunning, timeout=10_000) as said:
        window.local_status_action.trigger()
    assert said.args == ["Local model: not running"]


# ---- first run, About, provider settings ------------------------------------------------------


@pytest.fixture
def first_run_window(qloop: InspectorEventLoop, store: Store, qtbot: QtBot) -> Iterator[MainWindow]:
    win = MainWindow(store, first_run=True)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    yield win
    if win.runner.busy:
        with qtbot.waitSignal(win.runner.busyChanged, timeout=10_000):
            win.runner.stop()


def test_first_run_opens_on_the_welcome_page_and_its_demo_links_run(
    first_run_window: MainWindow, qtbot: QtBot, store: Store
) -> None:
    window = first_run_window
    assert window.welcome.isVisible() and not window.timeline.isVisible()
    assert window.library.current_scenario() == "demo:retry-feedback"

    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        window.welcome.demo_buttons["demo:step-cap"].click()
    record: RunRecord = finished.args[0]
    qtbot.waitUntil(lambda: not window.runner.busy)
    assert record.scenario == "step-cap"
    assert window.library.current_scenario() == "demo:step-cap"
    assert not window.welcome.isVisible() and window.timeline.isVisible()
    assert store.load(record.run_id).status == record.status
    assert window.library.runs.row_of(record.run_id) == 0

    window.welcome_action.trigger()  # Help › Welcome page brings it back; "Hide" dismisses
    assert window.welcome.isVisible()
    window.welcome.dismiss_button.click()
    assert not window.welcome.isVisible() and window.timeline.isVisible()


def test_an_ordinary_start_shows_no_welcome_page(window: MainWindow) -> None:
    assert not window.welcome.isVisible() and window.timeline.isVisible()


def test_help_about_opens_and_closes(window: MainWindow, qtbot: QtBot) -> None:
    window.about_action.trigger()
    qtbot.waitUntil(lambda: len(_top_dialogs(AboutDialog)) == 1)
    dialog = _top_dialogs(AboutDialog)[0]
    assert dialog.parent() is window
    with qtbot.waitSignal(dialog.finished):
        dialog.reject()
    qtbot.waitUntil(lambda: not _top_dialogs(AboutDialog))


def test_provider_settings_opens_from_the_menu_and_the_welcome_page(
    first_run_window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    keyring.set_keyring(fail.Keyring())  # never the user's real keyring
    for open_it in (
        first_run_window.settings_action.trigger,
        first_run_window.welcome.settings_button.click,
    ):
        open_it()
        qtbot.waitUntil(lambda: len(_top_dialogs(ProviderSettingsDialog)) == 1)
        dialog = _top_dialogs(ProviderSettingsDialog)[0]
        with qtbot.waitSignal(dialog.finished):
            dialog.reject()
        qtbot.waitUntil(lambda: not _top_dialogs(ProviderSettingsDialog))


def test_closing_the_window_lets_a_start_in_progress_return(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended = threading.Event()
    raised: list[BaseException] = []

    def slow_start(*, progress: Callable[[str], None] | None = None, **_: Any) -> None:
        assert progress is not None
        try:
            while True:  # like _wait_ready: a progress line about once a second, here faster
                progress("loading the model...")
                ended.wait(0.02)
        except Exception as exc:
            raised.append(exc)
            raise
        finally:
            ended.set()

    monkeypatch.setattr(localmodel, "start", slow_start)
    with qtbot.waitSignal(window.local_model.progress, timeout=10_000):
        window.local_start_action.trigger()
    window.close()
    qtbot.waitUntil(lambda: not window.local_model.busy, timeout=10_000)
    assert ended.is_set() and len(raised) == 1
    assert window.message_bar.level is None  # abandoned quietly: no error for a closed window
