"""Scenario hardening: load-time checks that name the file and the field, ``--set`` on array
items, typed script entries, user code that exits, hangs or backtracks (it never takes the
process or the event loop down with it), helper modules next to user files, and the last-step
instruction in tool output mode."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.events import Event
from inspector.core.loop import Turn, run_turn
from inspector.core.messages import ToolCall
from inspector.core.policy import Policy
from inspector.core.records import RunRecord, ToolResult, Verdict
from inspector.core.scenario import Scenario, ToolConfig, apply_overrides, scenario_from_dict
from inspector.core.tools import ToolBox
from inspector.core.validators import ValidationContext, compile_validators
from inspector.providers.factory import build_provider
from inspector.providers.scripted import ScriptedProvider
from inspector.resources import resolve_scenario

BASE: dict[str, Any] = {"name": "checks", "prompt": {"system": "sys", "user": "hi"}}
SCRIPT = [{"text": "x"}]
OBJECT = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def scenario(
    data: dict[str, Any], base_dir: Path = Path("."), overrides: list[str] | None = None
) -> Scenario:
    return scenario_from_dict(
        {**BASE, "script": SCRIPT, **data},
        source="test.toml",
        base_dir=base_dir,
        overrides=overrides or [],
    )


def load_error(data: dict[str, Any], overrides: list[str] | None = None) -> str:
    with pytest.raises(ScenarioError) as info:
        scenario(data, overrides=overrides)
    message = str(info.value)
    assert "\n" not in message
    return message


def build_error(data: dict[str, Any], base_dir: Path = Path(".")) -> str:
    """The error of building the turn (user files, regexes, validator options)."""
    sc = scenario(data, base_dir)
    with pytest.raises(ScenarioError) as info:
        Turn(sc, ScriptedProvider(sc.script))
    message = str(info.value)
    assert "\n" not in message
    return message


def provider_for(sc: Scenario) -> ScriptedProvider:
    provider = build_provider(sc)
    assert isinstance(provider, ScriptedProvider)
    return provider


async def run(data: dict[str, Any], base_dir: Path) -> tuple[RunRecord, list[Event]]:
    sc = scenario(data, base_dir)
    events: list[Event] = []
    record = await run_turn(sc, provider_for(sc), events.append)
    assert all(s.status != "pending" for s in record.steps)
    return record, events


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")


def in_own_loop(make: Callable[[], Awaitable[Any]]) -> Any:
    """Runs ``make()`` in a fresh event loop on another thread and returns its value.

    An interrupt or exit that escapes an event loop (as an uncaught ``KeyboardInterrupt`` from a
    task does) fails the test here instead of interrupting the whole pytest session."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as exc:
            outcome["escaped"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the event loop did not finish"
    if "escaped" in outcome:
        exc = outcome["escaped"]
        pytest.fail(f"{type(exc).__name__}({exc}) escaped the event loop")
    return outcome["value"]


# ---- errors name the scenario file and the field ---------------------------------------------


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"model": {"provider": "scripted"}, "script": []}, 'script: provider "scripted" needs'),
        (
            {"policy": {"on_step_cap": "fallback"}},
            "policy.fallback: a fallback handler is chosen but neither fallback nor "
            "fallback_function is set",
        ),
        (
            {"policy": {"feedback_history": "custom"}},
            'policy.feedback_builder: feedback_history = "custom" needs a "file.py:function"',
        ),
        (
            {"tools": [{"name": "t", "result": "x", "function": "t.py:f"}]},
            "tools[0].function: give either result or function, not both",
        ),
        (
            {"output": {"schema": {"type": "nonsense"}}},
            "output.schema: not a valid JSON Schema: 'nonsense' is not valid under any of the "
            "given schemas",
        ),
        (
            {"validators": [{"kind": "non_empty"}, {"kind": "max_length"}]},
            "validators[1].max: Field required",  # no union tag (max_length) in the path
        ),
        (
            {"validators": [{"kind": "regex_absent", "pattern": "x", "ignore_cas": True}]},
            "validators[0].ignore_cas: Extra inputs are not permitted",
        ),
    ],
)
def test_model_level_errors_name_a_field(data: dict[str, Any], problem: str) -> None:
    assert load_error(data).startswith(f"test.toml: {problem}")


def test_user_file_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    write(tmp_path, "t.py", "def g():\n    return 1\n")
    assert build_error(
        {"tools": [{"name": "a", "result": "x"}, {"name": "t", "function": "t.py:f"}]}, tmp_path
    ) == ("test.toml: tools[1].function: t.py has no function 'f'")
    assert build_error(
        {"validators": [{"kind": "non_empty"}, {"kind": "python", "function": "t.py:f"}]},
        tmp_path,
    ) == ("test.toml: validators[1].function: t.py has no function 'f'")
    assert build_error(
        {"validators": [{"kind": "python", "function": "gone.py:f"}]}, tmp_path
    ).startswith("test.toml: validators[0].function: file not found: ")
    assert build_error({"validators": [{"kind": "regex_present", "pattern": "("}]}) == (
        "test.toml: validators[0].pattern: bad regular expression '(': missing ) at position 1"
    )


@pytest.mark.parametrize(
    ("policy", "hook"),
    [
        ({"feedback_history": "custom", "feedback_builder": "hooks.py:nope"}, "feedback_builder"),
        (
            {"on_invalid_output": "fallback", "fallback_function": "hooks.py:nope"},
            "fallback_function",
        ),
    ],
)
def test_hook_errors_name_the_file_and_the_field(
    tmp_path: Path, policy: dict[str, Any], hook: str
) -> None:
    write(tmp_path, "hooks.py", "x = 1\n")
    assert build_error({"policy": policy}, tmp_path) == (
        f"test.toml: policy.{hook}: hooks.py has no function 'nope'"
    )


def test_demos_are_named_demo_name() -> None:
    assert resolve_scenario("demo:step-cap").source == "demo:step-cap"
    with pytest.raises(ScenarioError) as info:
        resolve_scenario("demo:step-cap", ["policy.max_steps=0"])
    assert str(info.value) == (
        "demo:step-cap: policy.max_steps: Input should be greater than or equal to 1"
        " (from --set policy.max_steps=0)"
    )


def test_an_unknown_table_made_by_an_override_names_the_override() -> None:
    with pytest.raises(ScenarioError) as info:
        resolve_scenario("demo:step-cap", ["polcy.max_steps=3"])
    assert str(info.value) == (
        "demo:step-cap: polcy: Extra inputs are not permitted (from --set polcy.max_steps=3)"
    )


# ---- load-time checks --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        ({"type": "nonsense"}, "'nonsense' is not valid under any of the given schemas"),
        ({"type": "object", "required": "name"}, "'name' is not of type 'array'"),
    ],
)
def test_tool_parameters_must_be_a_json_schema(parameters: dict[str, Any], problem: str) -> None:
    assert load_error({"tools": [{"name": "t", "parameters": parameters}]}) == (
        f"test.toml: tools[0].parameters: not a valid JSON Schema: {problem}"
    )


async def test_json_schema_validator_needs_a_valid_schema_before_anything_runs() -> None:
    sc = scenario(
        {"validators": [{"kind": "non_empty"}, {"kind": "json_schema", "schema": {"type": 3}}]}
    )
    events: list[Event] = []
    with pytest.raises(ScenarioError) as info:
        await run_turn(sc, ScriptedProvider(sc.script), events.append)
    assert str(info.value).startswith("test.toml: validators[1].schema: not a valid JSON Schema: ")
    assert events == []


@pytest.mark.parametrize(
    ("tools", "known"),
    [
        ([{"name": "search", "result": "x"}, {"name": "lookup", "result": "y"}], "lookup, search"),
        ([], "none"),
    ],
)
def test_calls_tool_must_name_a_tool_of_the_scenario(
    tools: list[dict[str, Any]], known: str
) -> None:
    data = {"tools": tools, "validators": [{"kind": "calls_tool", "tool": "lookup_contact"}]}
    assert build_error(data) == (
        f"test.toml: validators[0].tool: no tool 'lookup_contact' (tools: {known})"
    )


def test_calls_tool_naming_a_tool_of_the_scenario_builds() -> None:
    sc = scenario(
        {
            "tools": [{"name": "lookup", "result": "x"}],
            "validators": [{"kind": "calls_tool", "tool": "lookup"}],
        }
    )
    assert [v.name for v in Turn(sc, ScriptedProvider(sc.script)).validators] == ["calls_tool"]


@pytest.mark.parametrize("schema", [{"type": "string"}, {"type": "array", "items": {}}])
def test_tool_output_mode_needs_an_object_schema(schema: dict[str, Any]) -> None:
    assert load_error({"output": {"schema": schema}}) == (
        'test.toml: output.schema: output_mode "tool" needs an object schema (type = "object"),'
        " since it becomes a tool's input; use native or prompted for other types"
    )


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_other_output_modes_take_any_schema(mode: str) -> None:
    sc = scenario({"output": {"schema": {"type": "string"}}, "policy": {"output_mode": mode}})
    assert sc.output is not None and sc.output.output_schema == {"type": "string"}


# ---- typed [[script]] entries ------------------------------------------------------------------


def test_script_usage_is_typed() -> None:
    sc = scenario({"script": [{"text": "x", "usage": {"output_tokens": 7}}]})
    usage = sc.script[0].usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (None, 7)


@pytest.mark.parametrize(
    ("usage", "problem"),
    [
        ({"prompt_tokens": 3}, "script[1].usage.prompt_tokens: Extra inputs are not permitted"),
        (
            {"input_tokens": -1},
            "script[1].usage.input_tokens: Input should be greater than or equal to 0",
        ),
        (
            {"output_tokens": "many"},
            "script[1].usage.output_tokens: Input should be a valid integer",
        ),
    ],
)
def test_bad_script_usage_is_a_load_error(usage: dict[str, Any], problem: str) -> None:
    data = {"script": [{"text": "a"}, {"text": "b", "usage": usage}]}
    assert load_error(data) == f"test.toml: {problem}"


async def test_partial_usage_overrides_only_its_key(tmp_path: Path) -> None:
    record, _ = await run({"script": [{"text": "hello", "usage": {"input_tokens": 900}}]}, tmp_path)
    usage = record.steps[0].response.usage  # type: ignore[union-attr]
    assert (usage.input_tokens, usage.output_tokens) == (900, 2)  # 5 chars -> 2 tokens


@pytest.mark.parametrize(
    "content",
    [{"text": "hi"}, {"tool_calls": [{"name": "lookup"}]}, {"final": {"answer": "x"}}],
)
def test_an_empty_answer_cannot_have_content(content: dict[str, Any]) -> None:
    data = {"script": [{"text": "a"}, {"empty": True, **content}]}
    assert load_error(data) == (
        "test.toml: script[1].empty: an empty answer cannot also have text, tool_calls or final"
    )


def test_an_empty_answer_alone_loads() -> None:
    assert [e.empty for e in scenario({"script": [{"empty": True}]}).script] == [True]


# ---- --set on array items ----------------------------------------------------------------------

VALIDATED: dict[str, Any] = {
    "validators": [{"kind": "non_empty"}, {"kind": "max_length", "max": 160}],
}


def test_set_addresses_an_array_item() -> None:
    sc = scenario(VALIDATED, overrides=["validators.1.max=200", 'validators.0.feedback="Say it."'])
    first, second = sc.validators
    assert (first.kind, first.feedback) == ("non_empty", "Say it.")
    assert (second.kind, second.max) == ("max_length", 200)  # type: ignore[union-attr]


def test_set_replaces_a_whole_array_item() -> None:
    sc = scenario(VALIDATED, overrides=["validators.1={ kind = 'min_length', min = 2 }"])
    assert [(v.kind, getattr(v, "min", None)) for v in sc.validators] == [
        ("non_empty", None),
        ("min_length", 2),
    ]


def test_set_on_an_array_item_does_not_touch_the_input() -> None:
    data = json.loads(json.dumps(VALIDATED))
    assert scenario(data, overrides=["validators.1.max=1"]).validators[1].max == 1  # type: ignore[union-attr]
    assert data == VALIDATED


def test_apply_overrides_walks_into_arrays() -> None:
    data = {"a": [{"b": 1}, {"b": [10, 20]}]}
    assert apply_overrides(data, ["a.1.b.0=11", "a.0.c=x"]) == {
        "a": [{"b": 1, "c": "x"}, {"b": [11, 20]}]
    }


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "validators.5.max=1",
            "--set 'validators.5.max=1': validators has 2 item(s); '5' is not one",
        ),
        (
            "validators.first.max=1",
            "--set 'validators.first.max=1': validators has 2 item(s); 'first' is not one",
        ),
        (
            "validators.-1.max=1",
            "--set 'validators.-1.max=1': validators has 2 item(s); '-1' is not one",
        ),
        ("validators.1.max.x=1", "--set 'validators.1.max.x=1': 'max' is not a table"),
    ],
)
def test_set_with_a_bad_array_index(override: str, message: str) -> None:
    assert load_error(VALIDATED, [override]) == message


def test_bad_value_on_an_array_item_names_the_override() -> None:
    assert load_error(VALIDATED, ["validators.1.max=-1"]) == (
        "test.toml: validators[1].max: Input should be greater than or equal to 0"
        " (from --set validators.1.max=-1)"
    )


# ---- user code that exits or interrupts ------------------------------------------------------

EXITS_PY = """
import sys

def tool_exits():
    sys.exit(3)

async def async_tool_exits():
    raise SystemExit(4)

def validator_exits(output, ctx):
    sys.exit(5)

async def async_validator_interrupts(output, ctx):
    raise KeyboardInterrupt("stop")
"""


@pytest.fixture
def exits_dir(tmp_path: Path) -> Path:
    write(tmp_path, "exits.py", EXITS_PY)
    return tmp_path


async def test_sync_tool_calling_sys_exit_is_an_error_result(exits_dir: Path) -> None:
    record, _ = await run(
        {
            "tools": [{"name": "bye", "function": "exits.py:tool_exits"}],
            "script": [{"tool_calls": [{"name": "bye"}]}, {"text": "the tool failed"}],
        },
        exits_dir,
    )
    assert (record.status, record.output) == ("succeeded", "the tool failed")
    [result] = record.steps[0].tool_results
    assert result.error is not None and "SystemExit" in result.error and "3" in result.error
    assert result.content == f"Error: {result.error}"


def test_async_tool_raising_system_exit_is_an_error_result(exits_dir: Path) -> None:
    async def go() -> ToolResult:
        box = ToolBox(
            [ToolConfig(name="bye", function="exits.py:async_tool_exits")], exits_dir, None
        )
        return await box.execute(ToolCall(id="c1", name="bye", arguments={}))

    result = in_own_loop(go)
    assert result.error is not None and "SystemExit" in result.error


async def test_sync_validator_calling_sys_exit_is_an_error_verdict(exits_dir: Path) -> None:
    record, _ = await run(
        {
            "validators": [{"kind": "python", "function": "exits.py:validator_exits"}],
            "policy": {"max_attempts": 1},
            "script": [{"text": "x"}],
        },
        exits_dir,
    )
    assert (record.status, record.termination) == ("error", "validator_error")
    [verdict] = record.steps[0].verdicts
    assert (verdict.validator, verdict.status) == ("validator_exits", "error")
    assert "SystemExit" in verdict.reason


def test_async_validator_raising_keyboard_interrupt_is_an_error_verdict(exits_dir: Path) -> None:
    spec = {"kind": "python", "function": "exits.py:async_validator_interrupts"}
    sc = scenario({"validators": [spec]}, exits_dir)

    async def go() -> Verdict:
        [validator] = compile_validators(sc.validators, exits_dir, source="test.toml")
        verdict = await validator.judge("x", ValidationContext(attempt=1, step=1))
        await asyncio.sleep(0.01)  # an escaped interrupt would surface on the next loop turn
        return verdict

    verdict = in_own_loop(go)
    assert (verdict.validator, verdict.status) == ("async_validator_interrupts", "error")
    assert "KeyboardInterrupt" in verdict.reason


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
        ("raise SystemExit\n", "SystemExit"),
        # (KeyboardInterrupt at import is left alone: it cannot be told from a real Ctrl+C.)
    ],
)
def test_module_exiting_at_import_is_a_scenario_error(
    tmp_path: Path, source: str, reason: str
) -> None:
    (tmp_path / "bye.py").write_text(source, encoding="utf-8")
    assert build_error({"tools": [{"name": "t", "function": "bye.py:f"}]}, tmp_path) == (
        f"test.toml: tools[0].function: bye.py raised on import: {reason}"
    )
    assert str(tmp_path) not in sys.path


# ---- timeouts ----------------------------------------------------------------------------------

SLOW_PY = """
import asyncio
import time
from pathlib import Path

HERE = Path(__file__).parent

def slow():
    (HERE / "started").touch()
    for _ in range(500):  # up to 5 s, or until the test releases it
        if (HERE / "release").exists():
            return "late"
        time.sleep(0.01)
    return "late"

async def async_slow():
    await asyncio.sleep(5)
    return "late"
"""


@pytest.fixture
def slow_dir(tmp_path: Path) -> Iterator[Path]:
    write(tmp_path, "slow.py", SLOW_PY)
    yield tmp_path
    (tmp_path / "release").touch()  # lets a still sleeping tool thread end


def test_tool_timeout_default() -> None:
    assert Policy().tool_timeout_s == 60.0


@pytest.mark.parametrize("function", ["slow", "async_slow"])
async def test_tool_running_past_its_timeout_is_an_error_and_the_turn_goes_on(
    slow_dir: Path, function: str
) -> None:
    t0 = time.monotonic()
    record, _ = await run(
        {
            "tools": [{"name": "wait", "function": f"slow.py:{function}"}],
            "policy": {"tool_timeout_s": 0.2},
            "script": [{"tool_calls": [{"name": "wait"}]}, {"text": "it timed out"}],
        },
        slow_dir,
    )
    elapsed = time.monotonic() - t0
    assert (record.status, record.output) == ("succeeded", "it timed out")
    [result] = record.steps[0].tool_results
    assert (result.content, result.error) == (
        "Error: timed out after 0.2 s",
        "timed out after 0.2 s",
    )
    assert elapsed < 1.5


def test_cancel_during_a_slow_sync_tool_returns_promptly(slow_dir: Path) -> None:
    # A whole event loop, as the CLI runs it: its shutdown must not wait for the tool thread
    # either (a pool thread, as asyncio.to_thread uses, would hold asyncio.run for 5 s).
    sc = scenario(
        {
            "tools": [{"name": "wait", "function": "slow.py:slow"}],
            "script": [{"tool_calls": [{"name": "wait"}]}, {"text": "never"}],
        },
        slow_dir,
    )

    async def cancel_while_the_tool_runs() -> tuple[RunRecord, float]:
        task = asyncio.create_task(run_turn(sc, ScriptedProvider(sc.script)))
        while not (slow_dir / "started").exists():
            await asyncio.sleep(0.005)
        t0 = time.monotonic()
        task.cancel()
        return await asyncio.wait_for(task, 2), t0

    record, t0 = asyncio.run(cancel_while_the_tool_runs())
    assert time.monotonic() - t0 < 0.5  # the tool sleeps up to 5 s
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    assert [s.status for s in record.steps] == ["cancelled"]
    assert record.steps[0].tool_results == []


# A regular expression that backtracks for about half a minute on this text (each extra "a"
# doubles it). Run in a child process: a check that does not stop it would hold the interpreter.
CATASTROPHIC = r"""
import asyncio, json, sys, time
from pathlib import Path
from inspector.core.loop import run_turn
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider

sc = scenario_from_dict(
    {
        "name": "backtracking",
        "prompt": {"user": "hi"},
        "validators": [{"kind": sys.argv[1], "pattern": "(a+)+$"}],
        "policy": {"max_attempts": 1, "validator_timeout_s": 0.3},
        "script": [{"text": "a" * 28 + "!"}],
    },
    source="test.toml",
    base_dir=Path("."),
)
t0 = time.monotonic()
record = asyncio.run(run_turn(sc, ScriptedProvider(sc.script)))
elapsed = time.monotonic() - t0
verdict = record.steps[0].verdicts[0]
print(json.dumps({"elapsed": elapsed, "status": verdict.status, "reason": verdict.reason}))
"""


@pytest.mark.parametrize(("kind", "status"), [("regex_absent", "pass"), ("regex_present", "fail")])
def test_pathological_regex_answers_promptly(tmp_path: Path, kind: str, status: str) -> None:
    # Built-in regex validators use the `regex` engine, which neither backtracks
    # catastrophically on this pattern (as `re` does, for ~25 s) nor runs unbounded: it takes
    # the validator timeout as its own.
    script = tmp_path / "catastrophic.py"
    script.write_text(CATASTROPHIC, encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, str(script), kind],
            capture_output=True,
            text=True,
            timeout=4,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the regex validator was still running after 4 s (timeout 0.3 s)")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["status"] == status
    assert got["elapsed"] < 1.0


# ---- helper modules next to user files ---------------------------------------------------------


def test_validator_file_imports_a_helper_next_to_it(tmp_path: Path) -> None:
    helper = "sms_rules_for_validator_test"
    write(tmp_path, f"{helper}.py", "LIMIT = 5\n")
    write(
        tmp_path,
        "checks.py",
        f"""
        from {helper} import LIMIT

        def short(output, ctx):
            return len(output) <= LIMIT or f"At most {{LIMIT}} characters."
        """,
    )
    try:

        async def judge(text: str) -> Verdict:
            sc = scenario(
                {"validators": [{"kind": "python", "function": "checks.py:short"}]}, tmp_path
            )
            [validator] = Turn(sc, ScriptedProvider(sc.script)).validators
            return await validator.judge(text, ValidationContext(attempt=1, step=1))

        assert asyncio.run(judge("hi")) == Verdict.passed("short")
        assert asyncio.run(judge("far too long")).reason == "At most 5 characters."
    finally:
        sys.modules.pop(helper, None)
    assert str(tmp_path) not in sys.path  # on sys.path only while the file loads


async def test_tool_file_imports_a_helper_next_to_it(tmp_path: Path) -> None:
    helper = "contacts_for_tool_test"
    write(tmp_path, f"{helper}.py", "PHONES = {'Sam': '+1 555 0100'}\n")
    write(
        tmp_path,
        "tools.py",
        f"""
        import {helper}

        def lookup(name):
            return {helper}.PHONES[name]
        """,
    )
    try:
        record, _ = await run(
            {
                "tools": [{"name": "lookup", "function": "tools.py:lookup"}],
                "script": [
                    {"tool_calls": [{"name": "lookup", "arguments": {"name": "Sam"}}]},
                    {"text": "done"},
                ],
            },
            tmp_path,
        )
    finally:
        sys.modules.pop(helper, None)
    assert record.steps[0].tool_results[0].content == "+1 555 0100"


# ---- the last step in tool output mode ---------------------------------------------------------


async def test_final_tool_instruction_names_the_final_tool(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "output": {"schema": OBJECT},
            # A user tool takes the name: the final-answer tool becomes final_answer_1.
            "tools": [{"name": "final_answer", "result": "x"}],
            "policy": {"max_steps": 1, "final_step_instruction": "Tools are off."},
            "script": [{"final": {"answer": "done"}}],
        },
        tmp_path,
    )
    assert (record.status, record.output) == ("succeeded", {"answer": "done"})
    assert record.steps[0].request.system == (
        "sys\n\nThis is the last step: call the final_answer_1 tool now with your answer."
    )


async def test_custom_final_tool_instruction(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "output": {"schema": OBJECT, "name": "reply"},
            "tools": [{"name": "search", "result": "x"}],
            "policy": {"max_steps": 2, "final_tool_instruction": "Now call {tool}; {tool} only."},
            "script": [{"tool_calls": [{"name": "search"}]}, {"final": {"answer": "done"}}],
        },
        tmp_path,
    )
    assert record.status == "succeeded"
    # The output's name is the final-answer tool's name; every {tool} is replaced.
    assert [s.request.system for s in record.steps] == ["sys", "sys\n\nNow call reply; reply only."]


async def test_text_mode_keeps_the_final_step_instruction(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "tools": [{"name": "search", "result": "x"}],
            "policy": {"max_steps": 1, "final_tool_instruction": "unused {tool}"},
            "script": [{"text": "done"}],
        },
        tmp_path,
    )
    assert record.steps[0].request.system == (
        "sys\n\nTools are disabled now. Answer the user with what you have."
    )


def test_set_suffix_names_only_the_override_that_set_the_faulty_field() -> None:
    from inspector.core.errors import ScenarioError
    from inspector.core.scenario import scenario_from_dict

    base = {
        "name": "t",
        "prompt": {"user": "hi"},
        "script": [{"text": "x"}],
        "policy": {"feedback_history": "custom"},  # the file's own mistake
    }
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(
            base, source="t.toml", base_dir=Path("."), overrides=["policy.max_steps=5"]
        )
    assert "(from --set" not in str(info.value)
    assert str(info.value).startswith("t.toml: policy.feedback_builder: ")
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(
            {**base, "policy": {}, "validators": [{"kind": "max_length", "max": 3}]},
            source="t.toml",
            base_dir=Path("."),
            overrides=["validators.0.max=-1", "policy.max_steps=5"],
        )
    assert str(info.value) == (
        "t.toml: validators[0].max: Input should be greater than or equal to 0"
        " (from --set validators.0.max=-1)"
    )
