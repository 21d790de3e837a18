"""Hostile user code from the command line, as a user runs it (a real process: what user code
writes to file descriptor 1 would land in ``--json`` otherwise). Each behaviour is a python
validator and a tool function of one scenario; every run ends (bounded by the subprocess
timeout), with the right verdict and tool error, clean JSON on stdout, and no worker process
left behind. Ctrl+C during a hanging tool ends the run at once, cancelled, its worker killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from inspector.core.records import RunRecord
from inspector.core.revalidate import Revalidation
from inspector.core.worker.ending import died
from inspector.core.worker.pool import DEFAULT_MEMORY_MB

HOSTILE_PY = """
import asyncio, os, sys, time
from pathlib import Path

def raises(*args, **kwargs):
    raise ValueError("boom")

def hangs(*args, **kwargs):
    while True:
        pass

async def hangs_async(*args, **kwargs):
    time.sleep(1000)

def exits(*args, **kwargs):
    sys.exit(3)

def hard_exit(*args, **kwargs):
    os._exit(7)

def allocates(*args, **kwargs):
    return len(bytearray(20 * 2**30))

def prints(*args, **kwargs):
    print("x" * 100_000_000)
    os.write(1, b"native\\n")
    return None

def waits(*args, **kwargs):
    Path(__file__).with_name("started").touch()
    time.sleep(60)
"""

EXPECTED = {
    "raises": "ValueError: boom",
    "hangs": "timed out after 0.5 s",
    "hangs_async": "timed out after 0.5 s",
    "exits": "SystemExit: 3",
    "hard_exit": died(7),
    "allocates": f"MemoryError: over the user-code memory limit ({DEFAULT_MEMORY_MB} MB)",
}


def scenario(folder: Path, function: str, *, timeout_s: float = 0.5) -> Path:
    (folder / "hostile.py").write_text(HOSTILE_PY, encoding="utf-8")
    path = folder / "hostile.toml"
    path.write_text(
        textwrap.dedent(
            f"""\
            name = "hostile"
            [prompt]
            user = "hi"
            [[tools]]
            name = "t"
            function = "hostile.py:{function}"
            [[validators]]
            kind = "python"
            function = "hostile.py:{function}"
            [policy]
            max_attempts = 1
            validator_timeout_s = {timeout_s}
            tool_timeout_s = {timeout_s}
            [[script]]
            tool_calls = [{{ name = "t", arguments = {{}} }}]
            [[script]]
            text = "done"
            """
        ),
        encoding="utf-8",
    )
    return path


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "inspector", *args]


def workers_of(pid: int) -> list[int]:
    """Live user-code workers started by process ``pid`` (their command line names it)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if b"inspector.core.worker.child" in argv and str(pid).encode() in argv and state != "Z":
            found.append(int(entry))
    return found


@pytest.mark.parametrize("function", sorted(EXPECTED))
def test_hostile_code_from_the_cli(tmp_path: Path, function: str) -> None:
    path = scenario(tmp_path, function)
    with subprocess.Popen(
        cli("run", str(path), "--json", "--db", str(tmp_path / "runs.sqlite3")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    record = RunRecord.model_validate(json.loads(out))
    # A broken validator ends the turn as an error of the validator (on_validator_error = "fail").
    assert (record.status, record.termination) == ("error", "validator_error")
    assert record.steps[1].status == "validator_error"
    [result] = record.steps[0].tool_results
    assert result.error == EXPECTED[function]
    [verdict] = record.steps[1].verdicts
    assert (verdict.status, verdict.reason) == ("error", EXPECTED[function])
    assert err == ""
    assert workers_of(proc.pid) == []


def test_prints_are_captured_and_never_reach_json(tmp_path: Path) -> None:
    path = scenario(tmp_path, "prints", timeout_s=30)
    db = str(tmp_path / "runs.sqlite3")
    done = subprocess.run(
        cli("run", str(path), "--json", "--db", db),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    record = RunRecord.model_validate(json.loads(done.stdout))
    [result] = record.steps[0].tool_results
    [verdict] = record.steps[1].verdicts
    for captured in (result.captured, verdict.captured):
        assert captured is not None
        assert captured.startswith("x" * 1000)
        assert captured.endswith("more characters not kept]")
    again = subprocess.run(
        cli("revalidate", record.run_id, "--json", "--db", db),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    revalidation = Revalidation.model_validate(json.loads(again.stdout))
    assert (revalidation.verdicts[0].captured or "").startswith("x" * 1000)

    text = subprocess.run(
        cli("run", str(path), "--db", db), capture_output=True, text=True, timeout=120, check=False
    )
    assert "↳ printed by validator prints:" in text.stdout
    assert "↳ printed by tool t:" in text.stdout


def test_ctrl_c_during_a_hanging_tool_kills_its_worker_at_once(tmp_path: Path) -> None:
    path = scenario(tmp_path, "waits", timeout_s=60)
    with subprocess.Popen(
        cli("run", str(path), "--json", "--db", str(tmp_path / "runs.sqlite3")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the tool never started"
            time.sleep(0.02)
        [worker] = workers_of(proc.pid)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)  # the tool would sleep for 60 s
    record = RunRecord.model_validate(json.loads(out))
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    assert proc.returncode == 1
    assert not Path(f"/proc/{worker}").exists() or workers_of(proc.pid) == []
