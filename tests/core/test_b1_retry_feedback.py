"""B1 through whole turns: validators → verdicts → feedback → retry, on the scripted model.

Each test asserts exactly what every step sent (the whole request message list), its verdicts,
feedback and cleared flag, and the turn's transcript, status and termination.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from inspector.core.events import (
    AttemptCleared,
    Event,
    FeedbackInjected,
    RunFinished,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolExecuted,
    VerdictsReady,
)
from inspector.core.history import DEFAULT_FEEDBACK
from inspector.core.loop import run_turn
from inspector.core.records import RunRecord, Step
from inspector.core.scenario import scenario_from_dict
from inspector.core.worker import pool
from inspector.providers.factory import build_provider

SYSTEM = "You write SMS messages."
USER = "Tell Sam the meeting moved to 3pm."
BOLD = "**Sam**, meeting at 3pm."
ITALIC = "_Sam_, meeting at 3pm."
PLAIN = "Sam, meeting at 3pm."
FB_BOLD = "No asterisks."
FB_ITALIC = "No underscores."
NO_BOLD = {"kind": "regex_absent", "name": "no_bold", "pattern": r"\*", "feedback": FB_BOLD}
NO_ITALIC = {"kind": "regex_absent", "name": "no_italic", "pattern": "_", "feedback": FB_ITALIC}
SCHEMA = {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}
LOOKUP = {
    "name": "lookup_contact",
    "description": "Find a contact",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
    "result": "Sam: +1 555 0100",
}


# ---- building and running a turn ---------------------------------------------------------------


def scenario(
    *script: str | dict[str, Any],
    validators: list[dict[str, Any]] | None = None,
    **policy: Any,
) -> dict[str, Any]:
    return {
        "name": "sms",
        "prompt": {"system": SYSTEM, "user": USER},
        "validators": [NO_BOLD, NO_ITALIC] if validators is None else validators,
        "policy": policy,
        "script": [{"text": s} if isinstance(s, str) else s for s in script],
    }


async def run(data: dict[str, Any], tmp_path: Path, **files: str) -> tuple[RunRecord, list[Event]]:
    """Runs one turn; ``files`` are python files (name without ``.py`` → source) in tmp_path."""
    for name, source in files.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    sc = scenario_from_dict(data, source="test.toml", base_dir=tmp_path)
    events: list[Event] = []
    record = await run_turn(sc, build_provider(sc), events.append)
    check_record(record, events)
    return record, events


def check_record(record: RunRecord, events: list[Event]) -> None:
    """What holds for every turn: no pending step, events agree with the record."""
    assert all(step.status != "pending" for step in record.steps)
    assert [s.index for s in record.steps] == list(range(1, len(record.steps) + 1))
    finished = [e.step for e in events if isinstance(e, StepFinished)]
    assert finished == record.steps
    assert all(step.status != "pending" for step in finished)
    assert [e.index for e in events if isinstance(e, StepStarted)] == [s.index for s in finished]
    for e in events:
        if isinstance(e, FeedbackInjected):
            assert e.messages == record.steps[e.index - 1].feedback
    cleared = [(e.index, e.attempt) for e in events if isinstance(e, AttemptCleared)]
    assert cleared == [(s.index, s.attempt) for s in record.steps if s.cleared]
    last = events[-1]
    assert isinstance(last, RunFinished)
    assert last.record == record
    assert RunRecord.model_validate(record.model_dump(mode="json")) == record  # JSON contract
    assert record.budgets.steps_used == len(record.steps)


# ---- expected values in the JSON shape ---------------------------------------------------------


def u(content: str) -> dict[str, Any]:
    return {"role": "user", "content": content}


def a(content: str | None) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def sysmsg(content: str) -> dict[str, Any]:
    return {"role": "system", "content": content}


def call(id_: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    calls = [{"id": id_, "name": name, "arguments": arguments}]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def result(id_: str, content: str, name: str) -> dict[str, Any]:
    return {"role": "tool", "content": content, "tool_call_id": id_, "name": name}


def passed(name: str) -> dict[str, Any]:
    return {"validator": name, "ok": True, "status": "pass", "reason": "", "feedback": None}


def failed(name: str, reason: str, feedback: str) -> dict[str, Any]:
    return {
        "validator": name,
        "ok": False,
        "status": "fail",
        "reason": reason,
        "feedback": feedback,
    }


def errored(name: str, reason: str, at: Path | None = None) -> dict[str, Any]:
    """``at``: the python file it raised in (the line is where ``flaky`` raises)."""
    verdict = {
        "validator": name,
        "ok": False,
        "status": "error",
        "reason": reason,
        "feedback": None,
    }
    if at is not None:
        verdict["location"] = {"file": str(at.resolve()), "line": FLAKY_RAISES}
    return verdict


BOLD_VERDICTS = [failed("no_bold", "found '*' at 0", FB_BOLD), passed("no_italic")]
ITALIC_VERDICTS = [passed("no_bold"), failed("no_italic", "found '_' at 0", FB_ITALIC)]
PLAIN_VERDICTS = [passed("no_bold"), passed("no_italic")]
LOOKUP_CALL = call("call_1_0", "lookup_contact", {"name": "Sam"})
LOOKUP_RESULT = result("call_1_0", "Sam: +1 555 0100", "lookup_contact")


def sent(step: Step | StepStarted) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in step.request.messages]


def dumped(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json") for item in items]


def summary(step: Step) -> dict[str, Any]:
    """The B1 part of a step, as plain data."""
    return {
        "index": step.index,
        "attempt": step.attempt,
        "status": step.status,
        "messages": sent(step),
        "verdicts": dumped(step.verdicts),
        "feedback": dumped(step.feedback),
        "cleared": step.cleared,
    }


def transcript(record: RunRecord) -> list[dict[str, Any]]:
    return dumped(record.transcript)


def outcome(record: RunRecord) -> tuple[Any, ...]:
    error = record.error.model_dump() if record.error else None
    return record.status, record.termination, record.output, error


# ---- feedback_history ------------------------------------------------------------------------


async def test_accumulate_every_attempt_sees_all_earlier_failures_and_feedback(
    tmp_path: Path,
) -> None:
    record, _ = await run(scenario(BOLD, ITALIC, PLAIN, feedback_history="accumulate"), tmp_path)

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": BOLD_VERDICTS,
            "feedback": [u(FB_BOLD)],
            "cleared": True,
        },
        {
            "index": 2,
            "attempt": 2,
            "status": "failed_validation",
            "messages": [u(USER), a(BOLD), u(FB_BOLD)],
            "verdicts": ITALIC_VERDICTS,
            "feedback": [u(FB_ITALIC)],
            "cleared": True,
        },
        {
            "index": 3,
            "attempt": 3,
            "status": "success",
            "messages": [u(USER), a(BOLD), u(FB_BOLD), a(ITALIC), u(FB_ITALIC)],
            "verdicts": PLAIN_VERDICTS,
            "feedback": [],
            "cleared": False,
        },
    ]
    for step in record.steps:
        assert (step.request.system, step.request.tools, step.request.tool_choice) == (
            SYSTEM,
            [],
            None,
        )
    assert transcript(record) == [u(USER), a(PLAIN)]
    assert record.budgets.model_dump() == {
        "attempts_used": 3,
        "max_attempts": 3,
        "steps_used": 3,
        "max_steps": 20,
        "transport_retries": 0,
    }


async def test_latest_keeps_only_the_most_recent_failure_and_all_tool_work(
    tmp_path: Path,
) -> None:
    data = scenario(
        {"tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}}]},
        BOLD,
        ITALIC,
        PLAIN,
        feedback_history="latest",
    )
    data["tools"] = [LOOKUP]
    record, _ = await run(data, tmp_path)

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    work = [u(USER), LOOKUP_CALL, LOOKUP_RESULT]
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "success",
            "messages": [u(USER)],
            "verdicts": [],
            "feedback": [],
            "cleared": False,
        },
        {
            "index": 2,
            "attempt": 1,
            "status": "failed_validation",
            "messages": work,
            "verdicts": BOLD_VERDICTS,
            "feedback": [u(FB_BOLD)],
            "cleared": True,
        },
        {
            "index": 3,
            "attempt": 2,
            "status": "failed_validation",
            "messages": [*work, a(BOLD), u(FB_BOLD)],
            "verdicts": ITALIC_VERDICTS,
            "feedback": [u(FB_ITALIC)],
            "cleared": True,
        },
        {
            "index": 4,
            "attempt": 3,
            "status": "success",
            "messages": [*work, a(ITALIC), u(FB_ITALIC)],  # attempt 1 and its feedback are gone
            "verdicts": PLAIN_VERDICTS,
            "feedback": [],
            "cleared": False,
        },
    ]
    assert dumped(record.steps[0].tool_results) == [
        {
            "tool_call_id": "call_1_0",
            "name": "lookup_contact",
            "content": "Sam: +1 555 0100",
            "error": None,
            "replayed": False,
        }
    ]
    assert {s.request.tool_choice for s in record.steps} == {"auto"}
    assert transcript(record) == [*work, a(PLAIN)]


@pytest.mark.parametrize("keep", [True, False])
async def test_none_is_a_blind_retry(tmp_path: Path, keep: bool) -> None:
    data = scenario(BOLD, ITALIC, PLAIN, feedback_history="none", keep_failed_attempts=keep)
    record, events = await run(data, tmp_path)

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    # The same request every time: failed candidates are never shown under "none", kept or not.
    assert [sent(s) for s in record.steps] == [[u(USER)], [u(USER)], [u(USER)]]
    assert [s.feedback for s in record.steps] == [[], [], []]
    assert [dumped(s.verdicts) for s in record.steps] == [
        BOLD_VERDICTS,
        ITALIC_VERDICTS,
        PLAIN_VERDICTS,
    ]
    injected = [(e.index, e.messages) for e in events if isinstance(e, FeedbackInjected)]
    assert injected == [(1, []), (2, [])]  # the retry is marked, with nothing injected
    assert transcript(record) == [u(USER), a(PLAIN)]


async def test_none_keeps_the_work_and_nothing_of_the_failed_attempts(tmp_path: Path) -> None:
    data = scenario(
        {"tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}}]},
        BOLD,
        PLAIN,
        feedback_history="none",
        feedback_role="tool",
    )
    data["tools"] = [LOOKUP]
    record, _ = await run(data, tmp_path)

    work = [u(USER), LOOKUP_CALL, LOOKUP_RESULT]
    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "success",
            "messages": [u(USER)],
            "verdicts": [],
            "feedback": [],
            "cleared": False,
        },
        {
            "index": 2,
            "attempt": 1,
            "status": "failed_validation",
            "messages": work,
            "verdicts": BOLD_VERDICTS,
            "feedback": [],
            "cleared": True,
        },
        {
            "index": 3,
            "attempt": 2,
            "status": "success",
            "messages": work,  # the opening request plus the work, exactly
            "verdicts": PLAIN_VERDICTS,
            "feedback": [],
            "cleared": False,
        },
    ]
    assert transcript(record) == [*work, a(PLAIN)]


BUILDER = """
    import json
    from pathlib import Path

    LOG = Path(__file__).with_name("builder_calls.jsonl")


    def {name}(ctx):
        with LOG.open("a", encoding="utf-8") as f:
            f.write(json.dumps(vars(ctx)) + "\\n")
        opening = {opening}
        note = f"Attempt {{ctx.attempt}} was rejected: {{ctx.feedback}}"
        return [*opening, {{"role": "user", "content": note}}]
"""


def builder_calls(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "builder_calls.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


async def test_custom_builder_owns_the_next_history(tmp_path: Path) -> None:
    data = scenario(
        BOLD,
        ITALIC,
        PLAIN,
        feedback_history="custom",
        feedback_builder="hooks.py:opening_plus_latest",
    )
    record, events = await run(
        data,
        tmp_path,
        hooks=BUILDER.format(name="opening_plus_latest", opening="ctx.history[:1]"),
    )

    note1 = u(f"Attempt 1 was rejected: {FB_BOLD}")
    note2 = u(f"Attempt 2 was rejected: {FB_ITALIC}")
    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": BOLD_VERDICTS,
            "feedback": [note1],
            "cleared": True,
        },
        {
            "index": 2,
            "attempt": 2,
            "status": "failed_validation",
            "messages": [u(USER), note1],
            "verdicts": ITALIC_VERDICTS,
            "feedback": [note2],
            "cleared": True,
        },
        {
            "index": 3,
            "attempt": 3,
            "status": "success",
            "messages": [u(USER), note2],
            "verdicts": PLAIN_VERDICTS,
            "feedback": [],
            "cleared": False,
        },
    ]
    assert transcript(record) == [u(USER), a(PLAIN)]
    assert [e.messages for e in events if isinstance(e, FeedbackInjected)] == [
        record.steps[0].feedback,
        record.steps[1].feedback,
    ]
    first, second = builder_calls(tmp_path)
    assert first == {
        "attempt": 1,
        "step": 1,
        "history": [u(USER)],
        "candidate": a(BOLD),
        "verdicts": BOLD_VERDICTS,
        "feedback": FB_BOLD,
        "default_next": [u(USER), a(BOLD), u(FB_BOLD)],
        "prefix": [u(USER)],
    }
    assert second == {
        "attempt": 2,
        "step": 2,
        "history": [u(USER), note1],
        "candidate": a(ITALIC),
        "verdicts": ITALIC_VERDICTS,
        "feedback": FB_ITALIC,
        "default_next": [u(USER), note1, a(ITALIC), u(FB_ITALIC)],
        "prefix": [u(USER)],  # the turn's opening messages, not the previous built history
    }


async def test_custom_builder_prefix_stays_the_opening_messages(tmp_path: Path) -> None:
    data = scenario(
        BOLD,
        ITALIC,
        PLAIN,
        feedback_history="custom",
        feedback_builder="hooks.py:prefix_plus_latest",
    )
    record, _ = await run(
        data, tmp_path, hooks=BUILDER.format(name="prefix_plus_latest", opening="ctx.prefix")
    )

    note1 = u(f"Attempt 1 was rejected: {FB_BOLD}")
    note2 = u(f"Attempt 2 was rejected: {FB_ITALIC}")
    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [c["prefix"] for c in builder_calls(tmp_path)] == [[u(USER)], [u(USER)]]
    assert [sent(s) for s in record.steps] == [
        [u(USER)],
        [u(USER), note1],
        [u(USER), note2],  # not [USER, note1, note2]: prefix is not the last built history
    ]


async def test_a_builder_that_exits_ends_the_run_and_keeps_the_failed_attempt(
    tmp_path: Path,
) -> None:
    hooks = """
        import sys


        def leave(ctx):
            sys.exit(3)
    """
    data = scenario(BOLD, PLAIN, feedback_history="custom", feedback_builder="hooks.py:leave")
    record, events = await run(data, tmp_path, hooks=hooks)

    error = {"type": "FeedbackBuilderError", "message": "feedback_builder raised SystemExit: 3"}
    assert outcome(record) == ("error", "validator_exhausted", None, error)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": BOLD_VERDICTS,
            "feedback": [],
            "cleared": False,  # no retry came: the turn ended on it
        }
    ]
    assert not any(isinstance(e, (FeedbackInjected, AttemptCleared)) for e in events)
    assert transcript(record) == [u(USER), a(BOLD)]


# ---- feedback_role -------------------------------------------------------------------------


def validation_feedback(attempt: int, text: str) -> list[dict[str, Any]]:
    id_ = f"feedback_{attempt}"
    return [call(id_, "validation_feedback", {}), result(id_, text, "validation_feedback")]


def with_feedback_call(
    text: str, attempt: int, name: str = "validation_feedback"
) -> dict[str, Any]:
    """A kept text candidate under tool-role feedback: its text and the synthetic call, one
    assistant message."""
    calls = [{"id": f"feedback_{attempt}", "name": name, "arguments": {}}]
    return {"role": "assistant", "content": text, "tool_calls": calls}


@pytest.mark.parametrize(
    ("keep", "seen1", "feedback1", "seen2", "feedback2"),
    [
        # the candidate and the feedback call are one assistant message, then the result
        (
            True,
            [with_feedback_call(BOLD, 1)],
            [result("feedback_1", FB_BOLD, "validation_feedback")],
            [with_feedback_call(ITALIC, 2)],
            [result("feedback_2", FB_ITALIC, "validation_feedback")],
        ),
        # the candidate is not shown: the synthetic call + result pair stands alone
        (
            False,
            [],
            validation_feedback(1, FB_BOLD),
            [],
            validation_feedback(2, FB_ITALIC),
        ),
    ],
)
async def test_tool_role_in_text_mode(
    tmp_path: Path,
    keep: bool,
    seen1: list[Any],
    feedback1: list[Any],
    seen2: list[Any],
    feedback2: list[Any],
) -> None:
    data = scenario(
        BOLD,
        ITALIC,
        PLAIN,
        feedback_role="tool",
        keep_failed_attempts=keep,
        clear_failed_attempts=False,
    )
    record, _ = await run(data, tmp_path)

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [(sent(s), dumped(s.feedback), s.cleared) for s in record.steps] == [
        ([u(USER)], feedback1, False),
        ([u(USER), *seen1, *feedback1], feedback2, False),
        ([u(USER), *seen1, *feedback1, *seen2, *feedback2], [], False),
    ]
    # the failed attempts stay in the transcript; tool-role feedback is not shown to the user
    assert transcript(record) == [u(USER), a(BOLD), a(ITALIC), a(PLAIN)]


async def test_tool_role_feedback_tool_is_renamed_when_a_user_tool_has_its_name(
    tmp_path: Path,
) -> None:
    data = scenario(BOLD, PLAIN, feedback_role="tool")
    data["tools"] = [{"name": "validation_feedback", "result": "user tool"}]
    record, events = await run(data, tmp_path)

    feedback = [result("feedback_1", FB_BOLD, "validation_feedback_1")]
    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [(sent(s), dumped(s.feedback)) for s in record.steps] == [
        ([u(USER)], feedback),
        ([u(USER), with_feedback_call(BOLD, 1, "validation_feedback_1"), *feedback], []),
    ]
    assert not any(isinstance(e, ToolExecuted) for e in events)  # the user tool never ran
    assert transcript(record) == [u(USER), a(PLAIN)]


def structured(*script: dict[str, Any], **policy: Any) -> dict[str, Any]:
    data = scenario(
        *script,
        validators=[{**NO_BOLD, "field": "body"}, {**NO_ITALIC, "field": "body"}],
        **policy,
    )
    data["output"] = {"schema": SCHEMA}
    return data


def final_answer(n: int, body: str) -> dict[str, Any]:
    return call(f"call_{n}_0", "final_answer", {"body": body})


@pytest.mark.parametrize(
    ("role", "keep", "feedback1", "feedback2"),
    [
        # the feedback *is* the result of the rejected final_answer call
        (
            "tool",
            True,
            [result("call_1_0", FB_BOLD, "final_answer")],
            [result("call_2_0", FB_ITALIC, "final_answer")],
        ),
        # the call is not shown again, so a synthetic pair carries the feedback
        ("tool", False, validation_feedback(1, FB_BOLD), validation_feedback(2, FB_ITALIC)),
        # a user message; the rejected call still gets a result
        ("user", True, [u(FB_BOLD)], [u(FB_ITALIC)]),
    ],
)
async def test_feedback_in_tool_output_mode(
    tmp_path: Path,
    role: str,
    keep: bool,
    feedback1: list[dict[str, Any]],
    feedback2: list[dict[str, Any]],
) -> None:
    data = structured(
        {"final": {"body": BOLD}},
        {"final": {"body": ITALIC}},
        {"final": {"body": PLAIN}},
        feedback_role=role,
        keep_failed_attempts=keep,
    )
    record, _ = await run(data, tmp_path)

    rejected = "Rejected by validation."
    if keep and role == "tool":
        seen1 = [final_answer(1, BOLD)]
        seen2 = [final_answer(2, ITALIC)]
    elif keep:
        seen1 = [final_answer(1, BOLD), result("call_1_0", rejected, "final_answer")]
        seen2 = [final_answer(2, ITALIC), result("call_2_0", rejected, "final_answer")]
    else:
        seen1 = seen2 = []
    assert outcome(record) == ("succeeded", "stop", {"body": PLAIN}, None)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": BOLD_VERDICTS,
            "feedback": feedback1,
            "cleared": True,
        },
        {
            "index": 2,
            "attempt": 2,
            "status": "failed_validation",
            "messages": [u(USER), *seen1, *feedback1],
            "verdicts": ITALIC_VERDICTS,
            "feedback": feedback2,
            "cleared": True,
        },
        {
            "index": 3,
            "attempt": 3,
            "status": "success",
            "messages": [u(USER), *seen1, *feedback1, *seen2, *feedback2],
            "verdicts": PLAIN_VERDICTS,
            "feedback": [],
            "cleared": False,
        },
    ]
    pinned = {"type": "function", "name": "final_answer"}
    for step in record.steps:
        assert step.request.tool_choice == pinned
        assert [t.name for t in step.request.tools] == ["final_answer"]
        assert step.internal_tool is True
    # the final_answer call/result never reach the transcript
    assert transcript(record) == [u(USER), a('{"body": "Sam, meeting at 3pm."}')]


async def test_a_rejected_final_answer_with_a_user_call_beside_it(tmp_path: Path) -> None:
    lookup = {"name": "lookup_contact", "arguments": {"name": "Sam"}}
    data = structured(
        {"tool_calls": [lookup], "final": {"body": BOLD}},
        {"final": {"body": PLAIN}},
    )
    data["tools"] = [LOOKUP]
    record, events = await run(data, tmp_path)

    both = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1_0", "name": "lookup_contact", "arguments": {"name": "Sam"}},
            {"id": "call_1_1", "name": "final_answer", "arguments": {"body": BOLD}},
        ],
    }
    not_run = "Not executed: the final answer in the same reply was rejected."
    assert outcome(record) == ("succeeded", "stop", {"body": PLAIN}, None)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": BOLD_VERDICTS,
            "feedback": [u(FB_BOLD)],
            "cleared": True,
        },
        {
            "index": 2,
            "attempt": 2,
            "status": "success",
            "messages": [
                u(USER),
                both,
                result("call_1_0", not_run, "lookup_contact"),
                result("call_1_1", "Rejected by validation.", "final_answer"),
                u(FB_BOLD),
            ],
            "verdicts": PLAIN_VERDICTS,
            "feedback": [],
            "cleared": False,
        },
    ]
    assert [dumped(s.tool_results) for s in record.steps] == [
        [
            {
                "tool_call_id": "call_1_0",
                "name": "lookup_contact",
                "content": "",
                "error": "not executed: the final answer was given in the same reply",
                "replayed": False,
            }
        ],
        [],
    ]
    assert not any(isinstance(e, ToolExecuted) for e in events)
    assert transcript(record) == [u(USER), a('{"body": "Sam, meeting at 3pm."}')]


async def test_system_role_feedback(tmp_path: Path) -> None:
    data = scenario(BOLD, ITALIC, PLAIN, feedback_role="system", clear_failed_attempts=False)
    record, _ = await run(data, tmp_path)

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [(sent(s), dumped(s.feedback)) for s in record.steps] == [
        ([u(USER)], [sysmsg(FB_BOLD)]),
        ([u(USER), a(BOLD), sysmsg(FB_BOLD)], [sysmsg(FB_ITALIC)]),
        ([u(USER), a(BOLD), sysmsg(FB_BOLD), a(ITALIC), sysmsg(FB_ITALIC)], []),
    ]
    assert {s.request.system for s in record.steps} == {SYSTEM}  # the system prompt is untouched
    assert transcript(record) == [
        u(USER),
        a(BOLD),
        sysmsg(FB_BOLD),
        a(ITALIC),
        sysmsg(FB_ITALIC),
        a(PLAIN),
    ]


# ---- keep_failed_attempts / clear_failed_attempts -----------------------------------------------


@pytest.mark.parametrize(
    ("keep", "third"),
    [
        (True, [u(USER), a(BOLD), u(FB_BOLD), a(ITALIC), u(FB_ITALIC)]),
        (False, [u(USER), u(FB_BOLD), u(FB_ITALIC)]),
    ],
)
async def test_keep_failed_attempts(tmp_path: Path, keep: bool, third: list[Any]) -> None:
    data = scenario(BOLD, ITALIC, PLAIN, keep_failed_attempts=keep)
    record, _ = await run(data, tmp_path)

    second = [u(USER), a(BOLD), u(FB_BOLD)] if keep else [u(USER), u(FB_BOLD)]
    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [sent(s) for s in record.steps] == [[u(USER)], second, third]
    assert [dumped(s.feedback) for s in record.steps] == [[u(FB_BOLD)], [u(FB_ITALIC)], []]
    assert transcript(record) == [u(USER), a(PLAIN)]  # what the end user sees is unaffected


@pytest.mark.parametrize(
    ("clear", "expected_transcript", "expected_cleared"),
    [
        (True, [u(USER), a(PLAIN)], [(1, 1), (2, 2)]),
        (False, [u(USER), a(BOLD), u(FB_BOLD), a(ITALIC), u(FB_ITALIC), a(PLAIN)], []),
    ],
)
async def test_clear_failed_attempts(
    tmp_path: Path,
    clear: bool,
    expected_transcript: list[Any],
    expected_cleared: list[tuple[int, int]],
) -> None:
    record, events = await run(scenario(BOLD, ITALIC, PLAIN, clear_failed_attempts=clear), tmp_path)

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert transcript(record) == expected_transcript
    assert [s.cleared for s in record.steps] == [clear, clear, False]
    cleared = [(e.index, e.attempt) for e in events if isinstance(e, AttemptCleared)]
    assert cleared == expected_cleared
    # what the model saw does not depend on what the end user sees
    assert sent(record.steps[2]) == [u(USER), a(BOLD), u(FB_BOLD), a(ITALIC), u(FB_ITALIC)]


# ---- max_attempts ------------------------------------------------------------------------------


async def test_max_attempts_1_means_no_retry(tmp_path: Path) -> None:
    record, events = await run(scenario(BOLD, PLAIN, max_attempts=1), tmp_path)

    assert outcome(record) == (
        "failed",
        "validator_exhausted",
        None,
        {
            "type": "ValidatorExhausted",
            "message": "no acceptable output after 1 attempt: no_bold: found '*' at 0",
        },
    )
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": BOLD_VERDICTS,
            "feedback": [],
            "cleared": False,  # nothing replaces it: the turn ends on it
        }
    ]
    assert not any(isinstance(e, (FeedbackInjected, AttemptCleared)) for e in events)
    assert transcript(record) == [u(USER), a(BOLD)]  # what the end user saw last
    assert (record.budgets.attempts_used, record.budgets.max_attempts) == (1, 1)


async def test_exhausted_after_three_attempts(tmp_path: Path) -> None:
    record, _ = await run(scenario(BOLD, ITALIC, BOLD, PLAIN), tmp_path)

    assert outcome(record) == (
        "failed",
        "validator_exhausted",
        None,
        {
            "type": "ValidatorExhausted",
            "message": "no acceptable output after 3 attempts: no_bold: found '*' at 0",
        },
    )
    # Attempts 1 and 2 were replaced by a retry; the turn ended on attempt 3.
    assert [(s.attempt, s.status, s.cleared) for s in record.steps] == [
        (1, "failed_validation", True),
        (2, "failed_validation", True),
        (3, "failed_validation", False),
    ]
    assert [dumped(s.verdicts) for s in record.steps] == [
        BOLD_VERDICTS,
        ITALIC_VERDICTS,
        BOLD_VERDICTS,
    ]
    assert [dumped(s.feedback) for s in record.steps] == [[u(FB_BOLD)], [u(FB_ITALIC)], []]
    assert sent(record.steps[2]) == [u(USER), a(BOLD), u(FB_BOLD), a(ITALIC), u(FB_ITALIC)]
    assert transcript(record) == [u(USER), a(BOLD)]
    assert record.budgets.attempts_used == 3


# ---- ctx.stop() ----------------------------------------------------------------------------------

STOPPERS = """
    def stop_on_bold(output, ctx):
        if "*" in output:
            ctx.stop()
            return "Bold is not allowed; giving up."


    def accept_and_stop(output, ctx):
        ctx.stop()
"""


async def test_stop_on_a_rejected_final_candidate_ends_without_retry(tmp_path: Path) -> None:
    validators = [{"kind": "python", "function": "checks.py:stop_on_bold"}, NO_ITALIC]
    data = scenario(BOLD, PLAIN, validators=validators)
    record, events = await run(data, tmp_path, checks=STOPPERS)

    reason = "Bold is not allowed; giving up."
    assert outcome(record) == (
        "failed",
        "validator_stop",
        None,
        {"type": "ValidatorStop", "message": f"stop_on_bold: {reason}"},
    )
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": [failed("stop_on_bold", reason, reason), passed("no_italic")],
            "feedback": [],
            "cleared": False,  # the turn ends on it: it stays
        }
    ]
    assert not any(isinstance(e, (FeedbackInjected, AttemptCleared)) for e in events)
    assert transcript(record) == [u(USER), a(BOLD)]


async def test_stop_on_an_accepted_candidate_succeeds_with_validator_stop(
    tmp_path: Path,
) -> None:
    validators = [{"kind": "python", "function": "checks.py:accept_and_stop"}]
    record, _ = await run(scenario(PLAIN, validators=validators), tmp_path, checks=STOPPERS)

    assert outcome(record) == ("succeeded", "validator_stop", PLAIN, None)
    assert [(s.status, dumped(s.verdicts)) for s in record.steps] == [
        ("success", [passed("accept_and_stop")])
    ]
    assert transcript(record) == [u(USER), a(PLAIN)]


GUARD = """
    from pathlib import Path


    def no_sms(output, ctx):
        names = [c["name"] for c in ctx.pending_tool_calls]
        if "send_sms" in names:
            ctx.stop()
            return f"send_sms blocked at step {ctx.step}"


    def send_sms(to, body):
        Path(__file__).with_name("sms_sent").write_text(body)
        return "sent"
"""


async def test_every_step_validator_stops_before_a_pending_tool_runs(tmp_path: Path) -> None:
    sms = {
        "name": "send_sms",
        "parameters": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
        },
        "function": "guard.py:send_sms",
    }
    validators = [{"kind": "python", "function": "guard.py:no_sms", "when": "every_step"}]
    data = scenario(
        {"tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}}]},
        {"tool_calls": [{"name": "send_sms", "arguments": {"to": "+1 555 0100", "body": "3pm"}}]},
        PLAIN,
        validators=validators,
    )
    data["tools"] = [LOOKUP, sms]
    record, events = await run(data, tmp_path, guard=GUARD)

    assert outcome(record) == (
        "failed",
        "validator_stop",
        None,
        {"type": "ValidatorStop", "message": "no_sms: send_sms blocked at step 2"},
    )
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "success",
            "messages": [u(USER)],
            "verdicts": [passed("no_sms")],
            "feedback": [],
            "cleared": False,
        },
        {
            "index": 2,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER), LOOKUP_CALL, LOOKUP_RESULT],
            "verdicts": [
                failed("no_sms", "send_sms blocked at step 2", "send_sms blocked at step 2")
            ],
            "feedback": [],
            "cleared": False,
        },
    ]
    assert [dumped(s.tool_results) for s in record.steps] == [
        [
            {
                "tool_call_id": "call_1_0",
                "name": "lookup_contact",
                "content": "Sam: +1 555 0100",
                "error": None,
                "replayed": False,
            }
        ],
        [
            {
                "tool_call_id": "call_2_0",
                "name": "send_sms",
                "content": "",
                "error": "not executed: stopped by a validator",
                "replayed": False,
            }
        ],
    ]
    assert [e.index for e in events if isinstance(e, ToolExecuted)] == [1]  # no event for it
    assert not (tmp_path / "sms_sent").exists()  # the pending send_sms never ran
    assert transcript(record) == [u(USER), LOOKUP_CALL, LOOKUP_RESULT]
    assert record.budgets.steps_used == 2  # the third script entry was never asked for


# ---- what a python validator returns -----------------------------------------------------------

CHECKS = """
    import asyncio
    import time

    from inspector.core.records import Verdict


    def short(output, ctx):
        if len(output) > 20:
            return (
                f"Too long ({len(output)} chars) on attempt {ctx.attempt}, "
                f"step {ctx.step}, after {len(ctx.history)} messages."
            )


    def is_short(output, ctx):
        return len(output) <= 20


    def plain(output, ctx):
        return "*" not in output


    def flaky(output, ctx):
        if ctx.attempt == 1:
            raise ValueError("could not parse\\nbad token at 3")


    async def slow(output, ctx):
        if ctx.attempt == 1:
            await asyncio.sleep(8)


    def slow_sync(output, ctx):
        if ctx.attempt == 1:
            time.sleep(8)


    def verdict(output, ctx):
        if ctx.attempt == 1:
            return Verdict.failed("", "too formal", "Be casual.")


    def odd(output, ctx):
        return 42 if ctx.attempt == 1 else None
"""
FLAKY_RAISES = 1 + next(  # the line where flaky raises
    i for i, line in enumerate(textwrap.dedent(CHECKS).splitlines()) if "bad token at 3" in line
)
LONG = "**Sam**, the meeting moved to 3pm today."  # 40 characters
SHORT = "Sam: 3pm."


def python(function: str, **options: Any) -> dict[str, Any]:
    return {"kind": "python", "function": f"checks.py:{function}", **options}


async def test_a_returned_str_is_the_feedback(tmp_path: Path) -> None:
    data = scenario(LONG, "Sam, the meeting is now at 3pm.", SHORT, validators=[python("short")])
    record, _ = await run(data, tmp_path, checks=CHECKS)

    fb1 = "Too long (40 chars) on attempt 1, step 1, after 1 messages."
    fb2 = "Too long (31 chars) on attempt 2, step 2, after 3 messages."
    assert outcome(record) == ("succeeded", "stop", SHORT, None)
    assert [(sent(s), dumped(s.verdicts), dumped(s.feedback)) for s in record.steps] == [
        ([u(USER)], [failed("short", fb1, fb1)], [u(fb1)]),
        (
            [u(USER), a(LONG), u(fb1)],
            [failed("short", fb2, fb2)],
            [u(fb2)],
        ),
        (
            [u(USER), a(LONG), u(fb1), a("Sam, the meeting is now at 3pm."), u(fb2)],
            [passed("short")],
            [],
        ),
    ]


async def test_a_returned_false_uses_the_validators_feedback(tmp_path: Path) -> None:
    validators = [python("is_short", feedback="Shorter please."), python("plain")]
    record, _ = await run(scenario(LONG, SHORT, validators=validators), tmp_path, checks=CHECKS)

    default = "The answer failed the check plain."
    assert outcome(record) == ("succeeded", "stop", SHORT, None)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": [
                failed("is_short", "returned False", "Shorter please."),
                failed("plain", "returned False", default),
            ],
            "feedback": [u(f"Shorter please.\n{default}")],
            "cleared": True,
        },
        {
            "index": 2,
            "attempt": 2,
            "status": "success",
            "messages": [u(USER), a(LONG), u(f"Shorter please.\n{default}")],
            "verdicts": [passed("is_short"), passed("plain")],
            "feedback": [],
            "cleared": False,
        },
    ]


async def test_a_raising_validator_is_an_error_verdict_without_feedback(
    tmp_path: Path,
) -> None:
    record, _ = await run(
        scenario(BOLD, PLAIN, validators=[python("flaky"), NO_BOLD]), tmp_path, checks=CHECKS
    )

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [summary(s) for s in record.steps] == [
        {
            "index": 1,
            "attempt": 1,
            "status": "failed_validation",
            "messages": [u(USER)],
            "verdicts": [
                errored("flaky", "ValueError: bad token at 3", tmp_path / "checks.py"),
                failed("no_bold", "found '*' at 0", FB_BOLD),
            ],
            "feedback": [u(FB_BOLD)],  # nothing from the broken validator
            "cleared": True,
        },
        {
            "index": 2,
            "attempt": 2,
            "status": "success",
            "messages": [u(USER), a(BOLD), u(FB_BOLD)],
            "verdicts": [passed("flaky"), passed("no_bold")],
            "feedback": [],
            "cleared": False,
        },
    ]


async def test_only_an_error_verdict_ends_the_turn_by_default(tmp_path: Path) -> None:
    # on_validator_error = "fail": a broken validator is an error of the turn, not of the model.
    record, _ = await run(
        scenario(PLAIN, SHORT, validators=[python("flaky")]), tmp_path, checks=CHECKS
    )

    message = "validator flaky broke: ValueError: bad token at 3"
    assert outcome(record) == (
        "error",
        "validator_error",
        None,
        {"type": "ValidatorError", "message": message},
    )
    assert [(s.status, dumped(s.verdicts), dumped(s.feedback)) for s in record.steps] == [
        (
            "validator_error",
            [errored("flaky", "ValueError: bad token at 3", tmp_path / "checks.py")],
            [],
        )
    ]
    assert record.budgets.attempts_used == 1


async def test_only_an_error_verdict_retries_without_feedback(tmp_path: Path) -> None:
    data = scenario(PLAIN, SHORT, validators=[python("flaky")], on_validator_error="retry")
    record, events = await run(data, tmp_path, checks=CHECKS)

    assert outcome(record) == ("succeeded", "stop", SHORT, None)
    assert [(s.status, dumped(s.verdicts), dumped(s.feedback)) for s in record.steps] == [
        (
            "validator_error",
            [errored("flaky", "ValueError: bad token at 3", tmp_path / "checks.py")],
            [],
        ),
        ("success", [passed("flaky")], []),
    ]
    # Nothing blames the model: the retry sees exactly the first attempt's history.
    assert sent(record.steps[1]) == [u(USER)]
    assert DEFAULT_FEEDBACK not in str([e.model_dump() for e in events])


async def test_a_retried_validator_error_on_the_last_attempt_ends_the_turn(
    tmp_path: Path,
) -> None:
    data = scenario(
        PLAIN, SHORT, validators=[python("flaky")], on_validator_error="retry", max_attempts=1
    )
    record, _ = await run(data, tmp_path, checks=CHECKS)

    assert (record.status, record.termination) == ("error", "validator_error")
    assert [s.status for s in record.steps] == ["validator_error"]


async def test_an_ignored_validator_error_does_not_block_the_answer(tmp_path: Path) -> None:
    data = scenario(PLAIN, SHORT, validators=[python("flaky")], on_validator_error="ignore")
    record, _ = await run(data, tmp_path, checks=CHECKS)

    assert outcome(record) == ("succeeded", "stop", PLAIN, None)
    assert [(s.status, dumped(s.verdicts)) for s in record.steps] == [
        ("success", [errored("flaky", "ValueError: bad token at 3", tmp_path / "checks.py")])
    ]


async def test_a_returned_verdict_is_used_and_anything_else_is_an_error(tmp_path: Path) -> None:
    validators = [python("verdict"), python("odd")]
    record, _ = await run(scenario(PLAIN, SHORT, validators=validators), tmp_path, checks=CHECKS)

    odd = "returned int; expected None, bool, str or Verdict"
    assert outcome(record) == ("succeeded", "stop", SHORT, None)
    assert [(dumped(s.verdicts), dumped(s.feedback)) for s in record.steps] == [
        (
            [failed("verdict", "too formal", "Be casual."), errored("odd", odd)],
            [u("Be casual.")],
        ),
        ([passed("verdict"), passed("odd")], []),
    ]


@pytest.mark.parametrize(("function", "timeout"), [("slow", 0.2), ("slow_sync", 0.1)])
async def test_a_validator_past_its_time_limit_is_an_error_verdict(
    tmp_path: Path, function: str, timeout: float
) -> None:
    data = scenario(
        PLAIN,
        SHORT,
        validators=[python(function)],
        validator_timeout_s=timeout,
        on_validator_error="retry",
    )
    record, _ = await run(data, tmp_path, checks=CHECKS)

    assert outcome(record) == ("succeeded", "stop", SHORT, None)
    assert [(s.status, dumped(s.verdicts), dumped(s.feedback)) for s in record.steps] == [
        (
            "validator_error",
            [errored(function, f"timed out after {timeout:g} s")],
            [],
        ),
        ("success", [passed(function)], []),
    ]
    # The turn did not wait for the validator: its worker was killed at the deadline (no
    # worker but the idle ones is left running it).
    assert len(pool.live_workers()) <= pool.MAX_IDLE


# ---- the event stream of a retry ---------------------------------------------------------------


async def test_event_order_of_a_retried_turn(tmp_path: Path) -> None:
    record, events = await run(scenario(BOLD, PLAIN), tmp_path)

    seen: list[tuple[str, int | None]] = []
    for e in events:
        index = getattr(e, "index", None)
        if isinstance(e, StepFinished):
            index = e.step.index
        item = (e.kind, index)
        if item == ("text_delta", index) and seen and seen[-1] == item:
            continue  # one entry per streamed run of text
        seen.append(item)
    assert seen == [
        ("run_started", None),
        ("step_started", 1),
        ("text_delta", 1),
        ("verdicts", 1),
        ("attempt_cleared", 1),
        ("feedback_injected", 1),
        ("step_finished", 1),
        ("step_started", 2),
        ("text_delta", 2),
        ("verdicts", 2),
        ("step_finished", 2),
        ("run_finished", None),
    ]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert ["".join(e.text for e in deltas if e.index == n) for n in (1, 2)] == [BOLD, PLAIN]
    verdicts = [dumped(e.verdicts) for e in events if isinstance(e, VerdictsReady)]
    assert verdicts == [BOLD_VERDICTS, PLAIN_VERDICTS]
    started = [e for e in events if isinstance(e, StepStarted)]
    assert [(e.attempt, sent(e)) for e in started] == [
        (1, [u(USER)]),
        (2, [u(USER), a(BOLD), u(FB_BOLD)]),
    ]
    assert record.status == "succeeded"
