"""A small real HTTP server on 127.0.0.1, in a thread, serving queued replies.

Each reply can stream its body in slow chunks (chunked transfer encoding), break the connection
off mid-body, or stop (before its first byte or after some) and wait for the client to hang up.
Every request received is recorded, including whether the client closed the connection while
its reply was streaming or held.

    with LoopbackServer() as server:
        server.queue(sse_reply(body, chunk_size=64, chunk_delay_s=0.01))
        ... point ModelConfig.base_url at server.base_url ...
        server.received[0].json()
"""

from __future__ import annotations

import contextlib
import json
import queue
import select
import socket
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    chunk_size: int | None = None  # stream the body in slices of this many bytes (chunked)
    chunk_delay_s: float = 0.0  # pause before each slice
    cut_after: int | None = None  # drop the connection after this many body bytes
    hold_after: int | None = None  # after this many bytes, send nothing until the client leaves
    hold_before: bool = False  # send nothing at all (not even the status) until the client leaves
    release: threading.Event | None = None  # with hold_before: answer once it is set
    close_connection: bool = False  # answer with Connection: close


def json_reply(data: Any, status: int = 200, **kwargs: Any) -> Reply:
    return Reply(status=status, body=json.dumps(data).encode(), **kwargs)


def sse_reply(body: bytes | str, **kwargs: Any) -> Reply:
    raw = body.encode() if isinstance(body, str) else body
    return Reply(body=raw, content_type="text/event-stream", **kwargs)


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    disconnected: threading.Event = field(default_factory=threading.Event)
    body_sent: int = 0  # bytes of the reply's body written (and flushed) so far

    def json(self) -> Any:
        return json.loads(self.body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse is real
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        received = Received(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        owner = self.server.owner
        with owner.lock:
            owner.received.append(received)
        try:
            reply = owner.replies.get_nowait()
        except queue.Empty:
            reply = json_reply({"error": {"message": "loopback: no reply queued"}}, status=418)
        try:
            self._send(reply, received)
        except (BrokenPipeError, ConnectionResetError):
            received.disconnected.set()
            self.close_connection = True

    def _send(self, reply: Reply, received: Received) -> None:
        if reply.hold_before and not self._held(received, reply.release):
            return
        streamed = reply.chunk_size is not None or reply.cut_after is not None
        streamed = streamed or reply.hold_after is not None
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        if reply.close_connection:
            self.send_header("connection", "close")
            self.close_connection = True
        if not streamed:
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
            received.body_sent = len(reply.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        body = reply.body
        limit = len(body)
        for stop in (reply.cut_after, reply.hold_after):
            if stop is not None:
                limit = min(limit, stop)
        size = reply.chunk_size or max(limit, 1)
        sent = 0
        while sent < limit:
            if reply.chunk_delay_s and self._client_gone(reply.chunk_delay_s):
                received.disconnected.set()
                self.close_connection = True
                return
            piece = body[sent : min(sent + size, limit)]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            sent += len(piece)
            received.body_sent = sent
        if reply.cut_after is not None:
            self._drop()
            return
        if reply.hold_after is not None:
            self._held(received)
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _held(self, received: Received, release: threading.Event | None = None) -> bool:
        """Sends nothing until ``release`` is set (True: go on), or the client leaves or the
        server stops (False: the connection is dropped)."""
        while not self.server.owner.stopping.is_set():
            if release is not None and release.is_set():
                return True
            if self._client_gone(0.01 if release is not None else 0.05):
                received.disconnected.set()
                break
        self._drop()
        return False

    def _client_gone(self, wait_s: float) -> bool:
        """Waits up to ``wait_s``; True when the client closed its end meanwhile."""
        sock = self.connection
        readable, _, _ = select.select([sock], [], [], wait_s)
        if not readable:
            return False
        try:
            return sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # listen backlog: the proxy tests connect 50 clients at once
    owner: LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up on a kept-alive connection is normal here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LoopbackServer:
    def __init__(self) -> None:
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def queue(self, *replies: Reply) -> None:
        for reply in replies:
            self.replies.put(reply)

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
