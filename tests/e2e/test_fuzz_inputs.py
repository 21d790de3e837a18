"""Property-based fuzzing of the CLI's input contract (DESIGN §5): whatever a scenario file or a
``--set`` value holds, ``agent-inspector run`` either runs normally (exit 0/1, a JSON record) or
says what is wrong in one line (exit 2) — never a traceback, never another exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from inspector.cli import main

BASE: dict[str, Any] = {
    "name": "fuzz",
    "model": {"provider": "scripted", "name": "demo", "stream": False},
    "prompt": {"system": "s", "user": "hi"},
    "tools": [{"name": "lookup", "result": "ok"}],
    "validators": [
        {"kind": "max_length", "max": 40},
        {"kind": "regex_absent", "pattern": "[*]"},
        {"kind": "json_schema", "schema": {"type": "string"}},
    ],
    "policy": {"max_attempts": 2, "max_steps": 4},
    "script": [
        {"tool_calls": [{"name": "lookup", "arguments": {}}]},
        {"text": "**no**"},
        {"text": '"yes"'},  # JSON text: every validator passes
    ],
}
# Where mutations land: every section, typed fields, list items, and names that do not exist.
PATHS = [
    "name", "description", "unknown",
    "model", "model.name", "model.temperature", "model.max_tokens", "model.stream",
    "model.timeout_s", "model.headers", "model.params", "model.safe_headers",
    "prompt", "prompt.system", "prompt.user", "prompt.messages",
    "output", "output.schema", "tools", "tools.0", "tools.0.name", "tools.0.parameters",
    "tools.0.function", "validators", "validators.0", "validators.0.max", "validators.0.kind",
    "validators.1.pattern", "validators.1.ignore_case", "validators.2.schema",
    "validators.0.function", "validators.0.when", "validators.0.field",
    "policy", "policy.max_attempts", "policy.max_steps", "policy.feedback_history",
    "policy.feedback_role", "policy.keep_failed_attempts", "policy.validator_timeout_s",
    "policy.tool_timeout_s", "policy.on_empty_final", "policy.fallback", "policy.output_mode",
    "policy.final_step", "policy.feedback_builder", "policy.fallback_function",
    "script", "script.0", "script.0.text", "script.0.tool_calls", "script.1.usage",
    "script.1.empty", "script.1.final", "script.2.refusal",
]  # fmt: skip

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["x{99999999}", "validators.py:check", "../../etc/passwd", "\x00", "tool"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    node: Any = data
    parts = path.split(".")
    for part in parts[:-1]:
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                return
            node = node[int(part)]
        else:
            node = node.setdefault(part, {})
        if not isinstance(node, dict | list):
            return
    last = parts[-1]
    if isinstance(node, list):
        if last.isdigit() and int(last) < len(node):
            node[int(last)] = value
    else:
        node[last] = value


def _check(argv: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code in (0, 1, 2), (code, err)
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("agent-inspector"), err
    else:
        record = json.loads(out)
        assert record["status"] in ("succeeded", "fallback", "failed", "error")
    return code


FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(mutations=st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=3))
def test_fuzzed_scenario_files(
    mutations: list[tuple[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(json.dumps(BASE))
    for path, value in mutations:
        _set(data, path, value)
    try:
        text = tomlkit.dumps(data)
    except Exception:  # a value TOML cannot hold (tomlkit refuses it): nothing to test
        assume(False)
        raise
    scenario = tmp_path / "fuzz.toml"
    scenario.write_text(text, encoding="utf-8")
    _check(["run", str(scenario), "--json", "--db", str(tmp_path / "runs.sqlite3")], capsys)


@FUZZ
@given(
    sets=st.lists(
        st.tuples(
            st.sampled_from(PATHS),
            st.one_of(
                # Any text argv can hold: no NUL; lone surrogates are undecodable argv bytes.
                st.text(alphabet=st.characters(exclude_characters="\x00"), max_size=16),
                st.sampled_from(["true", "inf", "nan", "-1", "1e309", "[1, {a=2}]", '"x"', "{"]),
            ),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_fuzzed_set_values(
    sets: list[tuple[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "base.toml"
    if not scenario.exists():
        scenario.write_text(tomlkit.dumps(BASE), encoding="utf-8")
    argv = ["run", str(scenario), "--json", "--db", str(tmp_path / "runs.sqlite3")]
    for path, raw in sets:
        argv += ["--set", f"{path}={raw}"]
    _check(argv, capsys)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(content=st.binary(max_size=200))
def test_fuzzed_file_bytes(
    content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "bytes.toml"
    scenario.write_bytes(content)
    assert _check(["run", str(scenario), "--db", str(tmp_path / "r.sqlite3")], capsys) == 2


def test_the_base_scenario_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The fuzzers start from a scenario that runs (so mutations reach the engine)."""
    scenario = tmp_path / "base.toml"
    scenario.write_text(tomlkit.dumps(BASE), encoding="utf-8")
    argv = ["run", str(scenario), "--json", "--db", str(tmp_path / "runs.sqlite3")]
    assert _check(argv, capsys) == 0


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.text(alphabet=st.characters(exclude_characters="/"), min_size=1, max_size=300))
def test_fuzzed_db_paths(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Any file name under a folder (no "/": the fuzzer stays inside it) as ``--db``: the runs
    list, or one line and exit 2."""
    assume(name not in (".", ".."))
    code = main(["runs", "--json", "--db", str(tmp_path / name)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if code == 0:
        assert json.loads(out) == []  # a new (or empty) store
    else:
        assert code == 2 and err.count("\n") == 1 and err.startswith("agent-inspector"), err
