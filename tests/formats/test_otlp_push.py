"""``export --otlp-endpoint``: the SDK's OTLP/HTTP exporter sends the very spans the file export
writes, to a loopback receiver decoding them with the official protobuf definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.formats.otlp_json import spans
from inspector.formats.otlp_push import parse_headers, traces_url
from tests.formats.conftest import Capsys, record_demo
from tests.formats.otlp_receiver import otlp_receiver


def test_pushed_spans_equal_the_exported_file_and_carry_the_headers(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    record = record_demo(capsys, db, "retry-feedback")
    run_id = str(record["run_id"])
    path = tmp_path / "run.otlp.json"
    main(["export", run_id, "--format", "otel", "--out", str(path), "--db", str(db)])
    capsys.readouterr()
    with otlp_receiver() as (url, received):
        code = main(
            ["export", run_id, "--otlp-endpoint", url, "--db", str(db),
             "--header", "Authorization=Basic c2VjcmV0", "--header", "x-tenant=a=b"]
        )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    assert received.paths == ["/v1/traces"]
    assert received.headers[0]["authorization"] == "Basic c2VjcmV0"
    assert received.headers[0]["x-tenant"] == "a=b"
    assert "c2VjcmV0" not in captured.out + captured.err  # header values are never printed
    assert f"sent run {run_id}" in captured.err
    file_spans = list(spans(json.loads(path.read_text())))
    assert list(spans(received.documents[0])) == file_spans
    sent_resource = received.documents[0]["resourceSpans"][0]["resource"]["attributes"]
    assert {"key": "service.name", "value": {"stringValue": "agent-inspector"}} in sent_resource


def test_a_refusing_collector_is_one_line_and_exit_1(capsys: Capsys, db: Path) -> None:
    record = record_demo(capsys, db, "empty-final")
    with otlp_receiver() as (url, received):
        received.status = 400  # not retryable: the exporter gives up at once
        code = main(["export", str(record["run_id"]), "--otlp-endpoint", url, "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("agent-inspector: error: export: ") and "did not accept" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://localhost:4318", "http://localhost:4318/v1/traces"),
        ("http://localhost:4318/", "http://localhost:4318/v1/traces"),
        ("https://cloud.langfuse.com/api/public/otel/v1/traces",
         "https://cloud.langfuse.com/api/public/otel/v1/traces"),
    ],
)  # fmt: skip
def test_a_base_endpoint_gets_the_traces_path(endpoint: str, url: str) -> None:
    assert traces_url(endpoint) == url


def test_bad_endpoint_and_header_are_bad_input(capsys: Capsys, db: Path) -> None:
    record = record_demo(capsys, db, "empty-final")
    run_id = str(record["run_id"])
    assert main(["export", run_id, "--otlp-endpoint", "localhost:4318", "--db", str(db)]) == 2
    assert "is not an http(s) URL" in capsys.readouterr().err
    args = ["export", run_id, "--otlp-endpoint", "http://127.0.0.1:9", "--header", "sk-secret"]
    assert main([*args, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "NAME=VALUE" in err and "sk-secret" not in err
    assert parse_headers(["a=1", " b =x=y"]) == {"a": "1", "b": "x=y"}
