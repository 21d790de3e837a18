"""Replay in the window: the shown run re-run under the policy panel's edits, recorded as a new
run linked to its original, offline stopping at the first divergence, side-effect tools never
run again, Stop cancelling, and the runner's one-line failures."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit
from pytestqt.qtbot import QtBot

from inspector.app.runtime.runner import InspectorEventLoop, TurnRunner
from inspector.app.shell import main_window
from inspector.app.shell.main_window import MainWindow
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.provider import Provider
from inspector.core.records import RunRecord
from inspector.core.scenario import Scenario
from inspector.providers.replay import ReplayProvider
from inspector.store import Store
from tests.helpers import window as helpers
from tests.helpers.scenarios import streaming_scenario, write_scenario

DEMO = "demo:retry-feedback"
LATEST = 'policy.feedback_history="latest"'


def run_in_window(window: MainWindow, qtbot: QtBot, ref: str = DEMO) -> RunRecord:
    return helpers.run_in_window(window, qtbot, ref)


def replay_in_window(window: MainWindow, qtbot: QtBot, *, offline: bool) -> RunRecord:
    window.replay.offline_box.setChecked(offline)
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        window.replay.replay_action.trigger()
    # The window's end of the run (its message, then the replay's) may wait in the event
    # pacer for a later loop turn than the runner's idle signal (a loaded machine).
    qtbot.waitUntil(lambda: not window.runner.busy and window.pacer.pending == 0)
    record: RunRecord = finished.args[0]
    return record


def choose_latest(window: MainWindow) -> None:
    combo = window.policy.policy_form.editors["feedback_history"].editor
    assert isinstance(combo, QComboBox)
    combo.setCurrentText("latest")
    assert window.policy.overrides() == [LATEST]


def replay_provider(window: MainWindow) -> ReplayProvider:
    assert window.runner.turn is not None
    provider = window.runner.turn.provider
    assert isinstance(provider, ReplayProvider)
    return provider


def test_a_replay_under_an_edited_policy_is_a_new_linked_run(
    window: MainWindow, store: Store, qtbot: QtBot
) -> None:
    original = run_in_window(window, qtbot)
    assert original.status == "succeeded" and len(original.steps) == 4
    choose_latest(window)
    again = replay_in_window(window, qtbot, offline=False)
    assert again.run_id != original.run_id
    assert again.replay_of == original.run_id
    assert again.overrides == [LATEST]
    assert again.policy.feedback_history == "latest"
    assert again.status == "succeeded" and again.provider == "replay+scripted"
    assert store.load(again.run_id).replay_of == original.run_id
    assert window.library.runs.row_of(again.run_id) >= 0  # listed
    assert window.shown is not None and window.shown.run_id == again.run_id
    assert f"replay of {original.run_id}" in window.run_heading.text()
    # `latest` first differs on the second retry: steps 1-3 recorded, step 4 asked live.
    assert replay_provider(window).replayed == [1, 2, 3]
    message = window.message_bar.text.text()
    assert message.startswith(
        f"replay of {original.run_id}: steps 1-3 from the recording, step 4 live"
    )
    assert window.message_bar.level == "info" and "Ctrl+Shift+D" in message

    assert window.replay.compare_action in window.run_menu.actions()
    window.replay.compare_action.trigger()  # the original is the baseline
    view = window.compare.view
    qtbot.waitUntil(lambda: [r.run_id for r in view.records] == [original.run_id, again.run_id])
    assert window.centre_tabs.currentWidget() is view
    # The divergence is marked where the replay went live: step 4's request differs.
    assert view.comparison is not None and view.comparison.divergence is not None
    assert view.comparison.divergence.index == 4
    row = view.model.divergence_row()
    label = view.model.headerData(row, Qt.Orientation.Vertical, Qt.ItemDataRole.DisplayRole)
    assert label == "▶ step 4"
    assert view.divergence.text().startswith("▶ First divergence at step 4")


def test_offline_stops_at_the_first_divergence_and_says_which_step(
    window: MainWindow, qtbot: QtBot
) -> None:
    original = run_in_window(window, qtbot)
    choose_latest(window)
    again = replay_in_window(window, qtbot, offline=True)
    assert again.replay_of == original.run_id
    assert again.status == "error" and again.termination == "provider_error"
    assert again.error is not None and again.error.type == "ReplayDivergence"
    assert again.error.message.startswith("replay diverged at step 4:")
    assert window.message_bar.level == "error"
    message = window.message_bar.text.text()
    assert f"replay of {original.run_id} (offline): steps 1-3 from the recording" in message
    assert "replay diverged at step 4" in message


def test_an_unchanged_offline_replay_builds_no_provider(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = run_in_window(window, qtbot)

    def no_provider(scenario: Scenario) -> None:
        raise AssertionError(f"a provider was built for {scenario.name}")

    monkeypatch.setattr("inspector.providers.factory.build_provider", no_provider)
    again = replay_in_window(window, qtbot, offline=True)
    assert again.status == "succeeded" and again.provider == "replay"
    assert again.overrides == []
    assert [s.response for s in again.steps] == [s.response for s in original.steps]
    provider = replay_provider(window)
    assert provider.replayed == [1, 2, 3, 4] and provider.live_calls == []


TOOLS_PY = """\
from pathlib import Path

def send_sms(to, body):
    with open(Path(__file__).parent / "sent.log", "a") as f:
        f.write(f"{to}: {body}\\n")
    return "sent to " + to
"""

SIDE_EFFECT_SCENARIO = """
name = "notify"
[model]
provider = "scripted"
[prompt]
user = "Tell Sam: 3pm."
[[tools]]
name = "send_sms"
function = "tools.py:send_sms"
side_effects = true
[tools.parameters]
type = "object"
properties = { to = { type = "string" }, body = { type = "string" } }
[[script]]
tool_calls = [{ name = "send_sms", arguments = { to = "Sam", body = "3pm" } }]
[[script]]
text = "Sent."
"""


@pytest.mark.parametrize("offline", [True, False])
def test_side_effect_tools_are_never_run_again(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, offline: bool
) -> None:
    (tmp_path / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    scenario = write_scenario(tmp_path, SIDE_EFFECT_SCENARIO, "notify.toml")
    sent = tmp_path / "sent.log"
    original = run_in_window(window, qtbot, str(scenario))
    assert original.status == "succeeded"
    assert sent.read_text(encoding="utf-8") == "Sam: 3pm\n"
    again = replay_in_window(window, qtbot, offline=offline)
    assert again.status == "succeeded" and again.replay_of == original.run_id
    assert sent.read_text(encoding="utf-8") == "Sam: 3pm\n"  # not sent twice
    assert again.steps[0].tool_results[0].replayed


def test_stop_during_a_replay_records_a_cancelled_run(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    original = run_in_window(window, qtbot, str(streaming_scenario(tmp_path)))
    # Another temperature changes every request: step 1 streams live (slowly), and is stopped.
    window.policy.model_form.set_values({"temperature": 0.5})

    def stop_at_first_word(event: Event) -> None:
        if event.kind == "text_delta":
            window.stop_action.trigger()

    window.runner.engineEvent.connect(stop_at_first_word)
    again = replay_in_window(window, qtbot, offline=False)
    assert again.replay_of == original.run_id
    assert again.status == "cancelled" and [s.status for s in again.steps] == ["cancelled"]
    assert window.message_bar.level == "warning"
    assert "step 1 live" in window.message_bar.text.text()


def test_replay_failures_are_one_line(runner: TurnRunner, store: Store, qtbot: QtBot) -> None:
    with qtbot.waitSignal(runner.failed, timeout=10_000) as failed:
        assert runner.start_replay("nope", [], offline=True)
    assert failed.args[0] == f"no run 'nope' in {store.path}"
    qtbot.waitUntil(lambda: not runner.busy)

    with qtbot.waitSignal(runner.finished, timeout=20_000) as finished:
        runner.start(DEMO)
    qtbot.waitUntil(lambda: not runner.busy)
    run_id = finished.args[0].run_id
    with qtbot.waitSignal(runner.failed, timeout=10_000) as failed:
        runner.start_replay(run_id, ["policy.no_such_knob=1"], offline=True)
    assert "no_such_knob" in failed.args[0] and "\n" not in failed.args[0]
    qtbot.waitUntil(lambda: not runner.busy)


def test_a_run_still_recording_cannot_be_replayed(
    qloop: InspectorEventLoop, store: Store, qtbot: QtBot, tmp_path: Path
) -> None:
    recording, replaying = TurnRunner(store), TurnRunner(store)
    messages: list[str] = []
    replaying.failed.connect(messages.append)
    recording.started.connect(lambda run_id: replaying.start_replay(run_id, [], offline=True))
    with qtbot.waitSignal(replaying.failed, timeout=10_000):
        recording.start(str(streaming_scenario(tmp_path, delay_ms=50)))
    with qtbot.waitSignal(recording.finished, timeout=10_000):
        recording.stop()
    assert len(messages) == 1 and messages[0].endswith("is still being recorded")
    qtbot.waitUntil(lambda: not recording.busy and not replaying.busy)


def test_replay_needs_a_shown_run_and_compare_a_replay(window: MainWindow, qtbot: QtBot) -> None:
    assert not window.replay.replay()
    assert window.message_bar.text.text() == "Pick a recorded run to replay first."
    assert not window.replay.compare_with_original()
    assert window.message_bar.text.text().startswith("Show a replayed run first")


def test_a_run_picked_but_still_loading_is_the_one_acted_on(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big run takes a while to read: Replay and Play back right after picking it must not
    act on the run shown before it."""
    first = run_in_window(window, qtbot)
    second = run_in_window(window, qtbot)
    release = threading.Event()
    load = main_window.load_stored_run

    def slow(path: Path, run_id: str) -> LiveRun:
        release.wait(10)
        return load(path, run_id)

    monkeypatch.setattr(main_window, "load_stored_run", slow)
    window.library.select_run(first.run_id)
    assert window.shown is not None and window.shown.run_id == second.run_id  # still loading
    assert not window.replay.replay()
    assert window.message_bar.text.text() == (
        f"Run {first.run_id} is still loading: replay it once it is shown."
    )
    assert not window.runner.busy

    playback = window.playback.playback
    with qtbot.waitSignal(playback.activeChanged, timeout=10_000):
        window.playback.play_back_action.trigger()
    assert playback.recording is not None and playback.recording.run_id == first.run_id
    release.set()


def test_edits_for_another_scenario_are_not_replayed(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    run_in_window(window, qtbot, str(streaming_scenario(tmp_path)))
    assert window.library.select_scenario(DEMO)
    choose_latest(window)
    assert not window.replay.replay()
    assert window.message_bar.level == "error"
    assert "holds edits for scenario retry-feedback" in window.message_bar.text.text()
    assert not window.runner.busy


def test_an_invalid_policy_value_is_not_replayed(window: MainWindow, qtbot: QtBot) -> None:
    run_in_window(window, qtbot)
    fallback = window.policy.policy_form.editors["fallback"].editor
    assert isinstance(fallback, QLineEdit)
    fallback.setText("{not toml")  # refused: the edit gives no override at all
    assert window.policy.overrides() == []
    assert not window.replay.replay()
    assert window.message_bar.text.text().startswith(
        "The policy has invalid values: policy.fallback"
    )
    assert not window.runner.busy


def test_the_live_provider_is_set_up_off_the_ui_thread_and_closed_after(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.providers import factory

    run_in_window(window, qtbot)
    real_build = factory.build_provider
    prepared_on: list[threading.Thread] = []
    closed: list[bool] = []

    def build(scenario: Scenario) -> Provider:
        provider = real_build(scenario)

        async def aclose() -> None:
            closed.append(True)

        provider.prepare = lambda: prepared_on.append(threading.current_thread())  # type: ignore[attr-defined]
        provider.aclose = aclose  # type: ignore[attr-defined]
        return provider

    monkeypatch.setattr(factory, "build_provider", build)
    choose_latest(window)
    again = replay_in_window(window, qtbot, offline=False)
    assert again.status == "succeeded" and replay_provider(window).live_calls == [4]
    assert len(prepared_on) == 1 and prepared_on[0] is not threading.main_thread()
    assert closed == [True]


def test_a_replay_runs_the_policy_the_panel_shows_not_the_recorded_overrides(
    window: MainWindow, qtbot: QtBot
) -> None:
    assert window.library.select_scenario(DEMO)
    choose_latest(window)
    original = run_in_window(window, qtbot)  # recorded with feedback_history = latest
    assert original.overrides == [LATEST]
    window.policy.reset()  # the panel shows the file's policy again: accumulate
    assert window.policy.overrides() == []
    again = replay_in_window(window, qtbot, offline=False)
    assert again.replay_of == original.run_id
    assert again.policy.feedback_history == "accumulate"
    assert again.overrides == ['policy.feedback_history="accumulate"']

    # Unchanged from what the replayed run was recorded with: a plain replay, no override.
    plain = replay_in_window(window, qtbot, offline=True)
    assert plain.replay_of == again.run_id and plain.overrides == []
    assert plain.status == "succeeded"
