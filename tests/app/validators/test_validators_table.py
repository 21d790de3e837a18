"""The validators table: rows checked as typed, saved back to the file with its comments."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QLineEdit
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from inspector.app.validators.validators_item_model import ValidatorsItemModel
from inspector.app.validators.validators_table import ValidatorsTable
from inspector.app.widgets.scenario_files import save_document
from inspector.editing import ScenarioDocument
from inspector.editing.validator_rows import FEEDBACK, KIND, KINDS, PARAMETERS
from inspector.resources import demo_path
from tests.helpers.scenarios import write_scenario

SCENARIO = """\
# SMS scenario (top comment)
name = "sms"

[prompt]
user = "Tell Sam."

[[tools]]
name = "lookup"

# no markdown in an SMS
[[validators]]
kind = "regex_absent"  # beside the kind
pattern = "[*_#`]"
feedback = "Plain text only."

# the length limit
[[validators]]
kind = "max_length"
max = 160  # an SMS
feedback = "Shorten it."

[[script]]
text = "Hi Sam."
"""


@pytest.fixture
def table(qtbot: QtBot) -> ValidatorsTable:
    widget = ValidatorsTable()
    qtbot.addWidget(widget)
    widget.resize(800, 400)
    return widget


def _scenario(tmp_path: Path) -> Path:
    return write_scenario(tmp_path, SCENARIO, "sms.toml")


def test_the_item_model_passes_qtmodeltester(qtmodeltester: ModelTester) -> None:
    model = ValidatorsItemModel()
    model.set_tables(
        [{"kind": "max_length", "max": -1}, {"kind": "non_empty", "name": "n", "feedback": "f"}]
    )
    qtmodeltester.check(model)
    # Rows count from 1, like steps and attempts.
    assert [model.headerData(r, Qt.Orientation.Vertical) for r in range(2)] == ["1", "2"]
    model.insert_row(1)
    model.move_row(0, 1)
    model.remove_row(2)
    qtmodeltester.check(model)


def test_the_rows_show_the_file_kind_name_parameters_feedback(
    table: ValidatorsTable, tmp_path: Path
) -> None:
    table.set_scenario_file(_scenario(tmp_path))
    model = table.model
    assert model.rowCount() == 2
    assert [model.index(1, c).data() for c in range(5)] == [
        "max_length", "", "max = 160", "Shorten it.", "final",
    ]  # fmt: skip
    assert model.index(0, PARAMETERS).data() == 'pattern = "[*_#`]"'
    assert table.errors() == []
    assert not table.read_only


def test_an_invalid_cell_is_marked_and_a_valid_one_is_saved_with_the_comments(
    table: ValidatorsTable, tmp_path: Path, qtbot: QtBot
) -> None:
    path = _scenario(tmp_path)
    table.set_scenario_file(path)
    cell = table.model.index(1, PARAMETERS)
    assert table.model.setData(cell, "max = -5")
    assert cell.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert cell.data(Qt.ItemDataRole.ToolTipRole) == (
        "max: Input should be greater than or equal to 0"
    )
    assert table.errors() == ["validators[1].max: Input should be greater than or equal to 0"]
    assert table.error_label.text() == table.errors()[0]
    assert table.save() is False
    assert path.read_text(encoding="utf-8") == SCENARIO  # nothing written

    table.model.setData(cell, "max = 120")
    assert cell.data(Qt.ItemDataRole.BackgroundRole) is None
    assert table.error_label.isHidden()
    with qtbot.waitSignal(table.saved) as saved:
        assert table.save() is True
    assert saved.args == [str(path)]
    assert path.read_text(encoding="utf-8") == SCENARIO.replace("max = 160", "max = 120")


def _luminance(colour: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(colour.redF())
        + 0.7152 * channel(colour.greenF())
        + 0.0722 * channel(colour.blueF())
    )


@pytest.mark.parametrize(("base", "text"), [("#ffffff", "#000000"), ("#1e1e1e", "#e0e0e0")])
def test_an_invalid_cell_reads_on_light_and_dark_palettes(
    table: ValidatorsTable, tmp_path: Path, base: str, text: str
) -> None:
    table.set_scenario_file(_scenario(tmp_path))
    cell = table.model.index(1, PARAMETERS)
    table.model.setData(cell, "max = -5")
    tint = cell.data(Qt.ItemDataRole.BackgroundRole).color()
    under, alpha = QColor(base), tint.alphaF()
    pairs = zip(tint.getRgbF()[:3], under.getRgbF()[:3], strict=True)
    shown = QColor.fromRgbF(*(t * alpha + b * (1 - alpha) for t, b in pairs))
    lighter, darker = sorted((_luminance(shown), _luminance(QColor(text))), reverse=True)
    assert (lighter + 0.05) / (darker + 0.05) >= 4.5  # WCAG AA for the cell's text


def test_edits_are_kept_while_another_scenario_is_shown(
    table: ValidatorsTable, tmp_path: Path
) -> None:
    path = _scenario(tmp_path)
    table.set_scenario_file(str(path))
    table.model.setData(table.model.index(1, PARAMETERS), "max = 120")
    table.model.move_row(1, -1)

    table.set_scenario_file("demo:retry-feedback")
    assert not table.dirty
    table.set_scenario_file(str(path))

    assert table.dirty and "edited" in table.heading.text()
    assert [r.to_table()["kind"] for r in table.model.rows()] == ["max_length", "regex_absent"]
    assert path.read_text(encoding="utf-8") == SCENARIO  # nothing written behind the back
    assert table.save()
    text = path.read_text(encoding="utf-8")
    # Origins kept: each table's comments moved with it.
    assert '[[validators]]\n# the length limit\nkind = "max_length"\nmax = 120  # an SMS' in text
    table.set_scenario_file("demo:retry-feedback")
    table.set_scenario_file(str(path))
    assert not table.dirty  # saved: no draft left


def test_typing_in_a_cell_checks_every_keystroke(
    table: ValidatorsTable, tmp_path: Path, qtbot: QtBot
) -> None:
    table.set_scenario_file(_scenario(tmp_path))
    table.show()
    qtbot.waitExposed(table)
    index = table.model.index(0, PARAMETERS)
    table.view.setCurrentIndex(index)
    table.view.edit(index)
    editor = table.view.indexWidget(index)
    assert isinstance(editor, QLineEdit)
    editor.clear()
    qtbot.keyClicks(editor, 'pattern = "["')
    assert "bad regular expression" in editor.toolTip()
    assert table.error_label.text().startswith("validators[0].pattern: bad regular expression")
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    qtbot.keyClicks(editor, 'a]"')
    assert editor.toolTip() == ""
    assert table.error_label.isHidden()


def test_the_kind_is_a_drop_down_and_a_new_kind_gets_its_parameters(
    table: ValidatorsTable, tmp_path: Path
) -> None:
    table.set_scenario_file(_scenario(tmp_path))
    table.show()
    index = table.model.index(1, KIND)
    table.view.edit(index)
    box = table.view.indexWidget(index)
    assert isinstance(box, QComboBox)
    assert [box.itemText(i) for i in range(box.count())] == list(KINDS)
    box.setCurrentText("regex_present")
    table.view.commitData(box)
    assert table.model.index(1, PARAMETERS).data() == 'pattern = ""'
    assert table.model.index(1, FEEDBACK).data() == "Shorten it."


def test_add_move_and_remove_rows_then_save(table: ValidatorsTable, tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    table.set_scenario_file(path)
    table.view.setCurrentIndex(table.model.index(1, KIND))
    table.add_button.click()  # after the current row: a non_empty validator
    assert table.model.index(2, KIND).data() == "non_empty"
    table.model.setData(table.model.index(2, KIND), "calls_tool")
    assert table.errors() == ["validators[2].tool: no tool '' (tools: lookup)"]
    table.model.setData(table.model.index(2, PARAMETERS), 'tool = "lookup"')
    table.up_button.click()  # the new row moves above the length limit
    assert table.view.currentIndex().row() == 1
    table.view.setCurrentIndex(table.model.index(0, KIND))
    table.remove_button.click()
    assert table.dirty
    assert table.save() is True
    text = path.read_text(encoding="utf-8")
    assert tomllib.loads(text)["validators"] == [
        {"kind": "calls_tool", "tool": "lookup"},
        {"kind": "max_length", "max": 160, "feedback": "Shorten it."},
    ]
    # The removed table's own comment went with it; the length limit kept its comments.
    assert "beside the kind" not in text
    assert '# the length limit\n[[validators]]\nkind = "max_length"\nmax = 160  # an SMS' in text
    assert text.startswith("# SMS scenario (top comment)\n")
    assert not table.dirty


def test_ctrl_s_in_the_table_saves(table: ValidatorsTable, tmp_path: Path, qtbot: QtBot) -> None:
    path = _scenario(tmp_path)
    table.set_scenario_file(path)
    table.model.setData(table.model.index(0, FEEDBACK), "No markdown, please.")
    table.show()
    qtbot.waitExposed(table)
    table.activateWindow()
    table.view.setFocus()
    qtbot.waitUntil(table.view.hasFocus)
    with qtbot.waitSignal(table.saved):
        qtbot.keyClick(table.view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert 'feedback = "No markdown, please."' in path.read_text(encoding="utf-8")


def test_a_demo_is_read_only_and_saved_as_a_copy(
    table: ValidatorsTable, tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = demo_path("retry-feedback").read_bytes()
    table.set_scenario_file("demo:retry-feedback")
    assert table.read_only
    assert "built-in demo" in table.heading.text()
    assert table.model.rowCount() == 2
    table.model.setData(table.model.index(1, PARAMETERS), "max = 140")

    monkeypatch.setattr(table, "ask_copy_path", lambda original: None)
    assert table.save() is False  # cancelled: nothing written anywhere

    copy = tmp_path / "my-sms.toml"
    monkeypatch.setattr(table, "ask_copy_path", lambda original: copy)
    with qtbot.waitSignal(table.saved) as saved:
        assert table.save() is True
    assert saved.args == [str(copy)]
    assert demo_path("retry-feedback").read_bytes() == original
    text = copy.read_text(encoding="utf-8")
    assert "max = 140" in text and text.startswith("# B1: a validator rejects the answer")
    assert (tmp_path / "sms_checks.py").is_file()  # the python validator came along
    assert table.path == copy and not table.read_only  # the copy is edited from now on


def test_a_copy_brings_the_python_files_it_references(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "checks.py").write_text("def short(output, ctx):\n    return True\n")
    path = write_scenario(
        source,
        SCENARIO + '\n[[validators]]\nkind = "python"\nfunction = "checks.py:short"\n',
        "sms.toml",
    )
    doc = ScenarioDocument.load(path)
    target = tmp_path / "copy" / "sms.toml"
    target.parent.mkdir()
    save_document(doc, True, target)
    assert (target.parent / "checks.py").read_text() == (source / "checks.py").read_text()
    assert tomllib.loads(target.read_text())["validators"][2]["function"] == "checks.py:short"


def test_a_missing_file_is_a_one_line_error(table: ValidatorsTable, tmp_path: Path) -> None:
    table.set_scenario_file(tmp_path / "gone.toml")
    assert table.path is None
    assert table.error_label.text().startswith(f"{tmp_path / 'gone.toml'}: cannot read")
    assert table.save() is False
