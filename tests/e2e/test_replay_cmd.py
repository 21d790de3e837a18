"""`agent-inspector replay` as a user runs it: record a run, replay it from the store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.records import RawExchange, RunRecord, Step
from inspector.resources import demo_path
from inspector.store import Store

Capture = pytest.CaptureFixture[str]


def run_json(capsys: Capture, *args: str) -> tuple[int, RunRecord]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, RunRecord.model_validate(json.loads(out))


def same(step: Step) -> dict[str, Any]:
    return step.model_dump(mode="json", exclude={"latency_ms", "ttft_ms"})


@pytest.fixture
def sms(tmp_path: Path) -> str:
    """The retry-feedback demo without its streaming delays (fast, the same turn), beside its
    python validators file."""
    demo = demo_path("retry-feedback")
    text = demo.read_text(encoding="utf-8")
    path = tmp_path / "sms.toml"
    path.write_text(text.replace("delay_ms = 20", "delay_ms = 0"), encoding="utf-8")
    shutil.copyfile(demo.parent / "sms_checks.py", tmp_path / "sms_checks.py")
    return str(path)


@pytest.fixture
def recorded(sms: str, capsys: Capture) -> RunRecord:
    code, record = run_json(capsys, "run", sms)
    assert code == 0 and record.status == "succeeded"
    return record


def test_offline_replay_reproduces_the_run_and_is_recorded(
    recorded: RunRecord, capsys: Capture
) -> None:
    code, again = run_json(capsys, "replay", recorded.run_id, "--offline")
    assert code == 0
    assert again.replay_of == recorded.run_id and again.run_id != recorded.run_id
    assert [same(s) for s in again.steps] == [same(s) for s in recorded.steps]
    assert (again.status, again.termination, again.output) == (
        recorded.status,
        recorded.termination,
        recorded.output,
    )
    assert again.transcript == recorded.transcript
    with Store.open() as store:
        assert store.load(again.run_id) == again
        summaries = {s.run_id: s for s in store.runs()}
    assert summaries[again.run_id].replay_of == recorded.run_id


def test_a_unique_prefix_and_an_explicit_db(tmp_path: Path, capsys: Capture) -> None:
    db = str(tmp_path / "elsewhere.sqlite3")
    code, original = run_json(capsys, "run", "demo:step-cap", "--db", db)
    assert code == 0
    code, again = run_json(capsys, "replay", original.run_id[:6], "--offline", "--db", db)
    assert code == 0 and again.replay_of == original.run_id
    Store.open().close()
    assert main(["replay", original.run_id, "--offline"]) == 2  # not in the default store
    assert f"no run '{original.run_id}'" in capsys.readouterr().err


def test_offline_divergence_is_an_error_naming_the_step_and_message(
    recorded: RunRecord, capsys: Capture
) -> None:
    code, again = run_json(
        capsys, "replay", recorded.run_id, "--offline", "--set", "policy.feedback_history=latest"
    )
    assert code == 1
    assert again.status == "error" and again.termination == "provider_error"
    assert again.error is not None and again.error.type == "ReplayDivergence"
    assert again.error.message.startswith(
        "replay diverged at step 4: messages[3] (assistant) differs: recorded '**Hi Sam!**"
    )
    assert again.policy.feedback_history == "latest"
    assert again.overrides == ["policy.feedback_history=latest"]


def test_the_timeline_says_what_came_from_the_recording(
    recorded: RunRecord, capsys: Capture
) -> None:
    code = main(["replay", recorded.run_id, "--offline", "--set", "policy.max_steps=3"])
    out = capsys.readouterr().out
    assert code == 1
    assert "replay diverged at step 3: system prompt differs" in out
    assert out.rstrip().endswith(
        f"replay of {recorded.run_id} (offline): steps 1-2 from the recording"
    )


def test_live_continuation_on_the_scripted_model_equals_a_fresh_run(
    sms: str, recorded: RunRecord, capsys: Capture
) -> None:
    knob = "policy.keep_failed_attempts=false"
    code, again = run_json(capsys, "replay", recorded.run_id, "--set", knob)
    _, fresh = run_json(capsys, "run", sms, "--set", knob)
    assert code == 0 and again.provider == "replay+scripted"
    assert [same(s) for s in again.steps] == [same(s) for s in fresh.steps]
    assert again.output == fresh.output and again.replay_of == recorded.run_id
    main(["replay", recorded.run_id, "--set", knob])
    assert (
        capsys.readouterr()
        .out.rstrip()
        .endswith(f"replay of {recorded.run_id}: steps 1-2 from the recording, steps 3-4 live")
    )


def test_bad_overrides_are_bad_input(sms: str, recorded: RunRecord, capsys: Capture) -> None:
    code = main(["replay", recorded.run_id, "--set", "policy.max_steps=zero"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"agent-inspector: error: {sms}: policy.max_steps: ")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_an_unknown_run(capsys: Capture) -> None:
    Store.open().close()  # the store is there: the run is what is unknown
    assert main(["replay", "0123abcd"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agent-inspector: error: no run '0123abcd' in ")
    assert err.count("\n") == 1


def test_replaying_a_run_with_raw_bodies_keeps_them(recorded: RunRecord, capsys: Capture) -> None:
    # A run recorded from a provider keeps its raw bodies; loaded, their wire messages are views
    # of one list (issue 18), and the replay's record carries and stores them as they were.
    history: list[dict[str, Any]] = []
    steps = []
    for step in recorded.steps:
        history = [m.model_dump(mode="json") for m in step.request.messages]
        body = {"model": "m", "messages": history, "stream": True}
        steps.append(step.model_copy(update={"raw": RawExchange(request=body, response={"n": 1})}))
    with_raw = recorded.model_copy(update={"run_id": "rawbodies0001", "steps": steps})
    with Store.open() as store:
        store.save(with_raw)
    code, again = run_json(capsys, "replay", "rawbodies0001", "--offline")
    assert code == 0 and [s.raw for s in again.steps] == [s.raw for s in with_raw.steps]
    with Store.open() as store:
        stored = store.load(again.run_id)
    assert stored.model_dump_json() == again.model_dump_json()
