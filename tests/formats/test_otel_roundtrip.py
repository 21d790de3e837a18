"""``export --format otel`` and ``import`` of the result: every demo run comes back equal (a new
run id when the store already has it, and a fidelity report saying the raw bodies are missing);
``--no-content`` leaves no message text in the file; keys never leave."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.formats import genai as g
from inspector.formats.otlp_json import spans
from tests.formats.conftest import DEMOS, Capsys, record_demo


def _export(capsys: Capsys, db: Path, run_id: str, out: Path, *flags: str) -> dict[str, object]:
    assert (
        main(["export", run_id, "--format", "otel", "--out", str(out), "--db", str(db), *flags])
        == 0
    )
    capsys.readouterr()
    document: dict[str, object] = json.loads(out.read_text())
    return document


def _import(capsys: Capsys, db: Path, path: Path) -> dict[str, object]:
    assert main(["import", str(path), "--db", str(db), "--json"]) == 0
    record: dict[str, object] = json.loads(capsys.readouterr().out)
    return record


@pytest.mark.parametrize("demo", DEMOS)
def test_a_demo_run_round_trips_through_otel_to_an_equal_record(
    capsys: Capsys, db: Path, tmp_path: Path, demo: str
) -> None:
    original = record_demo(capsys, db, demo)
    _export(capsys, db, str(original["run_id"]), tmp_path / "run.otlp.json")
    imported = _import(capsys, db, tmp_path / "run.otlp.json")
    assert imported["run_id"] != original["run_id"]  # the store had it: a new id
    fidelity = imported.pop("fidelity")
    assert fidelity["format"] == "otel" and fidelity["replayable"] is True
    assert [gap["kind"] for gap in fidelity["gaps"]] == ["raw"]
    imported["run_id"] = original["run_id"]
    assert imported == original


def test_into_another_store_the_run_keeps_its_id(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    original = record_demo(capsys, db, "retry-feedback")
    _export(capsys, db, str(original["run_id"]), tmp_path / "run.otlp.json")
    imported = _import(capsys, tmp_path / "other.sqlite3", tmp_path / "run.otlp.json")
    assert imported["run_id"] == original["run_id"]


def test_the_span_tree_attributes_and_evaluations(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    record = record_demo(capsys, db, "retry-feedback")
    document = _export(capsys, db, str(record["run_id"]), tmp_path / "run.otlp.json")
    found = list(spans(document))
    root, *children = found
    assert root.name == "invoke_agent retry-feedback" and root.parent_id == ""
    assert root.attributes[g.OPERATION] == "invoke_agent"
    assert {s.parent_id for s in children} == {root.span_id}
    assert len({s.trace_id for s in found}) == 1
    chats = [s for s in children if s.attributes[g.OPERATION] == "chat"]
    assert len(chats) == len(record["steps"])  # type: ignore[arg-type]
    assert chats[0].name == f"chat {record['model']}"
    assert chats[0].attributes[g.INPUT_TOKENS] > 0
    # The first answer failed validation: its verdicts are evaluation events on its chat span.
    failed = [s for s in chats if s.attributes[g.ns("step.status")] == "failed_validation"]
    assert failed
    events = failed[0].events
    assert events and all(name == g.EVALUATION_EVENT for name, _, _ in events)
    labels = {attrs[g.EVALUATION_LABEL] for _, _, attrs in events}
    assert "fail" in labels
    assert failed[0].attributes[g.ns("step.cleared")] is True
    feedback = json.loads(failed[0].attributes[g.ns("step.feedback")])
    assert feedback and feedback[0]["role"] in ("user", "tool", "system")
    # Tool executions are execute_tool spans carrying the call's id and result.
    tools = [s for s in children if s.attributes[g.OPERATION] == "execute_tool"]
    assert tools
    for span in tools:
        assert span.name == f"execute_tool {span.attributes[g.TOOL_NAME]}"
        assert g.TOOL_CALL_RESULT in span.attributes


def test_no_content_leaves_out_the_messages_and_imports_as_not_replayable(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    record = record_demo(capsys, db, "retry-feedback")
    path = tmp_path / "bare.otlp.json"
    _export(capsys, db, str(record["run_id"]), path, "--no-content")
    text = path.read_text()
    first_user = record["steps"][0]["request"]["messages"][0]["content"]  # type: ignore[index]
    assert first_user and first_user not in text
    assert str(record["output"]) not in text
    assert g.INPUT_MESSAGES not in text and g.TOOL_CALL_RESULT not in text
    assert g.INPUT_TOKENS in text and g.EVALUATION_EVENT in text  # counts and verdicts stay
    imported = _import(capsys, tmp_path / "other.sqlite3", path)
    assert imported["fidelity"]["replayable"] is False  # type: ignore[index]
    assert imported["fidelity"]["gaps"][0]["kind"] == "content"  # type: ignore[index]
    assert imported["steps"][0]["request"]["messages"] == []  # type: ignore[index]


def test_a_key_in_a_prompt_never_reaches_the_export(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    key = "sk-proj-" + "A1b2C3d4" * 4
    record = record_demo(capsys, db, "retry-feedback", f"prompt.user=use {key} please")
    path = tmp_path / "run.otlp.json"
    _export(capsys, db, str(record["run_id"]), path)
    text = path.read_text()
    assert key not in text and "[redacted]" in text


def test_export_otel_to_stdout(capsys: Capsys, db: Path) -> None:
    record = record_demo(capsys, db, "empty-final")
    assert main(["export", str(record["run_id"]), "--format", "otel", "--db", str(db)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"] == "agent-inspector"
