"""The pending → final rule, redaction at capture, and a failing store never breaking a run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector.core.credentials import REDACTED, redact
from inspector.core.events import RunStarted, fan_out
from inspector.core.loop import run_turn
from inspector.core.policy import Policy
from inspector.core.records import RawExchange, Step, StepRequest
from inspector.providers.factory import build_provider
from inspector.resources import resolve_scenario
from inspector.store import Store, StoreError
from inspector.store.writer import RowWriter
from tests.store.conftest import fast
from tests.store.synthetic import every_shape, long_turn


def started(writer: RowWriter, run_id: str = "rule00000001") -> None:
    """A run row and its step 1 pending, as the recorder writes them at StepStarted."""
    header = RunStarted(
        run_id=run_id, scenario="s", started_at="t", policy=Policy(), provider="p", model="m"
    )
    with writer.transaction():
        writer.start_run(header, host="h", pid=1)
        writer.start_step(run_id, 1, 1, long_turn(1).steps[0].request, None)


def test_a_step_is_finalized_once_and_never_as_pending(store: Store, tmp_path: Path) -> None:
    writer = RowWriter(store._conn, tmp_path / "runs.sqlite3")
    started(writer)
    step = long_turn(1).steps[0]
    pending = pytest.raises(StoreError, match="step 1: a step cannot be finalized as pending")
    with pending, writer.transaction():
        writer.finalize_step("rule00000001", step.model_copy(update={"status": "pending"}))
    with writer.transaction():
        writer.finalize_step("rule00000001", step)
    with pytest.raises(StoreError, match="step 1 is already final"), writer.transaction():
        writer.finalize_step("rule00000001", step)
    with pytest.raises(StoreError, match="step 1 is already final"), writer.transaction():
        writer.interrupt_step("rule00000001", 1)


def test_finishing_a_run_settles_every_pending_row(store: Store, tmp_path: Path) -> None:
    writer = RowWriter(store._conn, tmp_path / "runs.sqlite3")
    started(writer, "long0000turn")
    with writer.transaction():
        writer.start_step("long0000turn", 2, 1, StepRequest(system="", messages=[]), None)
    record = long_turn(1)  # knows step 1 only: step 2's pending row is left over
    with writer.transaction():
        writer.finish_run(record)
    loaded = store.load("long0000turn")
    assert [s.status for s in loaded.steps] == ["success", "interrupted"]
    assert loaded.steps[0] == record.steps[0]


def test_keys_are_redacted_at_capture(store: Store, tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    record = every_shape()
    step = record.steps[0]
    assert step.raw is not None and isinstance(step.raw.request, dict)
    leaky_request = {
        **step.raw.request,
        "headers": {"Authorization": f"Bearer {secret}", "x-api-key": secret, "accept": "*/*"},
    }
    leaky: Step = step.model_copy(
        update={"raw": RawExchange(request=leaky_request, response={"api_key": secret})}
    )
    source = {"model": {"headers": {"Authorization": f"Bearer {secret}"}, "max_tokens": 5}}
    record = record.model_copy(
        update={"steps": [leaky, *record.steps[1:]], "scenario_source": source}
    )
    store.save(record)
    store.close()
    raw_bytes = b"".join(p.read_bytes() for p in tmp_path.glob("runs.sqlite3*"))
    assert secret.encode() not in raw_bytes
    with Store.open(tmp_path / "runs.sqlite3") as reopened:
        loaded = reopened.load(record.run_id)
    raw = loaded.steps[0].raw
    assert raw is not None
    assert raw.request["headers"] == {
        "Authorization": REDACTED,
        "x-api-key": REDACTED,
        "accept": "*/*",
    }
    assert raw.response == {"api_key": REDACTED}
    assert loaded.scenario_source["model"] == {
        "headers": {"Authorization": REDACTED},
        "max_tokens": 5,
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"max_tokens": 5, "token_count": 2}, {"max_tokens": 5, "token_count": 2}),
        (
            {"api_key": "k", "apiKey": "k", "client_secret": "s"},
            {"api_key": REDACTED, "apiKey": REDACTED, "client_secret": REDACTED},
        ),
        ({"h": ["Bearer abcdefgh12345", "Bearer bonds"]}, {"h": [REDACTED, "Bearer bonds"]}),
        ({"password": None, "secret": ""}, {"password": None, "secret": ""}),
    ],
)
def test_redaction_rule(value: object, expected: object) -> None:
    assert redact(value) == expected


def test_clean_values_are_not_copied() -> None:
    value = {"messages": [{"role": "user", "content": "hi"}], "model": "m"}
    assert redact(value) is value


def test_a_failing_store_does_not_break_the_run(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = fast(resolve_scenario("demo:retry-feedback"))
    recorder = store.recorder()
    store.close()  # every write now fails
    record = asyncio.run(run_turn(scenario, build_provider(scenario), fan_out(recorder)))
    assert record.status == "succeeded"
    assert recorder.error is not None
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"recording run {record.run_id} to " in err and "failed:" in err and "detached" in err


def test_the_scenario_is_stored_as_it_ran_apart_from_credential_headers(
    store: Store,
) -> None:
    """A user's tool with a ``password`` parameter is the run itself: redacting it would make
    replay and re-validation judge another scenario."""
    tool = {"name": "login", "parameters": {"properties": {"password": {"type": "string"}}}}
    source = {
        "model": {
            "headers": {"Authorization": "Bearer abcdefgh12345", "x-trace": "t", "X-Team": "a"},
            "safe_headers": ["X-Trace"],  # declared safe; X-Team is not, so it is a secret
        },
        "tools": [tool],
        "script": [{"tool_calls": [{"name": "login", "arguments": {"password": "hunter2"}}]}],
    }
    record = every_shape().model_copy(update={"scenario_source": source})
    store.save(record)
    loaded = store.load(record.run_id).scenario_source
    assert loaded["tools"] == [tool]
    assert loaded["script"] == source["script"]
    assert loaded["model"]["headers"] == {
        "Authorization": REDACTED,
        "x-trace": "t",
        "X-Team": REDACTED,
    }
