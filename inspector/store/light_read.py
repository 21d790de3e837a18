"""The light read of a long finished run: what the window's first paint needs, in one pass
over the ``steps`` rows (docs/store.md, "Opening a long run light").

The record comes without its steps' requests, its transcript and its ``scenario_source``;
its ``steps`` are ``StepRows`` (``inspector/core/lazy_steps.py``): per step the attempt, the
cleared flag, whether it has notes and the latency come from SQLite's JSON functions, and the
``Step`` itself is validated from its stored body when first read, with a shared stand-in
request and no raw exchange. Everything else of a step (response, tool results, verdicts,
feedback, forced, error, timings) is the stored one, as ``load`` reads it.
"""

from __future__ import annotations

import sqlite3
from array import array
from pathlib import Path
from typing import Any

from inspector.core.lazy_steps import LightRunRecord, StepRows
from inspector.core.records import RawExchange, Step, StepRequest
from inspector.core.shared_list import SharedPrefix
from inspector.store import reader
from inspector.store.models import RunNotFound
from inspector.store.texts import TextReader, marked
from inspector.store.writer import RUNNING

# The request every light step holds until the full record replaces it.
STAND_IN_REQUEST = StepRequest(system="", messages=[])
DAMAGED_STEP = "this step's stored row cannot be read"

_ROWS = (
    "SELECT idx, attempt, body, status, json_extract(body, '$.cleared', '$.latency_ms',"
    " '$.feedback[0].role', '$.forced', '$.error'), msg_keep + json_array_length(msg_added),"
    " json_array_length(body, '$.feedback') FROM steps WHERE run_id = ? ORDER BY idx"
)


@reader.collector_paused
def load_light(
    conn: sqlite3.Connection, path: Path, run_id: str, min_steps: int
) -> LightRunRecord | None:
    """The light record of ``run_id`` (or a unique prefix), or None when the run has fewer
    than ``min_steps`` steps, is still recording, or has a step the light read cannot build
    (a pending row): the caller then reads it whole with ``load``."""
    run_id = reader.resolve(conn, path, run_id)
    row = conn.execute(
        "SELECT status, steps, json_remove(record, '$.scenario_source') FROM runs WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    status, count, record_json = row
    if status == RUNNING or record_json is None or (count or 0) < min_steps:
        return None
    rows = conn.execute(_ROWS, (run_id,)).fetchall()
    if not rows or rows[-1][0] != len(rows) or any(r[2] is None for r in rows):
        return None  # steps not numbered 1..n, or a pending row: the full read handles it
    texts = TextReader(conn)
    verdicts = reader.read_verdicts(conn, run_id, texts)
    # Per step: cleared, latency, its first feedback message's role, forced, error.
    flags = reader.json_lists([r[4] for r in rows])
    attempts = array("q", [r[1] for r in rows])
    sizes = array("q", [r[5] for r in rows])  # messages in each step's request
    cleared = bytes([1 if f[0] else 0 for f in flags])
    failed = {i - 1 for i, found in verdicts.items() if not all(v.ok for v in found)}
    errors = {n for n, r in enumerate(rows) if r[3] == "error" and flags[n][4]}
    noted = sorted(failed.union(errors, [n for n, f in enumerate(flags) if f[2] or f[3]]))
    # Each noted step's note count (``reports.step_notes.note_count``) from its columns, so
    # that the timeline lays its rows out without building it; -1: a forced step, built to
    # count its markers. Building a blind retry's 10,000 steps was half of this read.
    notes = array("q", bytes(8 * len(rows)))
    for n in noted:
        if flags[n][3] is not None:
            notes[n] = -1
        else:
            found = verdicts.get(n + 1, ())
            notes[n] = sum(not v.ok for v in found) + (rows[n][6] or 0) + (n in errors)
    slowest = max((f[1] for f in flags if f[1] is not None), default=0.0)
    bodies: list[Any] = [r[2] for r in rows]
    statuses = [r[3] for r in rows]
    del rows  # freed here, on the reading thread (``build`` keeps only what it reads)
    for n in [n for n, body in enumerate(bodies) if '{"$' in body]:
        if marked(body := bodies[n]):  # large texts: resolved now, while the connection is at hand
            bodies[n] = texts.loads(body)

    def build(position: int) -> Step:
        body = bodies[position]
        try:
            if isinstance(body, str):
                step = Step.model_validate_json(body[:-1] + reader.STAND_IN)
            else:
                step = Step.model_validate({**body, "request": STAND_IN_REQUEST})
        except ValueError:  # a damaged row: the full read then fails in one line
            return Step(
                index=position + 1,
                attempt=attempts[position],
                status=statuses[position],
                request=STAND_IN_REQUEST,
                error=DAMAGED_STEP,
            )
        fields = step.__dict__
        fields["request"], fields["raw"] = STAND_IN_REQUEST, None
        fields["verdicts"] = verdicts.get(step.index, [])
        step.__pydantic_fields_set__.update(reader.ATTACHED)
        return step

    data = texts.loads(record_json)
    data["steps"], data["transcript"] = [], []
    record = LightRunRecord.model_validate(data)
    light_steps = StepRows(attempts, cleared, noted, slowest, build, bodies, sizes, notes, verdicts)
    record.__dict__["steps"] = light_steps
    return record


@reader.collector_paused
def load_step(conn: sqlite3.Connection, path: Path, run_id: str, index: int) -> Step:
    """Step ``index`` of ``run_id`` (or a unique prefix) alone, as ``load`` reads it: its
    request's messages (the hash lists of the steps before it walked, only its own messages
    read), its raw exchange, verdicts and body."""
    run_id = reader.resolve(conn, path, run_id)
    rows = conn.execute(
        "SELECT idx, msg_keep, msg_added, raw_frame, raw_keep, raw_added FROM steps"
        " WHERE run_id = ? AND idx <= ? ORDER BY idx",
        (run_id, index),
    ).fetchall()
    if not rows or rows[-1][0] != index:
        raise RunNotFound(f"no step {index} in run {run_id!r} in {path}")
    hashes: list[str] = []  # the request's message hashes, as ``reader.steps`` builds them
    raw_hashes: list[str] = []
    raw_n = 0
    added = reader.json_lists([r[2] for r in rows])
    raw_added = reader.json_lists([r[5] or "[]" for r in rows])
    for row, new, raw_new in zip(rows, added, raw_added, strict=True):
        if row[1] < len(hashes):
            del hashes[row[1] :]
        hashes.extend(new)
        if row[3] is None:
            raw_n = 0
            continue
        raw_hashes = reader.raw_continued(raw_hashes, raw_n, row[4] or 0, raw_new)
        raw_n = len(raw_hashes)
    attempt, status, frame, raw_frame, raw_response, body, forced = conn.execute(
        "SELECT attempt, status, frame, raw_frame, raw_response, body, forced FROM steps"
        " WHERE run_id = ? AND idx = ?",
        (run_id, index),
    ).fetchone()
    texts = TextReader(conn)
    # Only this request's messages: a run of many short requests would otherwise parse every
    # message the steps before it added (step N alone costing a share of the whole read).
    added_bodies = reader.read_bodies(conn, "messages", set(hashes))
    messages = reader.parse_messages(added_bodies, texts)
    reader.let_go(rows, added, raw_added, added_bodies)
    frames = {h: texts.loads(b) for h, b in reader.read_bodies(conn, "frames", {frame}).items()}
    shared = [messages[h] for h in hashes]
    template = StepRequest.model_validate({**frames[frame], "messages": []})
    request = reader.request_of(template, SharedPrefix(shared, len(shared)))
    raw: RawExchange | None = None
    if raw_frame is not None:
        values = reader.read_bodies(conn, "messages", set(raw_hashes[:raw_n]))
        raw_values = [texts.loads(values[h]) for h in raw_hashes[:raw_n]]
        raw_request = texts.loads(reader.read_bodies(conn, "frames", {raw_frame})[raw_frame])
        raw = RawExchange(
            request=reader.raw_request(raw_request, SharedPrefix(raw_values, raw_n)),
            response=texts.loads(raw_response) if raw_response is not None else None,
        )
    fields = (
        reader.pending_body(index, attempt, status, forced) if body is None else texts.loads(body)
    )
    verdicts = reader.read_verdicts(conn, run_id, texts, index).get(index, [])
    fields.update(request=request, verdicts=verdicts, raw=raw)
    return Step.model_validate(fields)
