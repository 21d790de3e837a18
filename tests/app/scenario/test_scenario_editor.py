"""The Scenario dock: edits checked as typed, run with Ctrl+R as overrides, saved with comments."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from inspector.app.scenario.scenario_editor import ScenarioEditor
from inspector.app.shell.main_window import MainWindow
from inspector.core.records import RunRecord
from inspector.core.scenario import load_scenario, scenario_from_dict
from inspector.reports.compare import compare_runs
from inspector.resources import demo_path
from tests.helpers.scenarios import write_scenario
from tests.helpers.window import run_in_window

SCENARIO = """\
# Greeter (a comment above everything)
name = "greeter"

[model]
provider = "scripted"

[prompt]
# The persona.
system = "Be kind."  # beside the system prompt
user = "Say hello."

[[tools]]
name = "lookup"  # the only tool
description = "Find a name."
result = "Sam"

[[script]]
text = "Hello!"

[[script]]
text = "Hello again!"
"""

PROMPT = 'Line one: "quoted" — ünïcode ✓\nLine two with a \\ backslash\n\tand a tab.'


@pytest.fixture
def editor(qtbot: QtBot) -> ScenarioEditor:
    widget = ScenarioEditor()
    qtbot.addWidget(widget)
    return widget


def _scenario(tmp_path: Path) -> Path:
    return write_scenario(tmp_path, SCENARIO, "greeter.toml")


def _edited(path: Path, overrides: list[str]) -> dict[str, Any]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    scenario = scenario_from_dict(data, source="x", base_dir=path.parent, overrides=overrides)
    return scenario.model_dump()


def test_no_edit_no_override(editor: ScenarioEditor, tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    editor.set_scenario(str(path), load_scenario(path))
    assert editor.system.toPlainText() == "Be kind."
    assert editor.user.toPlainText() == "Say hello."
    assert editor.tools.list.count() == 1
    assert editor.overrides() == []
    assert editor.errors() == {}
    assert "Policy tab" in " ".join(w.text() for w in editor.findChildren(type(editor.heading)))


def test_overrides_round_trip_through_the_core(
    editor: ScenarioEditor, tmp_path: Path, qtbot: QtBot
) -> None:
    path = _scenario(tmp_path)
    editor.set_scenario(str(path), load_scenario(path))
    editor.system.setPlainText(PROMPT)
    editor.user.setPlainText("Say hello to “Zoë”.\nTwice.")
    editor.messages.add_message({"role": "assistant", "content": 'Earlier "answer".'})
    editor.tools.description.clear()
    qtbot.keyClicks(editor.tools.description, "Find a person's name.")
    editor.tools.parameters.setPlainText(
        '{"type": "object", "properties": {"q": {"type": "string"}}}'
    )
    editor.tools.result.setPlainText('{"name": "Sam", "id": 7}')
    editor.tools.side_effects.setChecked(True)
    editor.output.setPlainText('{"type": "object", "properties": {"greeting": {"type": "string"}}}')
    assert editor.errors() == {}
    overrides = editor.overrides()
    assert [o.split("=", 1)[0] for o in overrides] == [
        "prompt.system", "prompt.user", "prompt.messages", "tools", "output.schema",
    ]  # fmt: skip

    ran = _edited(path, overrides)
    assert ran["prompt"]["system"] == PROMPT
    assert ran["prompt"]["user"] == "Say hello to “Zoë”.\nTwice."
    assert ran["prompt"]["messages"] == [{"role": "assistant", "content": 'Earlier "answer".'}]
    tool = ran["tools"][0]
    assert tool["description"] == "Find a person's name."
    assert tool["parameters"]["properties"] == {"q": {"type": "string"}}
    assert tool["result"] == {"name": "Sam", "id": 7}
    assert tool["side_effects"] is True
    assert ran["output"]["schema"]["properties"] == {"greeting": {"type": "string"}}


def test_bad_json_and_core_problems_show_as_you_type(
    editor: ScenarioEditor, tmp_path: Path, qtbot: QtBot
) -> None:
    path = _scenario(tmp_path)
    editor.set_scenario(str(path), load_scenario(path))
    editor.tools.parameters.setPlainText('{"type": "object",')
    assert editor.errors()["tools[0].parameters"].startswith("not valid JSON: ")
    assert editor.tools.parameters_error.text().startswith("not valid JSON")
    editor.tools.parameters.setPlainText('{"type": "object"}')
    assert editor.errors() == {}

    editor.output.setPlainText("[1, 2")
    assert editor.errors()["output.schema"].startswith("not valid JSON: ")
    assert editor.output_error.isVisibleTo(editor)
    editor.output.setPlainText('{"type": "nonsense"}')
    assert editor.errors() == {
        "scenario": f"{path}: output.schema: not a valid JSON Schema: "
        "'nonsense' is not valid under any of the given schemas"
    }
    assert editor.problem_label.text() == editor.errors()["scenario"]
    editor.output.setPlainText("")
    qtbot.keyClicks(editor.tools.name, " name!")
    assert editor.errors()["scenario"].startswith(f"{path}: tools[0].name: String should match")
    assert editor.tools.list.item(0).text() == "lookup name!"


def test_save_writes_the_edits_back_keeping_comments(
    editor: ScenarioEditor, tmp_path: Path, qtbot: QtBot
) -> None:
    path = _scenario(tmp_path)
    editor.set_scenario(str(path), load_scenario(path))
    editor.system.setPlainText(PROMPT)
    editor.output.setPlainText('{"type": "object"}')
    with qtbot.waitSignal(editor.saved) as saved:
        assert editor.save() is True
    assert saved.args == [str(path)]
    text = path.read_text(encoding="utf-8")
    assert load_scenario(path).prompt.system == PROMPT
    for comment in ("# Greeter", "# The persona.", "# beside the system prompt", "# the only tool"):
        assert comment in text
    assert text.endswith('\n[output]\nschema = {type = "object"}\n')
    assert editor.overrides() == []  # the file is the new baseline
    assert "edited" not in editor.heading.text()


def test_removing_the_user_message_needs_a_save(editor: ScenarioEditor, tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    editor.set_scenario(str(path), load_scenario(path))
    editor.messages.add_message({"role": "user", "content": "Hi from the history."})
    editor.user.setPlainText("")
    assert "takes a save" in editor.errors()["prompt.user"]
    assert editor.save() is True
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert "user" not in data["prompt"]
    assert data["prompt"]["messages"] == [{"role": "user", "content": "Hi from the history."}]
    assert editor.errors() == {}


def test_a_demo_is_saved_as_a_copy(
    editor: ScenarioEditor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = demo_path("retry-feedback").read_bytes()
    editor.set_scenario("demo:retry-feedback", None)
    assert editor.read_only and "saving makes a copy" in editor.heading.text()
    editor.system.setPlainText("Write tiny SMS messages.")
    copy = tmp_path / "sms.toml"
    monkeypatch.setattr(editor, "ask_copy_path", lambda original: copy)
    assert editor.save() is True
    assert demo_path("retry-feedback").read_bytes() == original
    assert load_scenario(copy).prompt.system == "Write tiny SMS messages."
    assert editor.ref == str(copy) and not editor.read_only


def test_edits_are_kept_while_another_scenario_is_shown(
    editor: ScenarioEditor, tmp_path: Path
) -> None:
    path = _scenario(tmp_path)
    editor.set_scenario(str(path), load_scenario(path))
    editor.system.setPlainText("Be brief.")
    editor.tools.add_tool()  # a new tool: its origin (none) must survive too
    edits = editor.edits()

    editor.set_scenario("demo:retry-feedback", None)
    assert not editor.is_edited()
    editor.set_scenario(str(path), load_scenario(path))

    assert editor.edits() == edits and editor.tools.origins() == [0, None]
    assert "(edited, not saved)" in editor.heading.text()
    assert path.read_text(encoding="utf-8") == SCENARIO  # nothing written behind the back

    # Changed by another program meanwhile: the edits are re-applied onto the file as it is now.
    editor.set_scenario("demo:retry-feedback", None)
    path.write_text(SCENARIO.replace("Say hello.", "Say hi."), encoding="utf-8")
    editor.set_scenario(str(path), load_scenario(path))
    assert editor.user.toPlainText() == "Say hi." and editor.system.toPlainText() == "Be brief."
    assert [o.partition("=")[0] for o in editor.overrides()] == ["prompt.system", "tools"]
    assert len(editor.tools.tools()) == 2


def test_a_demo_saved_as_a_copy_leaves_no_edits_on_the_demo(
    editor: ScenarioEditor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor.set_scenario("demo:retry-feedback", None)
    editor.system.setPlainText("Write tiny SMS messages.")
    monkeypatch.setattr(editor, "ask_copy_path", lambda original: tmp_path / "sms.toml")
    assert editor.save() is True
    editor.set_scenario("demo:retry-feedback", None)
    assert not editor.is_edited()


# ---- in the window ------------------------------------------------------------------------


def _run(window: MainWindow, qtbot: QtBot) -> RunRecord:
    return run_in_window(window, qtbot, start=window.run_action.trigger, timeout_ms=10_000)


def test_an_edited_prompt_runs_with_ctrl_r_and_is_recorded(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = _scenario(tmp_path)
    assert window.library.select_scenario(str(path))
    editor = window.scenario_editor
    assert editor.ref == str(path)
    first = _run(window, qtbot)
    assert first.steps[0].request.system == "Be kind."

    editor.system.setPlainText(PROMPT)
    qtbot.waitUntil(lambda: not window.runner.busy)
    with qtbot.waitSignal(window.runner.finished, timeout=10_000) as finished:
        qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    second = finished.args[0]
    assert second.steps[0].request.system == PROMPT
    assert second.scenario_source["prompt"]["system"] == PROMPT
    assert path.read_text(encoding="utf-8") == SCENARIO  # a run never writes the file

    diffs = {d.field: d.values for d in compare_runs([first, second]).scenario_diffs}
    assert diffs == {"prompt.system": ["Be kind.", PROMPT]}


def test_invalid_tool_json_blocks_the_run_with_one_line(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = _scenario(tmp_path)
    window.library.select_scenario(str(path))
    window.scenario_editor.tools.parameters.setPlainText("{nope")
    window.run_action.trigger()
    assert not window.runner.busy
    shown = window.message_bar.text.text()
    assert window.message_bar.level == "error"
    assert shown.startswith("The scenario edits cannot run: not valid JSON: ")
    assert "\n" not in shown


def test_saving_a_demo_copy_selects_the_copy_in_the_library(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.library.select_scenario("demo:retry-feedback")
    editor = window.scenario_editor
    editor.system.setPlainText("Be brief.")
    copy = tmp_path / "copy.toml"
    monkeypatch.setattr(editor, "ask_copy_path", lambda original: copy)
    assert editor.save() is True
    assert window.library.current_scenario() == str(copy)
    assert window.policy.scenario is not None
    assert window.policy.scenario.prompt.system == "Be brief."
    assert editor.ref == str(copy) and editor.overrides() == []


def test_ctrl_s_in_the_editor_saves_and_the_library_keeps_the_path(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = _scenario(tmp_path)
    window.library.select_scenario(str(path))
    editor = window.scenario_editor
    window.scenario_dock.raise_()
    editor.system.setPlainText("Be very kind.")
    editor.system.setFocus()
    qtbot.waitUntil(editor.system.hasFocus)
    with qtbot.waitSignal(editor.saved):
        qtbot.keyClick(editor.system, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert 'system = "Be very kind."  # beside the system prompt' in path.read_text()
    assert window.library.current_scenario() == str(path)
    assert window.message_bar.text.text() == f"Saved {path}"


def test_model_settings_edited_in_the_policy_tab_are_saved_with_the_scenario(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = _scenario(tmp_path)
    window.library.select_scenario(str(path))
    window.policy.model_form.set_values({"name": "llama3.2", "temperature": 0.5})
    assert window.policy.overrides() == ['model.name="llama3.2"', "model.temperature=0.5"]
    with qtbot.waitSignal(window.scenario_editor.saved):
        assert window.scenario_editor.save()
    text = path.read_text(encoding="utf-8")
    saved = tomllib.loads(text)["model"]
    assert saved["name"] == "llama3.2" and saved["temperature"] == 0.5
    assert "[model]" in text and text.count("#") == SCENARIO.count("#")  # comments kept
    assert window.policy.overrides() == []  # the panel's model settings are the file's now
