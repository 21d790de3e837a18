"""ScenarioDocument: a scenario file edited in place keeps the user's comments and layout."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.scenario import load_scenario
from inspector.editing import ScenarioDocument
from inspector.resources import demo_names, demo_path

COMMENTED = """\
# An SMS writer.  (comment above everything)
name = "sms"  # beside a key
description = 'literal string, kept as written'

[model]
provider = "scripted"
name    =   "demo"   # odd spacing stays


[prompt]
# above the system prompt
system = \"\"\"You write SMS messages.
Keep them "short".\"\"\"  # beside a multi-line string
user = "Tell Sam the meeting moved."

# The validators: the block above a header.
[[validators]]
kind = "regex_absent"  # no markdown
name = "no_markdown"
pattern = "[*_#`]"
# inside the table
feedback = "Plain text only."

# The length limit of an SMS.
[[validators]]
kind = "max_length"
max = 160  # characters
feedback = "Shorten it."

[policy]
max_attempts = 3

[[script]]
text = "Hi Sam, the meeting moved."
"""

COMMENTS = [line.split("#", 1)[1] for line in COMMENTED.splitlines() if "# " in line]


def _doc(text: str = COMMENTED) -> ScenarioDocument:
    return ScenarioDocument.from_text(text, "sms.toml")


def _keeps_every_comment(text: str, but: tuple[str, ...] = ()) -> None:
    for comment in COMMENTS:
        if not any(b in comment for b in but):
            assert comment in text, comment


def test_an_unchanged_document_round_trips_byte_for_byte() -> None:
    doc = _doc()
    assert doc.dumps() == COMMENTED
    doc.set("prompt.user", "Tell Sam the meeting moved.")  # the same value: nothing rewritten
    doc.set_validators(doc.validators)
    assert doc.dumps() == COMMENTED


def test_a_crlf_file_round_trips_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "crlf.toml"
    path.write_bytes(COMMENTED.replace("\n", "\r\n").encode())
    doc = ScenarioDocument.load(path)
    doc.save()
    assert path.read_bytes() == COMMENTED.replace("\n", "\r\n").encode()


def test_changing_one_validator_max_keeps_every_comment() -> None:
    doc = _doc()
    rows = doc.validators
    rows[1]["max"] = 120
    doc.set_validators(rows)
    text = doc.dumps()
    assert "max = 120  # characters" in text
    _keeps_every_comment(text)
    assert text == COMMENTED.replace("max = 160", "max = 120")


def test_a_new_validator_is_appended_as_a_table() -> None:
    doc = _doc()
    doc.set_validators([*doc.validators, {"kind": "non_empty", "name": None}])
    text = doc.dumps()
    assert '[[validators]]\nkind = "non_empty"\n\n[policy]' in text
    assert "name" not in text.split("non_empty")[1].split("[policy]")[0]  # None: left out
    _keeps_every_comment(text)
    assert [v["kind"] for v in tomllib.loads(text)["validators"]] == [
        "regex_absent", "max_length", "non_empty",
    ]  # fmt: skip


def test_removing_a_validator_takes_its_own_comments_along() -> None:
    doc = _doc()
    doc.set_validators([doc.validators[1]], origins=[1])
    text = doc.dumps()
    assert tomllib.loads(text)["validators"] == [
        {"kind": "max_length", "max": 160, "feedback": "Shorten it."}
    ]
    assert "no markdown" not in text and "inside the table" not in text
    _keeps_every_comment(text, but=("no markdown", "inside the table"))
    # The block written above the removed table's header stays above the array; the block of
    # the table now first goes under its header.
    assert (
        "# The validators: the block above a header.\n[[validators]]\n"
        "# The length limit of an SMS.\nkind = "
    ) in text


def test_reordered_validators_carry_the_comment_above_their_header() -> None:
    doc = _doc()
    rows = doc.validators
    rows.append({"kind": "non_empty"})
    doc.set_validators([rows[0], rows[2], rows[1]], origins=[0, None, 1])
    text = doc.dumps()
    assert '\n[[validators]]\nkind = "non_empty"\n\n# The length limit of an SMS.\n' in text
    _keeps_every_comment(text)


def test_a_validator_moved_to_the_front_keeps_the_comment_above_its_header() -> None:
    doc = _doc()
    rows = doc.validators
    doc.set_validators([rows[1], rows[0]], origins=[1, 0])
    text = doc.dumps()
    _keeps_every_comment(text)
    assert '[[validators]]\n# The length limit of an SMS.\nkind = "max_length"' in text
    assert tomllib.loads(text)["validators"] == [rows[1], rows[0]]
    doc.set_validators(doc.validators[::-1], origins=[1, 0])  # and back: still there
    _keeps_every_comment(doc.dumps())
    assert tomllib.loads(doc.dumps())["validators"] == rows


def test_removing_every_validator_removes_the_array() -> None:
    doc = _doc()
    doc.set_validators([])
    assert "validators" not in tomllib.loads(doc.dumps())
    assert doc.validators == []


def test_editing_the_system_prompt_keeps_comments_and_writes_a_multiline_string() -> None:
    doc = _doc()
    prompt = 'Line one says "hi".\nLine two: ünïcode, a \\ and """ quotes.'
    doc.set("prompt.system", prompt)
    text = doc.dumps()
    assert tomllib.loads(text)["prompt"]["system"] == prompt
    assert '  # beside a multi-line string\nuser = "Tell Sam' in text
    _keeps_every_comment(text)
    assert doc.get("prompt.system") == prompt


def test_values_are_written_in_natural_toml() -> None:
    doc = _doc()
    doc.set("output.schema", {"type": "object", "properties": {"to": {"type": "string"}}})
    doc.set("prompt.messages", [{"role": "user", "content": "hi"}, {"role": "assistant"}])
    doc.set("model.temperature", 0.5)
    text = doc.dumps()
    assert '[output]\nschema = {type = "object", properties = {to = {type = "string"}}}' in text
    assert 'messages = [\n    {role = "user", content = "hi"},\n' in text
    assert 'name    =   "demo"   # odd spacing stays\ntemperature = 0.5\n' in text
    doc.set("model.temperature", None)
    assert "temperature" not in doc.dumps()


def test_tools_are_written_as_an_array_of_tables() -> None:
    doc = _doc()
    doc.set("tools", [{"name": "lookup", "parameters": {"type": "object"}, "result": "ok"}])
    text = doc.dumps()
    assert '[[tools]]\nname = "lookup"\nparameters = {type = "object"}\nresult = "ok"' in text
    assert doc.tools == [{"name": "lookup", "parameters": {"type": "object"}, "result": "ok"}]
    assert doc.validate().tools[0].name == "lookup"


def test_an_invalid_edit_gives_the_one_line_error_and_leaves_the_file_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sms.toml"
    path.write_text(COMMENTED, encoding="utf-8")
    doc = ScenarioDocument.load(path)
    rows = doc.validators
    rows[1]["max"] = -1
    doc.set_validators(rows)
    assert doc.problem() == (
        f"{path}: validators[1].max: Input should be greater than or equal to 0"
    )
    with pytest.raises(ScenarioError, match=r"validators\[1\]\.max"):
        doc.save()
    assert path.read_text(encoding="utf-8") == COMMENTED
    assert [p.name for p in tmp_path.iterdir()] == ["sms.toml"]  # no temporary file left


def test_a_valid_edit_is_saved_atomically(tmp_path: Path) -> None:
    path = tmp_path / "sms.toml"
    path.write_text(COMMENTED, encoding="utf-8")
    doc = ScenarioDocument.load(path)
    doc.set("prompt.system", "Be brief.")
    assert doc.save() == path
    assert load_scenario(path).prompt.system == "Be brief."
    assert '# above the system prompt\nsystem = "Be brief."  # beside' in path.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["sms.toml"]


def test_save_as_writes_a_copy_and_edits_it_from_then_on(tmp_path: Path) -> None:
    original = tmp_path / "a.toml"
    original.write_text(COMMENTED, encoding="utf-8")
    doc = ScenarioDocument.load(original)
    copy = tmp_path / "b.toml"
    doc.save(copy)
    doc.set("prompt.user", "Changed.")
    doc.save()
    assert original.read_text(encoding="utf-8") == COMMENTED
    assert load_scenario(copy).prompt.user == "Changed."
    assert doc.source == str(copy)


def test_bad_toml_and_unreadable_files_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"^x.toml: not valid TOML: "):
        ScenarioDocument.from_text("name = ", "x.toml")
    with pytest.raises(ScenarioError, match=r"missing.toml: cannot read"):
        ScenarioDocument.load(tmp_path / "missing.toml")


def test_referenced_python_files_are_listed() -> None:
    doc = _doc()
    doc.set_validators([*doc.validators, {"kind": "python", "function": "checks.py:short"}])
    doc.set("tools", [{"name": "t", "function": "tools/impl.py:run"}, {"name": "u"}])
    assert doc.referenced_files() == ["checks.py", "tools/impl.py"]


@pytest.mark.parametrize("name", demo_names())
def test_every_demo_loads_round_trips_and_validates(name: str) -> None:
    path = demo_path(name)
    doc = ScenarioDocument.load(path, source=f"demo:{name}")
    assert doc.dumps() == path.read_text(encoding="utf-8")
    doc.set_validators(doc.validators)
    doc.set_tools(doc.tools)
    assert doc.dumps() == path.read_text(encoding="utf-8")
    assert doc.validate() == load_scenario(path, source=f"demo:{name}")
