"""Scenario files (DESIGN §3): loading, one-line errors, and ``--set`` overrides."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.loop import run_turn
from inspector.core.messages import Message
from inspector.core.records import Verdict
from inspector.core.scenario import (
    Scenario,
    apply_overrides,
    load_scenario,
    parse_override,
    scenario_from_dict,
)
from inspector.core.validators import ValidationContext, compile_validators
from inspector.providers.scripted import ScriptedProvider

# The example of DESIGN §3, verbatim.
DESIGN_EXAMPLE = """\
name = "sms-no-markdown"
description = "SMS must be plain text under 160 chars"

[model]
provider = "scripted"        # scripted | openai | anthropic | replay
name = "demo"                # model id sent to the provider
# base_url = "http://127.0.0.1:8080/v1"   # any OpenAI-compatible server
# api_key_env = "OPENAI_API_KEY"          # the key is read from this env var, never stored
temperature = 0
stream = true

[prompt]
system = "You write SMS messages."
user = "Tell Sam the meeting moved to 3pm."
# messages = [{role = "user", content = "..."}]   # alternative: a conversation prefix

[output]                     # optional; absent = plain text output
schema = { type = "object", properties = { body = { type = "string" } }, required = ["body"] }

[[tools]]
name = "lookup_contact"
description = "Find a contact"
parameters = { type = "object", properties = { name = { type = "string" } }, required = ["name"] }
result = "Sam: +1 555 0100"           # canned result; or: function = "tools.py:lookup_contact"
side_effects = false                  # true: a replay never re-executes it, \
the recorded result is used

[[validators]]
kind = "regex_absent"                 # built-ins: non_empty, max_length, min_length, regex_absent,
pattern = "[*_#`]"                    # regex_present, json_schema, calls_tool, python
feedback = "Plain text only: no markdown characters."
[[validators]]
kind = "python"
function = "validators.py:no_cjk"     # path relative to the scenario file

[policy]
max_attempts = 3              # validation attempts per turn (1 = no retry)
feedback_history = "accumulate"   # accumulate | latest | none | custom
feedback_builder = ""         # "validators.py:build_history" when feedback_history = "custom"
feedback_role = "user"        # user | tool | system
keep_failed_attempts = true   # failed assistant output stays in the history the model sees
clear_failed_attempts = true  # the transcript (what an end user sees) drops failed attempts
max_steps = 20                # model calls per turn, retries included
final_step = "force_text"     # force_text | none   (B2)
final_step_instruction = "Tools are disabled now. Answer the user with what you have."
output_mode = "tool"          # native | tool | prompted   (B3; only with [output])
on_invalid_output = "raise"   # raise | fallback   (B5)
fallback = { body = "Meeting moved to 3pm." }   # or fallback_function = "validators.py:fallback"
fallback_in_history = false
on_empty_final = "retry"      # finalize | retry | error   (B4)
on_step_cap = "raise"         # raise | fallback

[[script]]                    # provider = "scripted": one entry per model call, in order
text = "**Hi Sam** - meeting moved to 3pm"
[[script]]
tool_calls = [{ name = "lookup_contact", arguments = { name = "Sam" } }]
[[script]]
empty = true                  # finish_reason stop, no content
[[script]]
text = "Hi Sam, the meeting moved to 3pm."
"""

VALIDATORS_PY = """
import re

CJK = re.compile(r"[\\u3040-\\u30ff\\u3400-\\u9fff\\uac00-\\ud7af]")

def no_cjk(output, ctx):
    text = output["body"] if isinstance(output, dict) else str(output)
    if CJK.search(text):
        return "Answer in English only."
    return None
"""

MINIMAL = """\
name = "minimal"
[prompt]
user = "hi"
[[script]]
text = "hello"
"""


@pytest.fixture
def example(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "validators.py").write_text(textwrap.dedent(VALIDATORS_PY), encoding="utf-8")
    path = folder / "sms.toml"
    path.write_text(DESIGN_EXAMPLE, encoding="utf-8")
    return path


def write(tmp_path: Path, text: str, name: str = "scenario.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_error(path: Path, overrides: list[str] | None = None) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, overrides)
    message = str(info.value)
    assert "\n" not in message
    return message


# ---- the DESIGN §3 example ----------------------------------------------------------------------


def test_design_example_loads(example: Path) -> None:
    sc = load_scenario(example)
    assert (sc.name, sc.description) == (
        "sms-no-markdown",
        "SMS must be plain text under 160 chars",
    )
    assert (sc.model.provider, sc.model.name, sc.model.temperature, sc.model.stream) == (
        "scripted",
        "demo",
        0,
        True,
    )
    assert sc.prompt.initial_messages() == [
        Message(role="user", content="Tell Sam the meeting moved to 3pm.")
    ]
    assert sc.prompt.system == "You write SMS messages."
    assert sc.output is not None
    assert sc.output.output_schema == {
        "type": "object",
        "properties": {"body": {"type": "string"}},
        "required": ["body"],
    }
    [tool] = sc.tools
    assert (tool.name, tool.result, tool.function, tool.side_effects) == (
        "lookup_contact",
        "Sam: +1 555 0100",
        None,
        False,
    )
    assert [v.kind for v in sc.validators] == ["regex_absent", "python"]
    assert sc.validators[0].feedback == "Plain text only: no markdown characters."
    policy = sc.policy
    assert (policy.max_attempts, policy.max_steps, policy.output_mode) == (3, 20, "tool")
    assert (policy.on_invalid_output, policy.on_empty_final, policy.on_step_cap) == (
        "raise",
        "retry",
        "raise",
    )
    assert policy.fallback == {"body": "Meeting moved to 3pm."}
    assert [e.empty for e in sc.script] == [False, False, True, False]
    assert sc.script[1].tool_calls[0].arguments == {"name": "Sam"}
    assert sc.base_dir == example.parent.resolve()
    assert sc.source == str(example)


async def test_design_example_python_validator_resolves_next_to_the_file(example: Path) -> None:
    sc = load_scenario(example)
    regex, no_cjk = compile_validators(sc.validators, sc.base_dir)
    ctx = ValidationContext(attempt=1, step=1)
    assert await no_cjk.judge({"body": "会議は3時に変更"}, ctx) == Verdict.failed(
        "no_cjk", "Answer in English only.", "Answer in English only."
    )
    assert await no_cjk.judge({"body": "Meeting at 3pm"}, ctx) == Verdict.passed("no_cjk")
    assert (await regex.judge({"body": "**Hi**"}, ctx)).feedback == (
        "Plain text only: no markdown characters."
    )


async def test_design_example_runs_offline(example: Path) -> None:
    sc = load_scenario(example)
    record = await run_turn(
        sc, ScriptedProvider(sc.script, final_tool="final_answer", output_mode="tool")
    )
    # Every scripted answer is plain text in tool mode: three attempts, then the handler raises.
    assert (record.status, record.termination) == ("failed", "validator_exhausted")
    assert [(s.attempt, s.status) for s in record.steps] == [
        (1, "failed_validation"),
        (2, "success"),
        (2, "empty"),
        (3, "failed_validation"),
    ]
    assert record.steps[1].tool_results[0].content == "Sam: +1 555 0100"


async def test_design_example_with_the_fallback_handler(example: Path) -> None:
    sc = load_scenario(example, ["policy.on_invalid_output=fallback"])
    record = await run_turn(
        sc, ScriptedProvider(sc.script, final_tool="final_answer", output_mode="tool")
    )
    assert (record.status, record.output) == ("fallback", {"body": "Meeting moved to 3pm."})
    assert record.overrides == []  # load_scenario applies them; run_turn gets them separately


def test_relative_references_resolve_from_the_scenario_folder(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    relative = Path("..") / "scenarios" / "sms.toml"
    sc = load_scenario(relative)
    assert sc.base_dir == example.parent.resolve()
    assert [v.name for v in compile_validators(sc.validators, sc.base_dir)] == [
        "regex_absent",
        "no_cjk",
    ]


def test_minimal_scenario_gets_the_defaults(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, MINIMAL))
    assert (sc.model.provider, sc.model.name, sc.model.stream) == ("scripted", "demo", True)
    assert sc.output is None and sc.tools == [] and sc.validators == []
    assert (sc.policy.max_attempts, sc.policy.on_empty_final) == (3, "retry")


# ---- one-line errors naming file, field and problem ------------------------------------------


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        (
            "[policy]\nmax_attempts = 0",
            "policy.max_attempts: Input should be greater than or equal to 1",
        ),
        ("[policy]\nretries = 2", "policy.retries: Extra inputs are not permitted"),
        (
            '[policy]\nfeedback_history = "bogus"',
            "policy.feedback_history: Input should be 'accumulate', 'latest', 'none' or "
            "'custom' (got 'bogus')",
        ),
        (
            '[policy]\nmax_attempts = "three"',
            "policy.max_attempts: Input should be a valid integer",
        ),
        (
            '[policy]\nfeedback_history = "custom"',
            'policy.feedback_builder: feedback_history = "custom" needs a "file.py:function"',
        ),
        (
            '[model]\nprovider = "gemini"',
            "model.provider: Input should be 'scripted', 'openai', 'anthropic' or 'replay' "
            "(got 'gemini')",
        ),
        (
            '[[validators]]\nkind = "max_length"',
            "validators[0].max: Field required",  # the union's tag is not part of the path
        ),
        (
            '[[tools]]\nname = "a b"',
            "tools[0].name: String should match pattern '^[A-Za-z0-9_-]{1,64}$'",
        ),
        (
            '[[tools]]\nname = "t"\n[[tools]]\nname = "t"',
            "(top level): duplicate tool name 't'",
        ),
        (
            '[[tools]]\nname = "t"\nresult = "x"\nfunction = "t.py:f"',
            "tools[0].function: give either result or function, not both",
        ),
        (
            "[policy]\nmax_attempts = 0\nmax_steps = 0",
            "policy.max_attempts: Input should be greater than or equal to 1 (+1 more)",
        ),
    ],
)
def test_field_errors(tmp_path: Path, toml: str, problem: str) -> None:
    path = write(tmp_path, MINIMAL + toml + "\n")
    assert load_error(path) == f"{path}: {problem}"


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(tmp_path, 'colour = "blue"\n' + MINIMAL)
    assert load_error(path) == f"{path}: colour: Extra inputs are not permitted"


def test_missing_prompt(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[script]]\ntext = "hi"\n')
    assert load_error(path) == f"{path}: prompt: Field required"


def test_prompt_without_user_or_messages(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[prompt]\nsystem = "s"\n[[script]]\ntext = "hi"\n')
    assert load_error(path) == f'{path}: prompt: needs user = "..." or messages = [...]'


def test_scripted_provider_without_script(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[prompt]\nuser = "hi"\n')
    assert load_error(path) == f'{path}: script: provider "scripted" needs [[script]] entries'


def test_other_providers_need_no_script(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[model]\nprovider = "openai"\n[prompt]\nuser = "hi"\n')
    assert load_scenario(path).script == []


def test_invalid_output_schema(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[output]\nschema = { type = "nonsense" }\n')
    assert load_error(path).startswith(f"{path}: output.schema: not a valid JSON Schema: ")


def test_output_without_schema(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[output]\nname = "answer"\n')
    assert load_error(path) == f"{path}: output.schema: Field required"


def test_invalid_toml(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[prompt\nuser = "hi"\n')
    message = load_error(path)
    assert message.startswith(f"{path}: not valid TOML: ")
    assert "line 2" in message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    assert load_error(path) == f"{path}: cannot read: No such file or directory"


def test_directory_instead_of_a_file(tmp_path: Path) -> None:
    assert load_error(tmp_path) == f"{tmp_path}: not a regular file (a folder)"


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "caf\xe9"\n[prompt]\nuser = "hi"\n[[script]]\ntext = "x"\n')
    assert load_error(path).startswith(f"{path}: ")


# ---- --set overrides -------------------------------------------------------------------------

BASE: dict[str, Any] = {"name": "t", "prompt": {"user": "hi"}, "script": [{"text": "x"}]}


def with_overrides(*overrides: str, data: dict[str, Any] | None = None) -> Scenario:
    return scenario_from_dict(
        data or BASE, source="test.toml", base_dir=Path("."), overrides=list(overrides)
    )


def set_error(*overrides: str) -> str:
    with pytest.raises(ScenarioError) as info:
        with_overrides(*overrides)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_override_int() -> None:
    sc = with_overrides("policy.max_attempts=5")
    assert sc.policy.max_attempts == 5
    assert isinstance(sc.policy.max_attempts, int)


def test_override_inline_table() -> None:
    sc = with_overrides('policy.fallback={ body = "x" }', "policy.on_invalid_output=fallback")
    assert sc.policy.fallback == {"body": "x"}
    assert sc.policy.on_invalid_output == "fallback"


def test_override_bare_word_is_a_string() -> None:
    sc = with_overrides("policy.feedback_history=latest")
    assert sc.policy.feedback_history == "latest"


def test_override_model_name() -> None:
    assert with_overrides("model.name=gpt-x").model.name == "gpt-x"


def test_override_quoted_string_and_bool_and_float() -> None:
    sc = with_overrides(
        'model.name="4"', "policy.keep_failed_attempts=false", "policy.validator_timeout_s=0.5"
    )
    assert (sc.model.name, sc.policy.keep_failed_attempts) == ("4", False)
    assert sc.policy.validator_timeout_s == 0.5


def test_override_value_may_contain_equals_signs() -> None:
    sc = with_overrides("prompt.system=a=b")
    assert sc.prompt.system == "a=b"


def test_later_override_wins() -> None:
    assert with_overrides("policy.max_steps=4", "policy.max_steps=7").policy.max_steps == 7


def test_override_creates_a_missing_section() -> None:
    sc = with_overrides('output.schema={ type = "object" }')
    assert sc.output is not None and sc.output.output_schema == {"type": "object"}


def test_override_parses_like_toml() -> None:
    assert parse_override("policy.max_attempts=5") == (["policy", "max_attempts"], 5)
    assert parse_override("model.name=gpt-x") == (["model", "name"], "gpt-x")
    assert parse_override("a.b=[1, 2]") == (["a", "b"], [1, 2])


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("policy.fallback={ body = ", "table"),
        ("validators=[1, ", "array"),
        ("a.b=[INST] hi", "array"),
    ],
)
def test_a_broken_inline_table_or_array_is_bad_input_not_text(text: str, kind: str) -> None:
    """A value that starts like a TOML table or array and does not parse is a mistake: taken
    as text, the turn ran on a string the user never meant (and exited 0)."""
    with pytest.raises(ScenarioError) as raised:
        parse_override(text)
    assert str(raised.value).startswith(f"--set {text!r}: not a TOML {kind}: ")
    assert str(raised.value).endswith("(quote it to set text)")


def test_text_that_starts_with_a_bracket_is_set_quoted() -> None:
    assert parse_override('prompt.user="[INST] hi"') == (["prompt", "user"], "[INST] hi")
    assert parse_override("prompt.user=hi [there]") == (["prompt", "user"], "hi [there]")


def test_apply_overrides_sets_nested_keys() -> None:
    data = {"policy": {"max_attempts": 3}}
    assert apply_overrides(data, ["policy.max_steps=9"]) == {
        "policy": {"max_attempts": 3, "max_steps": 9}
    }


def test_bad_override_value_names_the_field() -> None:
    assert set_error("policy.max_attempts=zero") == (
        "test.toml: policy.max_attempts: Input should be a valid integer "
        "(from --set policy.max_attempts=zero)"
    )
    assert set_error("policy.max_attempts=0") == (
        "test.toml: policy.max_attempts: Input should be greater than or equal to 1"
        " (from --set policy.max_attempts=0)"
    )


def test_override_of_an_unknown_key() -> None:
    assert set_error("policy.retries=2") == (
        "test.toml: policy.retries: Extra inputs are not permitted (from --set policy.retries=2)"
    )


@pytest.mark.parametrize("text", ["policy.max_attempts", "=3", " =3", ""])
def test_malformed_override(text: str) -> None:
    assert set_error(text) == f"--set {text!r}: expected SECTION.KEY=VALUE"


def test_override_through_a_non_table() -> None:
    assert set_error("name.x=1") == "--set 'name.x=1': 'name' is not a table"


def test_load_scenario_applies_overrides(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, MINIMAL), ["policy.max_attempts=2", "model.name=m"])
    assert (sc.policy.max_attempts, sc.model.name) == (2, "m")


def test_bad_override_on_a_file_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    assert load_error(path, ["policy.on_step_cap=retry"]) == (
        f"{path}: policy.on_step_cap: Input should be 'raise' or 'fallback' (got 'retry')"
        " (from --set policy.on_step_cap=retry)"
    )


def test_overrides_do_not_mutate_the_input() -> None:
    data = copy.deepcopy(BASE) | {"policy": {"max_attempts": 3}}
    before = copy.deepcopy(data)
    assert with_overrides("policy.max_attempts=5", data=data).policy.max_attempts == 5
    assert data == before
