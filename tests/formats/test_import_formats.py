"""``import`` of other tools' files: Pydantic AI's traces and histories (written by running
Pydantic AI, tests/formats/make_fixtures.py), OpenAI chat-completions logs and batch files, and
the older flattened OpenTelemetry names. Attempts are rebuilt from the retry feedback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.store import Store
from tests.formats import make_fixtures
from tests.formats.conftest import FIXTURES, Capsys, record_demo


def _import(capsys: Capsys, db: Path, path: Path, *flags: str) -> Any:
    assert main(["import", str(path), "--db", str(db), "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def _check_sms_turn(record: dict[str, Any]) -> None:
    """The turn make_fixtures runs: a tool call, an answer the validator rejects, the answer."""
    steps = record["steps"]
    assert [s["status"] for s in steps] == ["success", "failed_validation", "success"]
    assert [s["attempt"] for s in steps] == [1, 1, 2]
    assert steps[0]["response"]["tool_calls"][0]["name"] == "lookup_contact"
    assert steps[0]["tool_results"][0]["content"] == "Sam: +1 555 0100"
    verdict = steps[1]["verdicts"][0]
    assert verdict["status"] == "fail" and verdict["reason"] == make_fixtures.FEEDBACK
    assert make_fixtures.FEEDBACK in steps[1]["feedback"][0]["content"]
    assert steps[0]["request"]["system"] == make_fixtures.SYSTEM
    assert steps[0]["request"]["messages"] == [{"role": "user", "content": make_fixtures.USER}]
    assert record["status"] == "succeeded" and record["termination"] == "stop"
    assert record["output"] == make_fixtures.FINAL
    assert record["budgets"]["attempts_used"] == 2
    assert record["usage"]["input_tokens"] > 0
    assert record["transcript"][-1] == {"role": "assistant", "content": make_fixtures.FINAL}


def _gaps(record: dict[str, Any]) -> set[str]:
    return {g["kind"] for g in record["fidelity"]["gaps"]}


def test_a_pydantic_ai_trace(capsys: Capsys, db: Path) -> None:
    record = _import(capsys, db, FIXTURES / "pydantic_ai_trace.otlp.json")
    _check_sms_turn(record)
    assert record["scenario"] == "sms-agent"
    tools = record["steps"][0]["request"]["tools"]
    assert [t["name"] for t in tools] == ["lookup_contact"]
    assert tools[0]["parameters"]["required"] == ["name"]
    assert record["fidelity"]["format"] == "otel"
    assert _gaps(record) == {"tool_choice", "sampling", "verdicts", "raw"}
    assert record["fidelity"]["replayable"] is False


def test_a_pydantic_ai_history(capsys: Capsys, db: Path) -> None:
    record = _import(capsys, db, FIXTURES / "pydantic_ai_history.json")
    _check_sms_turn(record)
    assert record["fidelity"]["format"] == "pydantic-ai"
    assert "tool_definitions" in _gaps(record) and "timing" not in _gaps(record)


def test_fixtures_written_now_by_the_installed_pydantic_ai_import_the_same(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    history, trace = make_fixtures.write(tmp_path)
    _check_sms_turn(_import(capsys, db, history))
    _check_sms_turn(_import(capsys, db, trace))


def test_an_openai_proxy_log_is_grouped_into_turns_by_conversation(
    capsys: Capsys, db: Path
) -> None:
    first, second = _import(capsys, db, FIXTURES / "openai_proxy_log.jsonl")
    assert [s["status"] for s in first["steps"]] == ["success", "failed_validation", "success"]
    assert first["steps"][1]["feedback"] == [
        {"role": "user", "content": "Plain text only: no markdown characters."}
    ]
    assert first["model"] == "gpt-4o-mini" and first["provider"] == "openai"
    assert first["steps"][0]["request"]["tools"][0]["name"] == "lookup_contact"
    assert second["output"] == "4" and len(second["steps"]) == 1
    assert _gaps(first) == {"timing", "verdicts", "raw"} and first["fidelity"]["replayable"]


def test_an_openai_batch_file_pairs_lines_by_custom_id(capsys: Capsys, db: Path) -> None:
    records = _import(capsys, db, FIXTURES / "openai_batch.jsonl", "--format", "openai-jsonl")
    by_output = {r["output"]: r for r in records}
    assert set(by_output) == {"Hi!", "Bye!"}
    hi = by_output["Hi!"]["steps"][0]["request"]["messages"]
    assert hi == [{"role": "user", "content": "Say hi"}]  # content parts read as their text


def test_the_older_flattened_attribute_names(capsys: Capsys, db: Path) -> None:
    record = _import(capsys, db, FIXTURES / "openllmetry_flattened.otlp.json")
    steps = record["steps"]
    assert record["provider"] == "openai" and record["model"] == "gpt-4o-mini"
    assert steps[0]["response"]["tool_calls"][0]["arguments"] == {"name": "Sam"}
    assert steps[0]["tool_results"][0]["content"] == "Sam: +1 555 0100"
    assert steps[0]["response"]["usage"] == {"input_tokens": 60, "output_tokens": 12}
    assert steps[0]["request"]["system"] == "You write SMS messages."
    assert record["output"] == "Hi Sam, the meeting moved to 3pm."
    assert steps[0]["latency_ms"] == 800.0


def test_the_summary_line_says_what_the_source_lacks(capsys: Capsys, db: Path) -> None:
    assert main(["import", str(FIXTURES / "pydantic_ai_history.json"), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("imported run ") and "3 steps, succeeded" in out
    assert "not replayable as recorded" in out and "tool_definitions" in out


def test_an_imported_run_is_a_normal_run(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    record = _import(capsys, db, FIXTURES / "pydantic_ai_trace.otlp.json")
    run_id = record["run_id"]
    with Store.open(db) as store:
        assert store.load(run_id).fidelity is not None
    assert main(["runs", "--db", str(db)]) == 0
    assert run_id in capsys.readouterr().out
    html = tmp_path / "r.html"
    assert main(["export", run_id, "--format", "html", "--out", str(html), "--db", str(db)]) == 0
    assert make_fixtures.FINAL in html.read_text()
    # Its scenario is the recorded replies on the scripted model: re-validation and an
    # offline replay load it like any run's.
    validators = tmp_path / "v.toml"
    validators.write_text('[[validators]]\nkind = "regex_absent"\npattern = "[*]"\n')
    assert main(["revalidate", run_id, "--validators", str(validators), "--db", str(db)]) == 0
    capsys.readouterr()
    # A source that carried whole requests replays offline from its recording.
    logged = _import(capsys, db, FIXTURES / "openai_proxy_log.jsonl")[0]
    assert main(["replay", logged["run_id"], "--offline", "--db", str(db), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["replay_of"] == logged["run_id"] and replayed["status"] == "succeeded"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.json", "{", "a.json: format not recognised"),
        ("a.json", "[1, 2]", "a.json: format not recognised"),
        ("l.jsonl", '{"request": {"messages": [}\n{"request": {}}\n',
         "l.jsonl: line 1: not valid JSON: Expecting value (column 27)"),
        ("t.otlp.json", '{"resourceSpans": 3}', "resourceSpans"),
        ("t.otlp.json", '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "chat x",'
         ' "traceId": "zz"}]}]}]}', "span 1 ('chat x'): id 'zz' is not hex"),
        ("t.otlp.json", '{"resourceSpans": []}', "no GenAI chat spans"),
        ("h.json", '[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "x"}]},'
         ' {"kind": "response", "parts": [{"part_kind": "tool-call"}]}]',
         "message 2: missing field 'tool_name'"),
        ("h.json", '[{"kind": "request", "parts": []}]', "no model response"),
        ("l.jsonl", '{"request": {"messages": []}, "response": {"choices": []}}\n{"x": 1}\n',
         "line 2: expected"),
        ("l.jsonl", '{"request": {"messages": [{"content": "hi"}]}, "response": {}}\n',
         "line 1: a message needs a role"),
        ("l.jsonl", '{"custom_id": "a", "body": {"messages": []}}\n', "line 1: batch line with no"),
        ("l.bin", "\x00\x01", "not OTLP/JSON, a Pydantic AI message history, a chat-"),
    ],
)  # fmt: skip
def test_a_bad_file_is_one_line_naming_where_and_stores_nothing(
    capsys: Capsys, db: Path, tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["import", str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agent-inspector: error: {path}: ")
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    with Store.open(db) as store:
        assert store.runs() == []


def test_a_missing_file(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    assert main(["import", str(tmp_path / "nope.json"), "--db", str(db)]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err


def _s(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def test_messages_as_span_events(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    """The event form of early GenAI instrumentations: gen_ai.*.message and gen_ai.choice."""
    events = [
        {"name": "gen_ai.system.message", "attributes": [_s("content", "Be brief.")]},
        {"name": "gen_ai.user.message", "attributes": [_s("content", "2+2?")]},
        {"name": "gen_ai.choice", "attributes": [
            _s("message", '{"role": "assistant", "content": "4"}'), _s("finish_reason", "stop")]},
    ]  # fmt: skip
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "chat gpt-4o",
        "startTimeUnixNano": "1764000000000000000",
        "endTimeUnixNano": "1764000000250000000",
        "attributes": [_s("gen_ai.operation.name", "chat"), _s("gen_ai.system", "openai"),
                       _s("gen_ai.request.model", "gpt-4o")],
        "events": events,
    }  # fmt: skip
    path = tmp_path / "events.otlp.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    record = _import(capsys, db, path)
    (step,) = record["steps"]
    assert step["request"]["system"] == "Be brief."
    assert step["request"]["messages"] == [{"role": "user", "content": "2+2?"}]
    assert step["response"]["text"] == "4" and step["response"]["finish_reason"] == "stop"
    assert step["latency_ms"] == 250.0 and record["output"] == "4"
    assert {"tool_definitions", "tool_choice", "sampling"} <= _gaps(record)


def test_our_own_jsonl_export_imports_as_the_run_it_came_from(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    """A run exported as JSONL on one machine is imported whole on another: the same record;
    imported where it came from, under a new id. A cut-off export is one line, exit 2."""
    original = record_demo(capsys, db, "retry-feedback")
    run_id = str(original["run_id"])
    exported = tmp_path / "run.jsonl"
    assert (
        main(["export", run_id, "--format", "jsonl", "--out", str(exported), "--db", str(db)]) == 0
    )
    capsys.readouterr()

    elsewhere = tmp_path / "elsewhere.sqlite3"
    assert main(["import", str(exported), "--db", str(elsewhere), "--json"]) == 0
    imported = json.loads(capsys.readouterr().out)
    assert imported == original
    assert main(["import", str(exported), "--db", str(db), "--json"]) == 0  # same store
    again = json.loads(capsys.readouterr().out)
    assert again["run_id"] != run_id and again["steps"] == original["steps"]

    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(exported.read_text().splitlines(keepends=True)[:-3]))
    assert main(["import", str(cut), "--db", str(elsewhere)]) == 2
    err = capsys.readouterr().err
    ends = "the export ends before its run does (no run_finished line)"
    assert err == f"agent-inspector: error: {cut}: inspector-jsonl: {ends}\n"


def test_an_exported_tool_with_a_password_parameter_imports_back_replayable(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    """The export redacted a schema's ``password`` property by name (``"password":
    "[redacted]"``): the run imported from it diverged at step 1 under ``replay --offline``.
    Schema property names are names; the password the model sent stays redacted."""
    scenario = tmp_path / "login.toml"
    scenario.write_text(
        'name = "login"\n[model]\nprovider = "scripted"\nname = "demo"\n'
        '[prompt]\nsystem = "x"\nuser = "log in"\n'
        '[[tools]]\nname = "login"\ndescription = "log in"\nresult = "ok"\n'
        'parameters = { type = "object", properties = { user = { type = "string" }, '
        'password = { type = "string" } }, required = ["user", "password"] }\n'
        '[[script]]\ntool_calls = [{ name = "login", arguments = '
        '{ user = "bob", password = "hunter2-secret" } }]\n'
        '[[script]]\ntext = "done"\n'
    )
    assert main(["run", str(scenario), "--db", str(db), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    exported = tmp_path / "run.jsonl"
    assert (
        main(["export", run_id, "--format", "jsonl", "--out", str(exported), "--db", str(db)]) == 0
    )
    text = exported.read_text()
    assert "hunter2-secret" not in text
    assert '"password":{"type":"string"}' in text.replace(" ", "")
    capsys.readouterr()
    elsewhere = tmp_path / "elsewhere.sqlite3"
    imported = _import(capsys, elsewhere, exported)
    code = main(["replay", imported["run_id"], "--offline", "--db", str(elsewhere), "--json"])
    replay = json.loads(capsys.readouterr().out)
    assert code == 0 and replay["status"] == "succeeded", replay.get("error")
