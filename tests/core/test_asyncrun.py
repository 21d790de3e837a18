"""Issue 18 item 1: a finished turn's record is never the result of the task ``asyncio.run``
drives, so asyncio's SIGINT check on the way out cannot format its repr (O(steps x history))."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from inspector import cli
from inspector.core import asyncrun
from inspector.core.records import RunRecord


def test_run_small_gives_the_value_but_the_task_returns_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    results: list[Any] = []
    real_run = asyncio.run

    def spy(coro: Any) -> Any:
        results.append(real_run(coro))
        return results[-1]

    monkeypatch.setattr(asyncrun.asyncio, "run", spy)

    async def big() -> list[int]:
        return list(range(1000))

    assert asyncrun.run_small(big()) == list(range(1000))
    assert results == [None]


def test_run_small_raises_what_the_coroutine_raises() -> None:
    async def fails() -> None:
        raise ValueError("nope")

    with pytest.raises(ValueError, match="nope"):
        asyncrun.run_small(fails())


def _tool_turn(path: Path, steps: int) -> Path:
    lines = [
        'name = "long"',
        '[model]\nprovider = "scripted"\nname = "demo"\nstream = false',
        '[prompt]\nuser = "Look things up."',
        '[[tools]]\nname = "lookup"\ndescription = "Search"\nresult = "found it"',
        f'[policy]\nmax_steps = {steps + 1}\nfinal_step = "none"',
    ]
    for i in range(steps - 1):
        lines.append(
            f'[[script]]\ntool_calls = [{{ name = "lookup", arguments = {{ q = "{i}" }} }}]'
        )
    lines.append('[[script]]\ntext = "done"')
    path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["run", "replay"])
def test_a_long_run_is_never_repred(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = tmp_path / "runs.sqlite3"
    scenario = _tool_turn(tmp_path / "long.toml", 60)
    assert cli.main(["run", str(scenario), "--db", str(db), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    reprs: list[str] = []

    def counting_repr(self: RunRecord) -> str:
        reprs.append(self.run_id)
        return "RunRecord(...)"

    monkeypatch.setattr(RunRecord, "__repr__", counting_repr)
    argv = ["run", str(scenario)] if command == "run" else ["replay", run_id, "--offline"]
    assert cli.main([*argv, "--db", str(db)]) == 0
    assert reprs == []
