"""Row writes. ``RowWriter._settle`` is the one place a step row leaves ``pending``: the engine's
``StepFinished``, a saved record and crash recovery all go through it.

Every method runs inside the caller's transaction (``RowWriter.transaction``); the content a row
refers to (messages, frames) is written in the same transaction, before the row, and the large
texts any row refers to (``inspector.store.texts``) before the transaction commits.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.credentials import redact, redact_scenario_source, source_may_redact
from inspector.core.events import RunStarted
from inspector.core.messages import Message
from inspector.core.raw_body import messages_path
from inspector.core.records import Forced, RunRecord, Step, StepRequest, Verdict
from inspector.core.shared_list import common_prefix
from inspector.store import texts as text_rows
from inspector.store.database import StoreError
from inspector.store.messages import MessageInterner, content_hash, dumps
from inspector.store.texts import TextWriter

RUNNING = "running"  # a run row's status while its writer streams it
PENDING = "pending"
INTERRUPTED_STEP_ERROR = "interrupted: the process recording this run died during this step"
# Step fields kept in the row's ``body``; the request, verdicts and raw bodies have their own.
# An event row: (seq, t_ms, kind, step index, body JSON or None when rebuilt from rows).
EventRow = tuple[int, float, str, int | None, str | None]
_BODY_EXCLUDE = {"request", "verdicts", "raw"}
# Record fields kept in the run row's ``record``; steps and transcript are rebuilt from rows.
_RECORD_EXCLUDE = {"steps", "transcript"}
_SOURCE = frozenset({"scenario_source"})  # in a header or record: already in its stored form


@dataclass
class _Chain:
    """What the previous step of a run sent, to store the next one as a delta."""

    index: int = 0
    messages: Sequence[Message] = field(default_factory=list)
    raw_index: int = 0
    raw_messages: Sequence[Any] = field(default_factory=list)
    # The previous request's frame: its parts (the same objects step after step in a turn) and
    # their hash, so an unchanged frame is not serialised again.
    frame_parts: tuple[Any, ...] = ()
    frame: str = ""


def stored_source(texts: TextWriter, source: Any) -> Any:
    """A scenario's source redacted and with its large texts referenced:
    ``texts.encode(redact_scenario_source(source))``, except that a top-level entry whose JSON
    shows nothing to redact or refer to (``source_may_redact``, ``TextWriter.may_encode``) is
    kept as it is, not walked twice in Python: a scripted turn's ``script`` of 1,000 entries
    cost ~30 ms so."""
    if not isinstance(source, dict):
        return texts.encode(redact_scenario_source(source))
    walked = [key for key, value in source.items() if _may_change(texts, {key: value})]
    if len(walked) == len(source):
        return texts.encode(redact_scenario_source(source))
    redacted = redact_scenario_source({key: source[key] for key in walked})
    out = {
        key: texts.encode(redacted[key]) if key in redacted else value
        for key, value in source.items()
    }
    # ``encode``'s rule for a dict whose only key is a marker
    return {text_rows.LIT: out} if len(out) == 1 and next(iter(out)) in text_rows.MARKS else out


def _may_change(texts: TextWriter, value: Any) -> bool:
    text = dumps(value)
    return source_may_redact(text) or texts.may_encode(text)


class RowWriter:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.texts = TextWriter()
        self.content = MessageInterner(self.texts.body)
        self._frames: set[str] = set()
        self._chains: dict[str, _Chain] = {}
        # Step rows this writer committed ``pending`` (run_id, index): settling one needs no
        # look-up first. Forgotten on a rollback (the next settle looks the row up).
        self._pending: set[tuple[str, int]] = set()
        # A scenario's source as given and in its stored form (redacted, large texts referenced),
        # per run: a run's record repeats its header's source, O(script) to redact and encode.
        # Forgotten on a rollback (the texts it refers to may be gone).
        self._sources: dict[str, tuple[Any, Any]] = {}

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``: committed when the block ends, rolled back on error
        (and the content caches forgotten, so nothing is assumed written that was not)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            text_rows.write(self.conn, self.texts.take())
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self.texts.forget()
            self.content = MessageInterner(self.texts.body)
            self._frames.clear()
            self._chains.clear()
            self._pending.clear()
            self._sources.clear()
            raise

    # ---- runs -----------------------------------------------------------------------------------

    def start_run(self, header: RunStarted, *, host: str, pid: int) -> None:
        data = header.model_dump(mode="json", exclude={"run_id", "kind"})
        data["scenario_source"] = self._source(header.run_id, data["scenario_source"])
        header_json = self.texts.run(data, encoded=_SOURCE)
        try:
            self.conn.execute(
                "INSERT INTO runs (run_id, scenario, status, started_at, replay_of, provider,"
                " model, header, writer_host, writer_pid) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    header.run_id,
                    header.scenario,
                    RUNNING,
                    header.started_at,
                    header.replay_of,
                    header.provider,
                    header.model,
                    header_json,
                    host,
                    pid,
                ),
            )
        except sqlite3.IntegrityError:
            raise StoreError(f"run {header.run_id!r} is already in {self.path}") from None
        self._chains[header.run_id] = _Chain()

    def finish_run(self, record: RunRecord) -> None:
        """Writes the final record: any step the rows lack or left pending is settled from the
        record, a pending row the record does not know becomes ``interrupted``."""
        rows = dict(
            self.conn.execute(
                "SELECT idx, status FROM steps WHERE run_id = ?", (record.run_id,)
            ).fetchall()
        )
        for step in record.steps:
            status = rows.pop(step.index, None)
            if status is None or status == PENDING:
                self.finalize_step(record.run_id, step)
        for index, status in rows.items():
            if status == PENDING:
                self.interrupt_step(record.run_id, index)
        data = record.model_dump(mode="json", exclude=_RECORD_EXCLUDE)
        data["scenario_source"] = self._source(record.run_id, data["scenario_source"])
        transcript = [self.content.message(m) for m in record.transcript]
        self._write_content()
        self.conn.execute(
            "UPDATE runs SET scenario = ?, status = ?, termination = ?, duration_ms = ?,"
            " steps = ?, input_tokens = ?, output_tokens = ?, replay_of = ?, provider = ?,"
            " model = ?, record = ?, transcript = ? WHERE run_id = ?",
            (
                record.scenario,
                record.status,
                record.termination,
                record.duration_ms,
                len(record.steps),
                record.usage.input_tokens,
                record.usage.output_tokens,
                record.replay_of,
                record.provider,
                record.model,
                self.texts.run(data, encoded=_SOURCE),
                dumps(transcript),
                record.run_id,
            ),
        )
        self._chains.pop(record.run_id, None)
        self._sources.pop(record.run_id, None)
        self.content.forget_objects()

    def _source(self, run_id: str, source: Any) -> Any:
        """``source`` redacted and in its stored form; the run's header source again (its
        record) is not walked twice."""
        known = self._sources.get(run_id)
        if known is not None and known[0] == source:
            return known[1]
        stored = stored_source(self.texts, source)
        self._sources[run_id] = (source, stored)
        return stored

    # ---- steps ----------------------------------------------------------------------------------

    def start_step(
        self, run_id: str, index: int, attempt: int, request: StepRequest, forced: Forced | None
    ) -> None:
        """The step row, ``pending``: committed by the caller before the request leaves."""
        frame, keep, added = self._encode_request(run_id, index, request)
        self._write_content()
        self.conn.execute(
            "INSERT INTO steps (run_id, idx, attempt, status, frame, msg_keep, msg_added, forced)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (
                run_id,
                index,
                attempt,
                PENDING,
                frame,
                keep,
                dumps(added),
                None if forced is None else forced.model_dump_json(),
            ),
        )
        self._pending.add((run_id, index))

    def finalize_step(self, run_id: str, step: Step) -> None:
        """A finished engine step: its pending row settled, or the row written final at once."""
        if (run_id, step.index) not in self._pending and not self._has_step(run_id, step.index):
            self.start_step(run_id, step.index, step.attempt, step.request, step.forced)
        raw_cols = self._encode_raw(run_id, step)
        body = self.texts.body(step.model_dump_json(exclude=_BODY_EXCLUDE))
        self._settle(run_id, step.index, step.status, body, step.verdicts, raw_cols)

    def _has_step(self, run_id: str, index: int) -> bool:
        exists = self.conn.execute(
            "SELECT 1 FROM steps WHERE run_id = ? AND idx = ?", (run_id, index)
        ).fetchone()
        return exists is not None

    def interrupt_step(self, run_id: str, index: int) -> None:
        """A pending row whose writer died: ``interrupted``, with what the row holds."""
        row = self.conn.execute(
            "SELECT attempt, forced FROM steps WHERE run_id = ? AND idx = ?", (run_id, index)
        ).fetchone()
        forced = json.loads(row[1]) if row[1] else None
        body = {
            "index": index,
            "attempt": row[0],
            "status": "interrupted",
            "response": None,
            "tool_results": [],
            "feedback": [],
            "forced": forced,
            "cleared": False,
            "internal_tool": False,
            "latency_ms": None,
            "ttft_ms": None,
            "error": INTERRUPTED_STEP_ERROR,
        }
        self._settle(run_id, index, "interrupted", dumps(body), [], (None, None, None, None))

    def _settle(
        self,
        run_id: str,
        index: int,
        status: str,
        body: str,
        verdicts: list[Verdict],
        raw_cols: tuple[str | None, int | None, str | None, str | None],
    ) -> None:
        """THE pending → final rule: only a ``pending`` row changes, and only to a final status;
        a row that is already final is never rewritten."""
        if status == PENDING:
            raise StoreError(f"run {run_id!r} step {index}: a step cannot be finalized as pending")
        updated = self.conn.execute(
            "UPDATE steps SET status = ?, body = ?, raw_frame = ?, raw_keep = ?, raw_added = ?,"
            " raw_response = ? WHERE run_id = ? AND idx = ? AND status = ?",
            (status, body, *raw_cols, run_id, index, PENDING),
        ).rowcount
        self._pending.discard((run_id, index))
        if updated != 1:
            raise StoreError(f"run {run_id!r} step {index} is already final in {self.path}")
        if not verdicts:
            return
        self.conn.executemany(
            "INSERT INTO verdicts (run_id, idx, pos, validator, ok, status, reason, reason_text,"
            " feedback, feedback_text, location, captured) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    run_id,
                    index,
                    pos,
                    v.validator,
                    v.ok,
                    v.status,
                    *self._text_columns(v.reason, ""),
                    *self._text_columns(v.feedback, None),
                    v.location.model_dump_json() if v.location is not None else None,
                    v.captured,
                )
                for pos, v in enumerate(verdicts)
            ],
        )

    def _text_columns(self, text: str | None, moved: str | None) -> tuple[str | None, str | None]:
        """(column, its ``*_text`` column): a long text is in ``texts`` (the column ``moved``)."""
        if text is None or len(text) < self.texts.text_min:
            return text, None
        return moved, self.texts.text(text)

    # ---- encoding ---------------------------------------------------------------------------

    def _chain(self, run_id: str) -> _Chain:
        return self._chains.setdefault(run_id, _Chain())

    def _encode_request(
        self, run_id: str, index: int, request: StepRequest
    ) -> tuple[str, int, list[str]]:
        chain = self._chain(run_id)
        messages = request.messages
        # A delta only against the step just before (the reader rebuilds in index order).
        keep = common_prefix(chain.messages, messages) if chain.index == index - 1 else 0
        added = [self.content.message(m) for m in messages[keep:]]
        chain.index, chain.messages = index, messages
        # Compared by identity (the tools list, the response format) or value (short strings):
        # the parts are frozen records or never changed after the turn built them.
        parts = (request.system, request.tools, request.tool_choice, request.response_format)
        same = len(parts) == len(chain.frame_parts) and all(
            a is b or (isinstance(a, str | None) and a == b)
            for a, b in zip(parts, chain.frame_parts, strict=True)
        )
        if not same or not chain.frame:
            chain.frame = self._frame(request.model_dump(mode="json", exclude={"messages"}))
            chain.frame_parts = parts
        return chain.frame, keep, added

    def _encode_raw(
        self, run_id: str, step: Step
    ) -> tuple[str | None, int | None, str | None, str | None]:
        """(raw_frame, raw_keep, raw_added, raw_response); all None when the step has no raw."""
        raw = step.raw
        if raw is None:
            return (None, None, None, None)
        chain = self._chain(run_id)
        request = raw.request
        path = messages_path(request)
        response = self.texts.raw_response(redact(raw.response))
        if not path:
            return (self._frame({"path": [], "request": redact(request)}), None, None, response)
        container = request if path == ("messages",) else request["body"]
        messages: Sequence[Any] = container["messages"]  # a list, or a loaded run's view
        keep = (
            common_prefix(chain.raw_messages, messages) if chain.raw_index == step.index - 1 else 0
        )
        added = [self.content.value(redact(m)) for m in messages[keep:]]
        chain.raw_index, chain.raw_messages = step.index, messages
        # The frame keeps the messages key in place (None), so the rebuilt body has its order.
        shell = dict(container, messages=None)
        outer = shell if path == ("messages",) else dict(request, body=shell)
        frame = self._frame({"path": list(path), "request": redact(outer)})
        return (frame, keep, dumps(added), response)

    def _frame(self, value: Any) -> str:
        body = dumps(value)
        digest = content_hash(body)
        if digest not in self._frames:
            sql = "INSERT OR IGNORE INTO frames (hash, body) VALUES (?, ?)"
            self.conn.execute(sql, (digest, self.texts.body(body)))
            self._frames.add(digest)
        return digest

    def _write_content(self) -> None:
        new = self.content.take()
        if new:
            self.conn.executemany("INSERT OR IGNORE INTO messages (hash, body) VALUES (?, ?)", new)

    # ---- events -----------------------------------------------------------------------------

    def set_event_bodies(self, run_id: str, bodies: dict[int, str]) -> None:
        self.conn.executemany(
            "UPDATE events SET body = ? WHERE run_id = ? AND seq = ?",
            [(body, run_id, seq) for seq, body in bodies.items()],
        )

    def add_events(self, run_id: str, rows: list[EventRow]) -> None:
        stored = self.texts.event
        self.conn.executemany(
            "INSERT INTO events (run_id, seq, t_ms, kind, idx, body) VALUES (?,?,?,?,?,?)",
            [
                (run_id, seq, t_ms, kind, idx, stored(kind, body))
                for seq, t_ms, kind, idx, body in rows
            ],
        )
