"""Against a real collector: Arize Phoenix, started on 127.0.0.1 from its PyPI package, receives
``export --otlp-endpoint`` and gives the spans back through its own client — the tree, the GenAI
attributes and the evaluation events.

Optional (``make test-otel``, marker ``otel_phoenix``): it needs the Phoenix server
(``PHOENIX_SERVER``, the ``phoenix`` executable ``make test-otel`` installs into its own
virtualenv) and ``arize-phoenix-client`` here; without them it is skipped.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from inspector.cli import main
from inspector.formats import genai as g
from inspector.formats.otlp_json import stable_id
from tests.formats.conftest import Capsys, record_demo

pytestmark = [pytest.mark.otel_phoenix, pytest.mark.timeout(300)]
SERVER = os.environ.get("PHOENIX_SERVER", "")
STARTUP_S = 120  # how long to wait for the server to listen (a readiness wait, not an assertion)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not SERVER or not Path(SERVER).exists():
        pytest.skip("Arize Phoenix is not installed (make test-otel installs it)")
    pytest.importorskip("phoenix.client", reason="arize-phoenix-client is not installed")
    port = _free_port()
    env = dict(
        os.environ,
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(_free_port()),
        PHOENIX_WORKING_DIR=str(tmp_path_factory.mktemp("phoenix")),
        PHOENIX_TELEMETRY_ENABLED="false",
    )
    log = tmp_path_factory.mktemp("phoenix-log") / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen([SERVER, "serve"], env=env, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Phoenix did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """Phoenix may hand attributes back nested by their dots: flattened again."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: value}


def test_phoenix_shows_the_tree_attributes_and_evaluations(
    phoenix: str, capsys: Capsys, db: Path
) -> None:
    from phoenix.client import Client

    record = record_demo(capsys, db, "retry-feedback")
    run_id = str(record["run_id"])
    assert main(["export", run_id, "--otlp-endpoint", phoenix, "--db", str(db)]) == 0
    capsys.readouterr()
    trace_id = stable_id(f"trace:{run_id}", 16)
    expected = 1 + len(record["steps"]) + sum(len(s["tool_results"]) for s in record["steps"])  # type: ignore[union-attr, misc]
    client = Client(base_url=phoenix)
    spans: list[Any] = []
    for _ in range(60):  # ingestion is asynchronous: poll until every span is there
        spans = client.spans.get_spans(project_identifier="default", trace_ids=[trace_id])
        if len(spans) >= expected:
            break
        time.sleep(0.5)
    assert len(spans) == expected
    by_id = {s["context"]["span_id"]: s for s in spans}
    (root,) = [s for s in spans if not s.get("parent_id")]
    assert root["name"] == "invoke_agent retry-feedback"
    assert {s.get("parent_id") for s in spans if s is not root} == {root["context"]["span_id"]}
    attrs = {sid: _flat(s.get("attributes") or {}) for sid, s in by_id.items()}
    operations = sorted(a[g.OPERATION] for a in attrs.values())
    assert operations.count("chat") == len(record["steps"])  # type: ignore[arg-type]
    assert attrs[root["context"]["span_id"]][g.ns("run_id")] == run_id
    failed = [
        s for s in spans if attrs[s["context"]["span_id"]].get(g.ns("step.status"))
        == "failed_validation"
    ]  # fmt: skip
    assert failed
    events = failed[0].get("events") or []
    evaluations = [e for e in events if e["name"] == g.EVALUATION_EVENT]
    assert evaluations
    labels = {_flat(e.get("attributes") or {})[g.EVALUATION_LABEL] for e in evaluations}
    assert "fail" in labels
    messages = attrs[failed[0]["context"]["span_id"]][g.INPUT_MESSAGES]
    assert json.loads(messages) if isinstance(messages, str) else messages
