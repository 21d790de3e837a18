"""An OTLP/HTTP trace receiver on 127.0.0.1 for tests: it decodes each request with the
official protobuf definitions (``opentelemetry-proto``) and keeps it as OTLP/JSON."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from inspector.formats.otlp_json import from_protobuf_dict


@dataclass
class Received:
    documents: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    status: int = 200  # what the receiver answers


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """(base URL, what arrived)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.paths.append(self.path)
            received.headers.append({k.lower(): v for k, v in self.headers.items()})
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            received.documents.append(from_protobuf_dict(MessageToDict(request)))
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(received.status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
