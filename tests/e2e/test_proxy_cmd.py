"""`agent-inspector proxy` as a user runs it: bad input is one line (exit 2); a started proxy
says where to point clients, records a call, and on Ctrl+C ends its runs and exits 0."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from inspector.cli import main
from inspector.store import Store
from tests.providers.fixture_paths import wire_folder
from tests.providers.loopback import LoopbackServer, Reply


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--upstream", "api.openai.com/v1"], "--upstream 'api.openai.com/v1': expected an http"),
        (["--upstream-anthropic", "ftp://x"], "--upstream-anthropic 'ftp://x': expected an http"),
        (["--port", "70000"], "--port 70000: expected 0-65535"),
        (["--idle-timeout", "0"], "--idle-timeout 0.0: expected a positive number"),
        (["--validators", "missing.toml"], "missing.toml: cannot read"),
        (["--validators", "rules.txt"], "rules.txt: expected a .toml file with [[validators]]"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["proxy", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and problem in err and "Traceback" not in err


def test_a_taken_port_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["proxy", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in err and err.count("\n") == 1


@pytest.fixture
def upstream() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def start(*args: str) -> tuple[subprocess.Popen[str], str]:
    """The proxy in its own process, and its URL (read from its first line)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    process = subprocess.Popen(
        [sys.executable, "-m", "inspector", "proxy", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("agent-inspector proxy on http://"), first + process.stderr.read()  # type: ignore[union-attr]
    return process, first.split(" on ", 1)[1].strip()


def test_the_proxy_records_a_call_and_stops_cleanly(
    upstream: LoopbackServer, tmp_path: Path
) -> None:
    body = (wire_folder("openai-chat") / "text-basic-gpt35.response.json").read_bytes()
    upstream.queue(Reply(body=body))
    db = tmp_path / "runs.sqlite3"
    process, url = start("--upstream", upstream.base_url, "--db", str(db))
    try:
        response = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "Hi"}]},
            headers={"authorization": "Bearer sk-cli-test-key-0123456789"},
        )
        assert response.content == body
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert " succeeded (stop), 1 step(s)" in out
    assert f"runs are in {db}" in out
    with Store.open(db) as store:
        (summary,) = store.runs()
        record = store.load(summary.run_id)
    assert (record.via, record.status, len(record.steps)) == ("proxy", "succeeded", 1)


def test_binding_beyond_this_machine_warns(tmp_path: Path) -> None:
    process, _ = start("--host", "0.0.0.0", "--db", str(tmp_path / "runs.sqlite3"))
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "warning: --host 0.0.0.0: the proxy is reachable from other machines" in err


def test_a_proxied_run_works_with_the_other_commands(
    upstream: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = (wire_folder("openai-chat") / "text-basic-gpt35.response.json").read_bytes()
    upstream.queue(Reply(body=body))
    db = tmp_path / "runs.sqlite3"
    rules = tmp_path / "rules.toml"
    rules.write_text('[[validators]]\nkind = "max_length"\nmax = 20\n')
    process, url = start(
        "--upstream", upstream.base_url, "--db", str(db), "--validators", str(rules)
    )
    try:
        httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "Hi"}]},
        )
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    assert main(["runs", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    assert "proxy" in listed and "failed" in listed
    with Store.open(db) as store:
        (summary,) = store.runs()
    assert main(["revalidate", summary.run_id, "--db", str(db)]) == 1  # still too long
    assert "no verdict flips" in capsys.readouterr().out
    lax = tmp_path / "lax.toml"
    lax.write_text('[[validators]]\nkind = "max_length"\nmax = 500\n')
    assert main(["revalidate", summary.run_id, "--db", str(db), "--validators", str(lax)]) == 0
    assert "fail → pass" in capsys.readouterr().out
    page = tmp_path / "run.html"
    assert (
        main(["export", summary.run_id, "--db", str(db), "--format", "html", "--out", str(page)])
        == 0
    )
    assert "Opentelemetry" in page.read_text()
