"""Records the server's answers to ``wire_cases.CASES`` into tests/providers/fixtures/llamacpp/.

    .venv/bin/python -m tests.local_model.capture        # starts and stops its own server

Per case: ``NAME.request.json`` and ``NAME.response.json`` (or ``.sse`` when streamed), bodies as
sent and received (the server's own file paths inside error messages are kept as they were);
``cases.json`` lists each case's HTTP status, content type and what it shows.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from inspector import localmodel
from tests.local_model.wire_cases import CASES, WireCase

FIXTURES = Path(__file__).resolve().parent.parent / "providers" / "fixtures" / "llamacpp"


def send(url: str, case: WireCase) -> httpx.Response:
    """One case on a fresh connection: an empty stream leaves the kept-alive one dead."""
    with httpx.Client(timeout=60) as client:
        return client.post(f"{url}/chat/completions", json=case.body)


def capture(url: str, out: Path) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    index: list[dict[str, Any]] = []
    for case in CASES:
        response = send(url, case)
        kind = "text/event-stream" in response.headers.get("content-type", "")
        suffix = "sse" if kind else "json"
        (out / f"{case.name}.request.json").write_text(
            json.dumps(case.body, indent=2) + "\n", encoding="utf-8"
        )
        (out / f"{case.name}.response.{suffix}").write_bytes(response.content)
        index.append(
            {
                "name": case.name,
                "status": response.status_code,
                "content_type": response.headers.get("content-type", ""),
                "response": f"{case.name}.response.{suffix}",
                "what": case.what,
            }
        )
        print(f"{case.name}: {response.status_code} {len(response.content)} bytes")
    (out / "cases.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return index


def main() -> int:
    model = localmodel.check_installed()
    with tempfile.TemporaryDirectory() as home:
        server = localmodel.start(port=0, home=Path(home), model=model, progress=print)
        try:
            capture(server.base_url, FIXTURES)
        finally:
            localmodel.stop(Path(home))
    return 0


if __name__ == "__main__":
    sys.exit(main())
