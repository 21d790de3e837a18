"""JSON Schema ``$ref`` resolves inside the schema only: never over HTTP, never from a file —
at load time a reference outside is one line, and the compiled validators cannot fetch one."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from referencing.exceptions import Unresolvable

from inspector.core.errors import ScenarioError
from inspector.core.schema import schema_errors, schema_problem
from inspector.core.validators import compile_validators
from tests.core.test_values_rule import load


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []  # noqa: RUF012  (class-level on purpose: the handler is per request)

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Counter)
    _Counter.hits = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/s.json", _Counter.hits
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "next-to-it.json"
    path.write_text('{"type": "string"}')
    return path


def test_inside_references_resolve() -> None:
    schema = {
        "$defs": {"body": {"type": "string", "maxLength": 3}},
        "type": "object",
        "properties": {"body": {"$ref": "#/$defs/body"}},
    }
    assert schema_problem(schema) is None
    assert schema_errors(schema, {"body": "toolong"}) == ["body: 'toolong' is too long"]
    with_ids = {
        "$id": "https://example.com/root.json",
        "$defs": {"name": {"$id": "name.json", "type": "string"}},
        "properties": {"n": {"$ref": "name.json"}},
    }
    assert schema_problem(with_ids) is None
    assert schema_errors(with_ids, {"n": 1}) == ["n: 1 is not of type 'string'"]


def test_outside_references_are_a_load_error_and_never_fetched(
    server: tuple[str, list[str]], secret_file: Path
) -> None:
    url, hits = server
    for ref in (url, secret_file.as_uri(), secret_file.name, "other.json#/x"):
        problem = schema_problem({"$ref": ref})
        assert problem is not None and "points outside the schema" in problem
        with pytest.raises(ScenarioError, match="points outside the schema"):
            load({"output": {"schema": {"type": "object", "properties": {"a": {"$ref": ref}}}}})
        sc = load({"validators": [{"kind": "json_schema", "schema": {"$ref": ref}}]})
        with pytest.raises(ScenarioError) as info:
            compile_validators(sc.validators, Path("."), source="v.toml")
        assert str(info.value).startswith("v.toml: validators[0].schema: not a valid JSON Schema")
    assert hits == []


def test_a_compiled_schema_cannot_fetch_either(
    server: tuple[str, list[str]], secret_file: Path
) -> None:
    """A schema that skipped the load check (an old recording) fails to resolve, offline."""
    url, hits = server
    for ref in (url, secret_file.as_uri()):
        with pytest.raises(Unresolvable):
            schema_errors({"$ref": ref}, "x")
    assert hits == []


def test_revalidate_and_offline_replay_never_fetch(
    server: tuple[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspector.cli import main

    url, hits = server
    db = str(tmp_path / "runs.sqlite3")
    assert main(["run", "demo:empty-final", "--db", db, "--json"]) == 0
    run_id = capsys.readouterr().out.split('"run_id": "', 1)[1].split('"', 1)[0]
    validators = tmp_path / "v.toml"
    validators.write_text(
        f'[[validators]]\nkind = "json_schema"\nschema = {{ "$ref" = "{url}" }}\n'
    )
    assert main(["revalidate", run_id, "--validators", str(validators), "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "points outside the schema" in err
    override = f'validators=[{{kind="json_schema", schema={{"$ref"="{url}"}}}}]'
    assert main(["replay", run_id, "--offline", "--set", override, "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "points outside the schema" in err
    assert hits == []
