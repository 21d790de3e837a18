"""``import`` of chat-completions logs built from recorded provider traffic
(tests/formats/fixtures/wire/): every run ends with a termination that says what happened, as
the engine would judge the same reply, and a run marked replayable replays offline with
byte-identical requests (the others name the request field a replay cannot send)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from tests.formats.conftest import FIXTURES, Capsys, record_demo

WIRE = FIXTURES / "wire" / "openai-chat"
PAIRS = sorted(p.name.removesuffix(".request.json") for p in WIRE.glob("*.request.json"))
# The recordings whose requests the engine sends as they were: tool_choice "auto" or absent, a
# JSON-schema response_format or none. The errors replay up to the failed call.
REPLAYABLE = {
    "content-filter-empty-azure-gpt35",
    "json-schema-gpt41-nano",
    "reasoning-tokens-gpt5-nano",
    "refusal-json-schema-gpt4o",
    "text-basic-gpt35",
    "error-400-unsupported-value-o1-mini",
    "error-429-openrouter-upstream-rate-limit",
}
NOT_REPLAYABLE = {
    "tool-choice-none-gpt5-mini": "'none'",
    "tool-choice-required-gpt5-mini": "'required'",
}


def _line(name: str, response: Any = None) -> str:
    request = json.loads((WIRE / f"{name}.request.json").read_text())
    if response is None:
        response = json.loads((WIRE / f"{name}.response.json").read_text())
    key = "error" if "error" in response else "response"
    return json.dumps({"request": request, key: response})


def _import(capsys: Capsys, db: Path, tmp_path: Path, *lines: str) -> list[dict[str, Any]]:
    log = tmp_path / "calls.jsonl"
    log.write_text("\n".join(lines) + "\n")
    assert main(["import", str(log), "--db", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return out if isinstance(out, list) else [out]


def _replay(capsys: Capsys, db: Path, run_id: str) -> dict[str, Any]:
    main(["replay", run_id, "--offline", "--db", str(db), "--json"])
    replayed: dict[str, Any] = json.loads(capsys.readouterr().out)
    return replayed


def _ending(record: dict[str, Any]) -> tuple[Any, ...]:
    error = record["error"] or {}
    return record["status"], record["termination"], error.get("type"), error.get("message")


def test_a_log_ending_in_a_tool_call_is_a_turn_cut_short(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    (record,) = _import(capsys, db, tmp_path, _line("tool-choice-required-gpt5-mini"))
    assert (record["status"], record["termination"]) == ("failed", "step_cap")
    assert record["error"]["type"] == "StepCapReached"
    assert "ends with a tool call" in record["error"]["message"]
    ending = [g for g in record["fidelity"]["gaps"] if g["kind"] == "ending"]
    assert ending and ending[0]["steps"] == [1] and "step_cap" in ending[0]["detail"]
    # Every field a native run's record has (DESIGN §4), with a termination `runs` shows.
    native = record_demo(capsys, tmp_path / "native.sqlite3", "step-cap")
    assert set(native) <= set(record)
    assert main(["runs", "--db", str(db)]) == 0
    assert "step_cap" in capsys.readouterr().out


def test_a_content_filtered_empty_reply_fails_as_its_replay_does(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    (record,) = _import(capsys, db, tmp_path, _line("content-filter-empty-azure-gpt35"))
    assert _ending(record) == (
        "failed",
        "empty_final",
        "EmptyFinal",
        "step 1 returned no content (finish_reason content_filter)",
    )
    assert record["output"] is None and record["steps"][0]["status"] == "empty"
    assert _ending(_replay(capsys, db, record["run_id"])) == _ending(record)


def test_an_empty_reply_that_stopped_is_accepted_as_its_replay_accepts_it(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    completion = json.loads((WIRE / "text-basic-gpt35.response.json").read_text())
    completion["choices"][0]["message"]["content"] = ""
    (record,) = _import(capsys, db, tmp_path, _line("text-basic-gpt35", completion))
    assert (record["status"], record["termination"], record["output"]) == (
        "succeeded",
        "empty_final",
        "",
    )
    replayed = _replay(capsys, db, record["run_id"])
    assert (replayed["status"], replayed["termination"], replayed["output"]) == (
        "succeeded",
        "empty_final",
        "",
    )


def test_a_refusal_fails_as_its_replay_does(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    (record,) = _import(capsys, db, tmp_path, _line("refusal-json-schema-gpt4o"))
    assert record["status"] == "failed" and record["termination"] == "refusal"
    assert record["budgets"]["attempts_used"] == 1
    assert _ending(_replay(capsys, db, record["run_id"])) == _ending(record)


def test_a_json_schema_answer_is_the_parsed_output(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    (record,) = _import(capsys, db, tmp_path, _line("json-schema-gpt41-nano"))
    assert isinstance(record["output"], dict) and set(record["output"]) == {"joke", "rating"}
    assert record["policy"]["output_mode"] == "native"
    assert _replay(capsys, db, record["run_id"])["output"] == record["output"]


def test_replayable_imports_replay_offline_with_the_recorded_requests(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    assert set(PAIRS) == REPLAYABLE | set(NOT_REPLAYABLE)
    records = _import(capsys, db, tmp_path, *(_line(name) for name in PAIRS))
    assert len(records) == len(PAIRS)
    for name, record in zip(PAIRS, records, strict=True):
        fidelity = record["fidelity"]
        replayed = _replay(capsys, db, record["run_id"])
        if name in NOT_REPLAYABLE:
            assert fidelity["replayable"] is False, name
            differs = [g["detail"] for g in fidelity["gaps"] if g["kind"] == "request_differs"]
            assert len(differs) == 1 and differs[0].startswith("tool_choice: "), name
            assert NOT_REPLAYABLE[name] in differs[0]
            continue
        assert fidelity["replayable"] is True, name
        assert [s["request"] for s in replayed["steps"]] == [
            s["request"] for s in record["steps"]
        ], name
        if record["status"] == "error":  # the recorded call failed: nothing to answer with
            assert "the recorded call ended error" in replayed["error"]["message"], name
            continue
        assert _ending(replayed) == _ending(record), name
        assert replayed["output"] == record["output"], name


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES
        / "wire"
        / "anthropic-messages"
        / "json-schema-output-config-sonnet45.response.json",
        WIRE / "text-basic-gpt35.response.json",  # one line: a response, not a logged call
        WIRE / "tool-choice-none-gpt5-mini.response.json",  # pretty-printed
    ],
    ids=["anthropic-response", "openai-response", "openai-response-pretty"],
)
def test_a_file_of_no_known_format_says_so_and_lists_the_formats(
    capsys: Capsys, db: Path, path: Path
) -> None:
    assert main(["import", str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "line 1" not in err
    assert f"{path}: format not recognised" in err
    assert "--format accepts: auto, otel, pydantic-ai, openai-jsonl, inspector-jsonl" in err
    # Said to be a log, it is read as one: the line that is not a call is named.
    assert main(["import", str(path), "--format", "openai-jsonl", "--db", str(db)]) == 2
    assert "openai-jsonl: line 1: " in capsys.readouterr().err


def test_the_summary_line_names_the_field_a_replay_would_send_otherwise(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    log.write_text(_line("tool-choice-none-gpt5-mini") + "\n" + _line("text-basic-gpt35") + "\n")
    assert main(["import", str(log), "--db", str(db)]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert "not replayable as recorded (a replay sends another tool_choice)" in first
    assert "request_differs" not in first and "; the source lacks: timing, raw" in first
    assert "1 step, succeeded; replayable; the source lacks: timing, raw" in second


def test_a_tool_whose_results_differ_replays_each_recorded_result(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    tools = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}]
    user = {"role": "user", "content": "go"}

    def asked(n: int) -> dict[str, Any]:
        call = {"id": f"c{n}", "type": "function", "function": {"name": "get", "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def result(n: int) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": f"c{n}", "content": f"result {n}"}

    def line(messages: list[dict[str, Any]], answer: dict[str, Any]) -> str:
        reason = "tool_calls" if answer.get("tool_calls") else "stop"
        choice = {"finish_reason": reason, "message": answer}
        request = {"model": "m", "messages": messages, "tools": tools}
        return json.dumps({"request": request, "response": {"choices": [choice]}})

    done = {"role": "assistant", "content": "done"}
    (record,) = _import(
        capsys,
        db,
        tmp_path,
        line([user], asked(1)),
        line([user, asked(1), result(1)], asked(2)),
        line([user, asked(1), result(1), asked(2), result(2)], done),
    )
    assert record["fidelity"]["replayable"] is True
    replayed = _replay(capsys, db, record["run_id"])
    assert (replayed["status"], replayed["output"]) == ("succeeded", "done")
    assert [s["request"] for s in replayed["steps"]] == [s["request"] for s in record["steps"]]
