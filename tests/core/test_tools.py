"""User tools: canned results, python functions (sync and async), and every way a call can go
wrong — the model always gets a result, the turn never crashes."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.events import Event, ToolExecuted
from inspector.core.loop import Turn, run_turn
from inspector.core.messages import ToolCall
from inspector.core.records import RunRecord, ToolResult
from inspector.core.scenario import ToolConfig, scenario_from_dict
from inspector.core.tools import ToolBox
from inspector.providers.scripted import ScriptedProvider

BASE: dict[str, Any] = {"name": "tools", "prompt": {"system": "sys", "user": "hi"}}
NAME_PARAMS = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
TOOLS_PY = """
import asyncio
import os

def add(a, b):
    return a + b

def where():
    return os.getpid()

async def greet(name):
    await asyncio.sleep(0)
    return {"hello": name, "n": len(name)}

def explode(name):
    raise ValueError(f"no contact called {name}\\nlookup failed")

def bare():
    raise KeyError

def nothing():
    return None
"""


@pytest.fixture
def base_dir(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(textwrap.dedent(TOOLS_PY), encoding="utf-8")
    return tmp_path


def call(name: str, arguments: dict[str, Any] | str | None = None, id: str = "c1") -> ToolCall:
    return ToolCall(id=id, name=name, arguments={} if arguments is None else arguments)


async def execute(tools: list[dict[str, Any]], tool_call: ToolCall, base_dir: Path) -> ToolResult:
    box = ToolBox([ToolConfig.model_validate(t) for t in tools], base_dir)
    return await box.execute(tool_call)


async def run(data: dict[str, Any], base_dir: Path) -> tuple[RunRecord, list[Event]]:
    sc = scenario_from_dict({**BASE, **data}, source="test.toml", base_dir=base_dir)
    events: list[Event] = []
    record = await run_turn(sc, ScriptedProvider(sc.script), events.append)
    return record, events


# ---- canned results --------------------------------------------------------------------------


async def test_canned_string_result_is_sent_as_is(base_dir: Path) -> None:
    record, events = await run(
        {
            "tools": [{"name": "lookup", "parameters": NAME_PARAMS, "result": "Sam: +1 555 0100"}],
            "script": [
                {"tool_calls": [{"name": "lookup", "arguments": {"name": "Sam"}}]},
                {"text": "Call Sam at +1 555 0100."},
            ],
        },
        base_dir,
    )
    assert (record.status, record.output) == ("succeeded", "Call Sam at +1 555 0100.")
    expected = ToolResult(tool_call_id="call_1_0", name="lookup", content="Sam: +1 555 0100")
    assert record.steps[0].tool_results == [expected]
    assert [e.result for e in events if isinstance(e, ToolExecuted)] == [expected]
    # The model sees the assistant call and the result on the next step.
    assert [m.model_dump(mode="json") for m in record.steps[1].request.messages] == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1_0", "name": "lookup", "arguments": {"name": "Sam"}}],
        },
        {
            "role": "tool",
            "content": "Sam: +1 555 0100",
            "tool_call_id": "call_1_0",
            "name": "lookup",
        },
    ]


@pytest.mark.parametrize(
    ("result", "content"),
    [
        ({"phone": "+1 555 0100", "tags": ["work"]}, '{"phone": "+1 555 0100", "tags": ["work"]}'),
        ({"city": "Zürich"}, '{"city": "Zürich"}'),  # not ASCII-escaped
        ([1, 2], "[1, 2]"),
        (42, "42"),
        (True, "true"),
    ],
)
async def test_canned_non_string_result_is_json_text(
    base_dir: Path, result: Any, content: str
) -> None:
    got = await execute([{"name": "lookup", "result": result}], call("lookup"), base_dir)
    assert got == ToolResult(tool_call_id="c1", name="lookup", content=content)


async def test_tool_without_result_or_function_returns_empty_text(base_dir: Path) -> None:
    got = await execute([{"name": "ping"}], call("ping"), base_dir)
    assert (got.content, got.error) == ("", None)


# ---- function tools --------------------------------------------------------------------------


async def test_sync_function_tool_runs_in_a_worker_process(base_dir: Path) -> None:
    tools = [
        {"name": "add", "function": "tools.py:add"},
        {"name": "where", "function": "tools.py:where"},
    ]
    added = await execute(tools, call("add", {"a": 2, "b": 3}), base_dir)
    assert added == ToolResult(tool_call_id="c1", name="add", content="5")
    thread = await execute(tools, call("where"), base_dir)
    assert thread.error is None
    assert thread.content != str(os.getpid())


async def test_async_function_tool(base_dir: Path) -> None:
    got = await execute(
        [{"name": "greet", "function": "tools.py:greet", "parameters": NAME_PARAMS}],
        call("greet", {"name": "Sam"}),
        base_dir,
    )
    assert got == ToolResult(tool_call_id="c1", name="greet", content='{"hello": "Sam", "n": 3}')


async def test_function_returning_none_gives_empty_content(base_dir: Path) -> None:
    got = await execute(
        [{"name": "nothing", "function": "tools.py:nothing"}], call("nothing"), base_dir
    )
    assert (got.content, got.error) == ("", None)


async def test_several_calls_in_one_step_run_in_order(base_dir: Path) -> None:
    record, events = await run(
        {
            "tools": [
                {"name": "add", "function": "tools.py:add"},
                {"name": "greet", "function": "tools.py:greet"},
            ],
            "script": [
                {
                    "tool_calls": [
                        {"name": "greet", "arguments": {"name": "Al"}, "id": "g"},
                        {"name": "add", "arguments": {"a": 1, "b": 1}, "id": "a"},
                    ]
                },
                {"text": "done"},
            ],
        },
        base_dir,
    )
    assert record.status == "succeeded"
    assert [(r.tool_call_id, r.content) for r in record.steps[0].tool_results] == [
        ("g", '{"hello": "Al", "n": 2}'),
        ("a", "2"),
    ]
    assert [e.result.tool_call_id for e in events if isinstance(e, ToolExecuted)] == ["g", "a"]
    assert [(m.role, m.tool_call_id) for m in record.transcript] == [
        ("user", None),
        ("assistant", None),
        ("tool", "g"),
        ("tool", "a"),
        ("assistant", None),
    ]


# ---- errors become results -------------------------------------------------------------------


async def test_raising_tool_gives_the_model_an_error_and_the_turn_goes_on(base_dir: Path) -> None:
    record, _ = await run(
        {
            "tools": [{"name": "find", "function": "tools.py:explode", "parameters": NAME_PARAMS}],
            "script": [
                {"tool_calls": [{"name": "find", "arguments": {"name": "Sam"}}]},
                {"text": "I could not find Sam."},
            ],
        },
        base_dir,
    )
    assert (record.status, record.termination) == ("succeeded", "stop")
    assert record.output == "I could not find Sam."
    [result] = record.steps[0].tool_results
    assert result == ToolResult(
        tool_call_id="call_1_0",
        name="find",
        content="Error: ValueError: lookup failed",
        error="ValueError: lookup failed",
    )
    assert record.steps[0].status == "success"
    sent = record.steps[1].request.messages[-1]
    assert (sent.role, sent.content) == ("tool", "Error: ValueError: lookup failed")


async def test_exception_without_a_message_is_named_by_type(base_dir: Path) -> None:
    got = await execute([{"name": "bare", "function": "tools.py:bare"}], call("bare"), base_dir)
    assert (got.content, got.error) == ("Error: KeyError", "KeyError")


async def test_unknown_tool_names_the_available_ones(base_dir: Path) -> None:
    tools = [{"name": "lookup", "result": "x"}, {"name": "add", "function": "tools.py:add"}]
    got = await execute(tools, call("send_sms", {"to": "Sam"}), base_dir)
    message = "unknown tool 'send_sms' (available: add, lookup)"
    assert got == ToolResult(
        tool_call_id="c1", name="send_sms", content=f"Error: {message}", error=message
    )


async def test_unknown_tool_in_a_turn_without_tools(base_dir: Path) -> None:
    record, _ = await run(
        {"script": [{"tool_calls": [{"name": "ghost"}]}, {"text": "ok"}]}, base_dir
    )
    assert record.status == "succeeded"
    [result] = record.steps[0].tool_results
    assert result.error == "unknown tool 'ghost' (available: none)"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"name": 3}, "name: 3 is not of type 'string'"),
        ({}, "'name' is a required property"),
    ],
)
async def test_arguments_violating_the_schema(
    base_dir: Path, arguments: dict[str, Any], problem: str
) -> None:
    log = base_dir / "calls.log"
    (base_dir / "logged.py").write_text(
        f"def lookup(**kw):\n    open({str(log)!r}, 'a').write('called')\n    return 'x'\n",
        encoding="utf-8",
    )
    tools = [{"name": "lookup", "function": "logged.py:lookup", "parameters": NAME_PARAMS}]
    got = await execute(tools, call("lookup", arguments), base_dir)
    assert got.error == f"invalid arguments: {problem}"
    assert got.content == f"Error: invalid arguments: {problem}"
    assert not log.exists()  # the function is not called with bad arguments


async def test_arguments_that_are_not_a_json_object(base_dir: Path) -> None:
    got = await execute([{"name": "lookup", "result": "x"}], call("lookup", "Sam"), base_dir)
    assert got.error == "arguments are not a JSON object: 'Sam'"


async def test_invalid_arguments_in_a_turn_reach_the_model(base_dir: Path) -> None:
    record, _ = await run(
        {
            "tools": [{"name": "lookup", "parameters": NAME_PARAMS, "result": "x"}],
            "script": [
                {"tool_calls": [{"name": "lookup", "arguments": {"nom": "Sam"}}]},
                {"text": "retrying is up to me"},
            ],
        },
        base_dir,
    )
    assert record.status == "succeeded"
    tool_message = record.steps[1].request.messages[-1]
    assert tool_message.content == "Error: invalid arguments: 'name' is a required property"


# ---- broken tool files fail when the turn is built -------------------------------------------


def build(data: dict[str, Any], base_dir: Path) -> Turn:
    sc = scenario_from_dict({**BASE, **data}, source="test.toml", base_dir=base_dir)
    return Turn(sc, ScriptedProvider(sc.script))


def test_tool_file_with_a_syntax_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def ok():\n    return 1\n\ndef bad(:\n", encoding="utf-8")
    data = {
        "tools": [{"name": "bad", "function": "broken.py:bad"}],
        "script": [{"text": "x"}],
    }
    with pytest.raises(ScenarioError) as info:
        build(data, tmp_path)
    assert str(info.value).startswith("test.toml: tools[0].function: broken.py:4: syntax error: ")
    assert "\n" not in str(info.value)


async def test_syntax_error_is_raised_before_any_event(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def bad(:\n", encoding="utf-8")
    sc = scenario_from_dict(
        {
            **BASE,
            "tools": [{"name": "bad", "function": "broken.py:bad"}],
            "script": [{"text": "x"}],
        },
        source="test.toml",
        base_dir=tmp_path,
    )
    events: list[Event] = []
    with pytest.raises(ScenarioError, match=r"broken\.py:1: syntax error"):
        await run_turn(sc, ScriptedProvider(sc.script), events.append)
    assert events == []


@pytest.mark.parametrize(
    ("files", "function", "message"),
    [
        ({}, "missing.py:f", "test.toml: tools[1].function: file not found: "),
        ({"t.py": "x = 1\n"}, "t.py:f", "test.toml: tools[1].function: t.py has no function 'f'"),
        ({"t.py": "f = 3\n"}, "t.py:f", "test.toml: tools[1].function: t.py has no function 'f'"),
        (
            {"t.py": "raise ImportError('no numpy')\n"},
            "t.py:f",
            "test.toml: tools[1].function: t.py raised on import: ",
        ),
        (
            {},
            "t.py",
            "test.toml: tools[1].function: 't.py' is not of the form \"file.py:function\"",
        ),
    ],
)
def test_broken_tool_references(
    tmp_path: Path, files: dict[str, str], function: str, message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    # The second tool: the index in the message is the tool's position in the file.
    data = {
        "tools": [{"name": "ok", "result": "x"}, {"name": "t", "function": function}],
        "script": [{"text": "x"}],
    }
    with pytest.raises(ScenarioError) as info:
        build(data, tmp_path)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_import_error_message_names_the_exception(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("raise ImportError('no numpy')\n", encoding="utf-8")
    data = {"tools": [{"name": "t", "function": "t.py:f"}], "script": [{"text": "x"}]}
    with pytest.raises(ScenarioError) as info:
        build(data, tmp_path)
    assert str(info.value) == (
        "test.toml: tools[0].function: t.py raised on import: ImportError: no numpy"
    )
