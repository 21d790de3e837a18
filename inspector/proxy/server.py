"""``RecordingProxy``: the local HTTP server OpenAI- and Anthropic-compatible clients point their
base URL at. Each call is forwarded upstream and its reply streamed back unchanged, chunk by
chunk as it arrives, while ``RunBook`` publishes it as the engine's events.

A Qt-free object with ``start()`` / ``stop()`` / ``url`` and an event stream (the ``sink``), so
the command line runs it with ``asyncio.run`` and the window can host it on its own loop.

Server: aiohttp (see docs/proxy.md for why): it runs inside any running asyncio loop (qasync's
too) without owning signals, parses HTTP in C, and with ``handler_cancellation`` cancels the
handler the moment a client hangs up, which closes the upstream stream at once.

A hang-up reaches the handler one of two ways, sometimes both, one after the other: a write to
the client fails (the reply was still streaming), or the handler is cancelled (at whichever
``await`` it was: waiting for the upstream's headers or its next chunk, or already closing the
upstream). Either ends the step ``cancelled`` once; closing the upstream runs as a task of its
own, so the second notice cannot cut it short and leave the upstream connection open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
from aiohttp import web

from inspector.core.errors import ProviderError
from inspector.core.events import EventSink, isolate
from inspector.core.records import RawExchange, StepRequest, StepResponse
from inspector.providers.http import (
    redact_headers,
    redact_url,
    secrets_of,
    transport_error,
    verify_for,
)
from inspector.proxy.capture import ReplyCapture
from inspector.proxy.normalize import Api, model_of, read_request
from inspector.proxy.runs import Call, RunBook
from inspector.proxy.upstream import (
    RUN_HEADER,
    Upstreams,
    api_of,
    request_headers,
    response_headers,
)
from inspector.proxy.verdicts import ValidatorFile

__all__ = ["MODEL_PATHS", "RecordingProxy"]

MODEL_PATHS = frozenset({"/v1/chat/completions", "/v1/messages"})
_EMPTY = StepRequest(system="", messages=[])
# How long stop() lets calls in flight go on before cancelling them. aiohttp's default (60 s)
# would hold stop() as long as a silent upstream keeps a call waiting for its answer.
_STOP_GRACE_S = 0.5


def _error_body(api: Api, status: int, message: str) -> bytes:
    """An error in the shape the client's SDK reads its message from."""
    if api == "anthropic":
        kind = "invalid_request_error" if status == 400 else "api_error"
        data: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        data = {"error": {"message": message, "type": "agent_inspector_proxy_error"}}
    return json.dumps(data).encode()


class _ClientGone(Exception):
    """Writing to the client failed: it hung up mid-reply."""


class RecordingProxy:
    """Serves ``/v1/chat/completions``, ``/v1/messages`` and ``GET /v1/models``; any other path
    is forwarded unchanged (a POST recorded raw). ``sink`` receives every event of every run."""

    def __init__(
        self,
        sink: EventSink,
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        upstreams: Upstreams | None = None,
        validators: ValidatorFile | None = None,
        idle_timeout_s: float = 30.0,
        timeout_s: float = 300.0,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.host = host
        self.port = port
        self.upstreams = upstreams or Upstreams()
        self.idle_timeout_s = idle_timeout_s
        self.timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
        self.clock = clock
        self.book = RunBook(
            isolate(sink),
            upstreams={"openai": self.upstreams.openai, "anthropic": self.upstreams.anthropic},
            validators=validators,
            clock=clock,
        )
        self._client = client
        self._owns_client = client is None
        self._runner: web.AppRunner | None = None
        self._reaper: asyncio.Task[None] | None = None
        self._apart: set[asyncio.Future[None]] = set()  # see _run_apart
        self._stopping = False  # calls cut now are cut by stop(), not by their client

    # ---- lifecycle ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL for Anthropic clients; OpenAI clients add ``/v1``."""
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._stopping = False
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                verify=verify_for(),
                limits=httpx.Limits(max_connections=200, max_keepalive_connections=100),
            )
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=_STOP_GRACE_S
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        if self.port == 0:  # an ephemeral port: say which one was taken
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            self.port = int(sockets[0].getsockname()[1])
        self._reaper = asyncio.create_task(self._reap())

    async def stop(self) -> None:
        """Stops serving (calls in flight end ``cancelled``) and ends every open run."""
        self._stopping = True
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        # Steps whose replies were delivered are recorded whole; upstream connections closed.
        while self._apart:
            await asyncio.gather(*self._apart, return_exceptions=True)
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        self.book.finish_all()
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> RecordingProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _reap(self) -> None:
        """Ends the runs that went idle."""
        period = max(min(self.idle_timeout_s / 4, 1.0), 0.01)
        while True:
            await asyncio.sleep(period)
            for run_id in self.book.idle(self.idle_timeout_s):
                self.book.finish(run_id)

    # ---- one request ----------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        api = api_of(request.path, request.headers)
        if request.method != "POST":
            return await self._relay(request, api, await request.read(), None)
        body = await request.read()
        model_call = request.path in MODEL_PATHS
        data: Any = None
        try:
            data = json.loads(body)
        except ValueError:
            if model_call:
                return self._refuse(api, 400, "the request body is not JSON")
            data = body.decode("utf-8", "replace")
        if model_call and not isinstance(data, dict):
            return self._refuse(api, 400, "the request body is not a JSON object")
        step_request = (read_request(api, data) if model_call else None) or _EMPTY
        call = await self.book.open_call(
            api, model_of(data), step_request, request.headers.get(RUN_HEADER)
        )
        return await self._relay(request, api, body, (call, data, model_call))

    def _refuse(self, api: Api, status: int, message: str) -> web.Response:
        body = _error_body(api, status, f"agent-inspector proxy: {message}")
        return web.Response(status=status, body=body, content_type="application/json")

    async def _relay(
        self,
        request: web.Request,
        api: Api,
        body: bytes,
        recorded: tuple[Call, Any, bool] | None,
    ) -> web.StreamResponse:
        """Forwards the call. Whatever happens, a recorded call's step ends: a fault of the
        proxy's own (a bug) ends it ``error``, never leaves it ``pending``."""
        try:
            return await self._forward(request, api, body, recorded)
        except Exception as exc:
            if recorded is not None and not recorded[0].done.is_set():
                call, data, _ = recorded
                message = f"agent-inspector proxy: {type(exc).__name__}: {exc}"
                raw = {"method": request.method, "path": request.path, "body": data}
                self.book.failed(call, "error", message, RawExchange(request=raw))
            raise

    async def _forward(
        self,
        request: web.Request,
        api: Api,
        body: bytes,
        recorded: tuple[Call, Any, bool] | None,
    ) -> web.StreamResponse:
        assert self._client is not None
        headers = request_headers(api, request.headers.items(), self.upstreams)
        url = self.upstreams.url(api, request.path, request.query_string)
        outgoing = self._client.build_request(request.method, url, headers=headers, content=body)
        raw_request: dict[str, Any] = {
            "method": request.method,
            "url": redact_url(outgoing.url),
            "headers": redact_headers(dict(outgoing.headers)),
            "body": recorded[1] if recorded else None,
        }
        call = recorded[0] if recorded else None
        if call is not None:
            call.secrets = tuple(secrets_of(outgoing))
        try:
            upstream = await self._client.send(outgoing, stream=True)
        except asyncio.CancelledError:
            if call is not None:
                message = f"{self._who_left()} before the reply"
                self.book.failed(call, "cancelled", message, RawExchange(request=raw_request))
            raise
        except httpx.HTTPError as exc:
            error = transport_error(exc, provider=f"{api} upstream {redact_url(url)}")
            status = 504 if isinstance(exc, httpx.TimeoutException) else 502
            if call is not None:
                raw = RawExchange(request=raw_request, response={"status": status})
                self.book.failed(call, "error", str(error), raw)
            return self._refuse(api, status, str(error))
        try:
            return await self._stream_back(request, upstream, api, call, raw_request, recorded)
        finally:
            # Shielded: a hang-up noticed by a failed write is followed by the handler's
            # cancellation, which would otherwise land inside this close (httpcore's cleanup
            # does not survive it) and leave the upstream connection open, still generating.
            await asyncio.shield(self._run_apart(upstream.aclose()))

    async def _stream_back(
        self,
        request: web.Request,
        upstream: httpx.Response,
        api: Api,
        call: Call | None,
        raw_request: dict[str, Any],
        recorded: tuple[Call, Any, bool] | None,
    ) -> web.StreamResponse:
        reply = web.StreamResponse(
            status=upstream.status_code,
            reason=upstream.reason_phrase or None,
            headers=response_headers(upstream.headers.multi_items()),
        )
        length = upstream.headers.get("content-length")
        if length is not None and "content-encoding" not in upstream.headers:
            reply.content_length = int(length)
        content_type = upstream.headers.get("content-type", "")
        capture = ReplyCapture(api, upstream.status_code, content_type)
        parse = recorded is not None and recorded[2]
        sent = 0
        try:
            await self._to_client(reply.prepare(request))  # sends the headers
            async for chunk in upstream.aiter_bytes():
                if call is not None and call.first_byte is None:
                    call.first_byte = self.clock()
                await self._to_client(reply.write(chunk))
                sent += len(chunk)
                if call is not None:
                    for piece in capture.feed(chunk):
                        if parse:
                            self.book.chunk(call, piece)
            await self._to_client(reply.write_eof())
        except asyncio.CancelledError:
            self._client_left(call, raw_request, capture, sent, parse)
            raise
        except _ClientGone:
            self._client_left(call, raw_request, capture, sent, parse)
            return reply
        except httpx.HTTPError as exc:
            partial = capture.partial_text
            error = transport_error(exc, provider=f"{api} upstream", partial_text=partial)
            if call is not None:
                raw = RawExchange(request=raw_request, response=capture.raw_response())
                self.book.failed(call, "error", str(error), raw, partial)
            # The client must see the reply break off as the upstream's did, not end cleanly.
            if request.transport is not None:
                request.transport.abort()
            return reply
        if call is not None:
            raw = RawExchange(request=raw_request, response=capture.raw_response())
            # The client has its whole reply and may hang up now: that must not cancel the
            # recording (and live judging) of the step.
            await asyncio.shield(self._settle_apart(call, capture, raw, parse))
        return reply

    @staticmethod
    async def _to_client(sending: Coroutine[Any, Any, Any]) -> None:
        """Sends to the client; a failed send (it hung up) raises ``_ClientGone``."""
        try:
            await sending
        except ConnectionError as exc:  # aiohttp's ClientConnectionResetError too
            raise _ClientGone from exc

    def _run_apart(self, work: Coroutine[Any, Any, None]) -> asyncio.Future[None]:
        """``work`` as a task of its own, which the handler's cancellation (the client hanging
        up) cannot cut short, and which ``stop()`` waits for."""
        task = asyncio.ensure_future(work)
        self._apart.add(task)
        task.add_done_callback(self._apart.discard)
        return task

    def _settle_apart(
        self, call: Call, capture: ReplyCapture, raw: RawExchange, model_call: bool
    ) -> asyncio.Future[None]:
        """``_settle`` as a task of its own (see ``_run_apart``)."""
        return self._run_apart(self._settle(call, capture, raw, model_call))

    def _client_left(
        self,
        call: Call | None,
        raw_request: dict[str, Any],
        capture: ReplyCapture,
        sent: int,
        model_call: bool,
    ) -> None:
        if call is None:
            return
        raw = RawExchange(request=raw_request, response=capture.raw_response())
        if capture.complete:  # it had the whole reply: recorded as a reply
            self._settle_apart(call, capture, raw, model_call)
            return
        message = f"{self._who_left()} after {sent} bytes of the reply"
        self.book.failed(call, "cancelled", message, raw, capture.partial_text)

    def _who_left(self) -> str:
        return "the proxy stopped" if self._stopping else "the client disconnected"

    async def _settle(
        self, call: Call, capture: ReplyCapture, raw: RawExchange, model_call: bool
    ) -> None:
        """A reply that reached the client whole: a model reply (or its error) on the step; any
        other path's reply kept raw."""
        if not model_call:
            if capture.status >= 400:
                self.book.failed(call, "error", f"HTTP {capture.status}", raw)
            else:
                await self.book.replied(call, StepResponse(), raw, model_reply=False)
            return
        try:
            response = capture.finish()
        except ProviderError as exc:
            self.book.failed(call, "error", str(exc), raw, capture.partial_text)
        else:
            await self.book.replied(call, response, raw)
