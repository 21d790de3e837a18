"""Rebuilding what was written: run summaries, the exact ``RunRecord`` and the event stream.

Messages are parsed once per distinct hash and shared by every request that repeats them, and
each step's list is a view of the previous step's first ``keep`` items plus what it added: load
time and memory grow with the turn length, not its square. A large text is read once per load
(``TextReader``) and is one string wherever the run refers to it.
"""

from __future__ import annotations

import functools
import gc
import json
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, TypeAdapter

from inspector.core.events import (
    RunStarted,
)
from inspector.core.lazy_steps import LightParts
from inspector.core.messages import Message
from inspector.core.records import (
    Budgets,
    RawExchange,
    RunError,
    RunRecord,
    SourceLocation,
    Step,
    StepRequest,
    Usage,
    Verdict,
)
from inspector.core.shared_list import SharedPrefix
from inspector.store.models import RunNotFound, RunSummary, UnknownRun
from inspector.store.texts import TextReader, marked
from inspector.store.writer import RUNNING

# The run's --set overrides and ``via`` live in its header (no column), which holds the whole
# scenario (2.4 MB for a scripted turn of 10,000 attempts): one ``json_extract`` of both paths
# parses it once (a JSON array ``[overrides, via]``), where one call per path parsed it twice.
_SUMMARY_COLUMNS = (
    "run_id, scenario, status, termination, started_at, duration_ms, steps, input_tokens,"
    " output_tokens, replay_of, provider, model"
)
_SUMMARY_HEADER = "json_extract(header, '$.overrides', '$.via')"
_SUMMARY_NAMES = tuple(_SUMMARY_COLUMNS.replace(" ", "").split(","))
INTERRUPTED_RUN_MESSAGE = "the process recording this run died before the run finished"


P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


def collector_paused(read: Callable[P, R]) -> Callable[P, R]:
    """Runs ``read`` with the cyclic garbage collector off. Reading a big run allocates
    hundreds of thousands of acyclic objects, and each collection the allocations trigger
    walks everything read so far: 70% of reading a 10,000-step run's events."""

    @functools.wraps(read)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return read(*args, **kwargs)
        gc.disable()
        try:
            return read(*args, **kwargs)
        finally:
            gc.enable()

    return paused


class RunStillRecording(RunNotFound):
    """The run's writer is alive: it has no final record yet."""


def summaries(
    conn: sqlite3.Connection, *, scenario: str | None = None, limit: int | None = None
) -> list[RunSummary]:
    where, params = ("WHERE scenario = ?", [scenario]) if scenario is not None else ("", [])
    params_: list[object] = list(params)
    sql = (
        f"SELECT {_SUMMARY_COLUMNS}, {_SUMMARY_HEADER} FROM runs {where}"
        " ORDER BY started_at DESC, id DESC"
    )
    if limit is not None:
        sql += " LIMIT ?"
        params_.append(max(limit, 0))
    listed = []
    for row in conn.execute(sql, params_):
        fields = dict(zip(_SUMMARY_NAMES, row[:-1], strict=True))
        overrides, via = json.loads(row[-1]) if row[-1] is not None else (None, None)
        fields["overrides"] = [] if overrides is None else overrides
        fields["via"] = via
        listed.append(RunSummary.model_validate(fields))
    return listed


def resolve(conn: sqlite3.Connection, path: Path, run_id: str) -> str:
    """The full id of the run ``run_id`` names exactly or as a unique prefix."""
    if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone():
        return run_id
    matches = [
        r[0]
        for r in conn.execute(
            "SELECT run_id FROM runs WHERE substr(run_id, 1, ?) = ? ORDER BY run_id LIMIT 3",
            (len(run_id), run_id),
        )
    ]
    if len(matches) == 1 and run_id:
        return str(matches[0])
    if len(matches) > 1 and run_id:
        shown = ", ".join(matches[:2]) + (", ..." if len(matches) > 2 else "")
        raise UnknownRun(f"run id {run_id!r} is ambiguous in {path} (matches {shown})")
    raise UnknownRun(f"no run {run_id!r} in {path}")


@collector_paused
def load(
    conn: sqlite3.Connection, path: Path, run_id: str, reuse: LightParts | None = None
) -> RunRecord:
    """``reuse``: what the run's light read produced (its step bodies and verdicts), taken
    instead of read and validated again."""
    return _load(conn, path, resolve(conn, path, run_id), reuse=reuse)


def _load(
    conn: sqlite3.Connection,
    path: Path,
    run_id: str,
    loaded: list[Step] | None = None,
    texts: TextReader | None = None,
    parsed: dict[str, Message] | None = None,
    *,
    reuse: LightParts | None = None,
) -> RunRecord:
    """The record of ``run_id`` (a full id); ``loaded``: its steps, when already read (with
    ``texts``, and ``parsed``: the messages read with them, the transcript's included);
    ``reuse``: what its light read produced (``steps``)."""
    status, record_json, transcript_json = conn.execute(
        "SELECT status, record, transcript FROM runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    if status == RUNNING or record_json is None:
        raise RunStillRecording(f"run {run_id!r} in {path} is still being recorded")
    texts = texts or TextReader(conn)
    # In pieces when long (texts.loads: json_pieces): a long scenario script makes the record
    # megabytes, one C call holding the GIL (the window reads runs on a worker thread).
    data = texts.loads(record_json)
    transcript = texts.loads(transcript_json or "[]")  # in pieces when long
    # One parse per distinct message, shared by the steps' requests and the transcript.
    if loaded is None:
        parsed = {}
        loaded = steps(conn, run_id, parsed, also=transcript, texts=texts, reuse=reuse)
    elif parsed is None:
        parsed = parse_messages(read_bodies(conn, "messages", set(transcript)), texts)
    data["steps"] = loaded
    data["transcript"] = [parsed[h] for h in transcript]
    return RunRecord.model_validate(data)


def interrupted_record(conn: sqlite3.Connection, run_id: str) -> RunRecord:
    """The record of a run whose writer died: its header, its (settled) steps, status
    ``interrupted``; the duration is the last recorded event's offset."""
    header_json, last_t = conn.execute(
        "SELECT header, (SELECT max(t_ms) FROM events e WHERE e.run_id = runs.run_id)"
        " FROM runs WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    texts = TextReader(conn)
    header = RunStarted.model_validate({**texts.loads(header_json), "run_id": run_id})
    recorded = steps(conn, run_id, texts=texts)
    usage = Usage()
    for step in recorded:
        if step.response is not None:
            usage = usage + step.response.usage
    return RunRecord(
        **header.model_dump(exclude={"kind"}),
        duration_ms=last_t or 0.0,
        status="interrupted",
        termination=None,
        budgets=Budgets(
            attempts_used=max((s.attempt for s in recorded), default=0),
            max_attempts=header.policy.max_attempts,
            steps_used=len(recorded),
            max_steps=header.policy.max_steps,
        ),
        error=RunError(type="Interrupted", message=INTERRUPTED_RUN_MESSAGE),
        usage=usage,
        steps=recorded,
    )


def steps(
    conn: sqlite3.Connection,
    run_id: str,
    parsed: dict[str, Message] | None = None,
    *,
    also: Iterable[str] = (),
    texts: TextReader | None = None,
    reuse: LightParts | None = None,
) -> list[Step]:
    """Every step of the run in order; a row still pending comes back ``pending``.

    Each request's messages are a ``SharedPrefix`` of one list that grows with the turn (a new
    list only where a step drops messages from its predecessor's): memory follows the distinct
    messages, not steps x history; so are the wire messages of the raw request bodies
    (``inspector.core.raw_body``). ``parsed`` collects the parsed messages by hash, ``also``
    names more hashes to parse into it (the transcript's); ``texts`` resolves large texts.

    The per-step work is done in bulk where it can be (docs/store.md, "Reading fast"): the
    message-hash lists are one JSON parse, the step bodies and messages are validated
    ``BATCH`` at a time from their stored JSON by pydantic-core (no ``json.loads`` first), and
    each request is built from its frame's template without validating it again.

    ``reuse``: the run's light read (``LightParts``): its step bodies are not fetched again
    and its verdicts not read again (each step gets a list of its own of them)."""
    texts = texts or TextReader(conn)
    rows = conn.execute(
        "SELECT idx, attempt, status, frame, msg_keep, msg_added, raw_frame, raw_keep,"
        f" raw_added, raw_response, {'body' if reuse is None else 'NULL'}, forced FROM steps"
        " WHERE run_id = ? ORDER BY idx",
        (run_id,),
    ).fetchall()
    # The light read's bodies (a body stored as JSON text, or resolved), else the rows'
    bodies_of: list[Any] = [r[10] for r in rows] if reuse is None else reuse.bodies
    if reuse is not None and len(bodies_of) != len(rows):  # not this run's: read as without
        reuse, bodies_of = None, [b for (b,) in conn.execute(_BODIES, (run_id,))]
    added: list[list[str]] = json_lists([r[5] for r in rows])
    raw_added: list[list[str]] = json_lists([r[8] or "[]" for r in rows])
    bodies = _added_bodies(conn, run_id, "msg_added")
    # A comprehension, not set(also).difference(): 200,000 hashes in one C call held the GIL.
    bodies.update(read_bodies(conn, "messages", {h for h in also if h not in bodies}))
    messages = parse_messages(bodies, texts)
    if parsed is not None:
        parsed.update(messages)
    raw_values = {h: texts.loads(b) for h, b in _added_bodies(conn, run_id, "raw_added").items()}
    frames = {
        h: texts.loads(b) for h, b in read_bodies(conn, "frames", _frame_hashes(rows)).items()
    }
    verdicts = read_verdicts(conn, run_id, texts) if reuse is None else reuse.verdicts
    validated = _validated_bodies(bodies_of)
    requests: dict[str, StepRequest] = {}
    out: list[Step] = []
    shared: list[Message] = []  # the longest history so far; each request is a prefix of it
    # The raw bodies' wire messages alike: the previous step's are ``raw_shared[:raw_n]``.
    raw_shared: list[Any] = []
    raw_n = 0
    for row, hashes, raw_hashes, step, stored in zip(
        rows, added, raw_added, validated, bodies_of, strict=True
    ):
        index, attempt, status, frame, keep = row[0], row[1], row[2], row[3], row[4]
        if keep < len(shared):  # a step that drops messages: a list of its own from here on
            shared = shared[:keep]
        shared.extend([messages[h] for h in hashes])
        template = requests.get(frame)
        if template is None:
            template = requests[frame] = StepRequest.model_validate(
                {**frames[frame], "messages": []}
            )
        request = request_of(template, SharedPrefix(shared, len(shared)))
        raw: RawExchange | None = None
        if row[6] is None:
            raw_n = 0  # the next raw body starts a list of its own
        else:
            raw_new = [raw_values[h] for h in raw_hashes]
            raw_shared = raw_continued(raw_shared, raw_n, row[7] or 0, raw_new)
            raw_n = len(raw_shared)
            raw = RawExchange(
                request=raw_request(frames[row[6]], SharedPrefix(raw_shared, raw_n)),
                response=texts.loads(row[9]) if row[9] is not None else None,
            )
        step_verdicts = list(verdicts.get(index, ()))
        if step is not None:  # validated from its JSON with a stand-in request: the real parts
            fields = step.__dict__
            fields["request"], fields["verdicts"], fields["raw"] = request, step_verdicts, raw
            step.__pydantic_fields_set__.update(ATTACHED)
            out.append(step)
        else:
            body: dict[str, Any]
            if stored is None:
                body = pending_body(index, attempt, status, row[11])
            elif isinstance(stored, dict):  # resolved by the light read: its dict left as is
                body = dict(stored)
            else:  # large texts referenced: resolved first
                body = texts.loads(stored)
            body.update(request=request, verdicts=step_verdicts, raw=raw)
            out.append(Step.model_validate(body))
    let_go(rows, added, raw_added, validated, bodies, bodies_of)
    return out


_BODIES = "SELECT body FROM steps WHERE run_id = ? ORDER BY idx"


def raw_continued(shared: list[Any], length: int, keep: int, new: list[Any]) -> list[Any]:
    """The list whose first items are a raw body's wire messages, after the previous raw body's
    ``shared[:length]``: ``shared`` extended in place when the step keeps all of the longest
    list so far (``keep``), else a list of its own (the kept part, then ``new``)."""
    if keep == length == len(shared):
        shared.extend(new)
        return shared
    return shared[: min(keep, length)] + new


def pending_body(index: int, attempt: int, status: str, forced: str | None) -> dict[str, Any]:
    """The fields of a step row still pending (no body yet): what ``StepStarted`` wrote."""
    return {
        "index": index,
        "attempt": attempt,
        "status": status,
        "forced": json.loads(forced) if forced else None,
    }


def let_go(*values: list[Any] | dict[Any, Any]) -> None:
    """Empties big temporaries ``BATCH * 10`` items at a time: freeing 100,000 rows when a
    function returns is one C call holding the GIL (~0.1 s: a stalled window while a worker
    thread reads a long run); a slice at a time, other threads run in between."""
    step = BATCH * 10
    for value in values:
        if isinstance(value, dict):
            keys = list(value)
            for at in range(0, len(keys), step):
                for key in keys[at : at + step]:
                    del value[key]
            value = keys
        while value:
            del value[-step:]


# Step bodies (or messages) validated per pydantic-core call: one C call holding the GIL,
# ~10-20 ms for 500 steps on this machine (2,000 were 45-75 ms of a stalled window).
BATCH = 500
# A step body's JSON with a stand-in request (the body is stored without it); the real request,
# verdicts and raw exchange replace it once validated (``ATTACHED``).
STAND_IN = ',"request":{"system":"","messages":[]}}'
ATTACHED = frozenset({"request", "verdicts", "raw"})
_STEPS: TypeAdapter[list[Step]] = TypeAdapter(list[Step])
_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_VERDICTS: TypeAdapter[list[Verdict]] = TypeAdapter(list[Verdict])


def json_lists(values: list[str]) -> list[Any]:
    """Each of ``values`` (a JSON text) parsed, ``BATCH * 5`` per parse (one C call each:
    a worker thread reading lets the UI thread in between)."""
    out: list[Any] = []
    for at in range(0, len(values), BATCH * 5):
        out += json.loads("[" + ",".join(values[at : at + BATCH * 5]) + "]")
    return out


def _validated_bodies(bodies: list[Any]) -> list[Step | None]:
    """Each stored step body validated as a ``Step`` straight from its JSON, ``BATCH`` at a
    time; ``None`` where it cannot be (a pending row, large texts to resolve first, a body
    the light read resolved already: a dict)."""
    out: list[Step | None] = [None] * len(bodies)
    plain = [
        (n, b) for n, b in enumerate(bodies) if type(b) is str and b.endswith("}") and not marked(b)
    ]
    for at in range(0, len(plain), BATCH):
        chunk = plain[at : at + BATCH]
        joined = "[" + ",".join([body[:-1] + STAND_IN for _, body in chunk]) + "]"
        for (n, _), step in zip(chunk, _STEPS.validate_json(joined), strict=True):
            out[n] = step
    return out


def request_of(template: StepRequest, messages: SharedPrefix[Message]) -> StepRequest:
    """A step's request: its frame's ``template`` (validated once per frame) with its own
    messages and tools list, built without validating again (``model_construct``'s result,
    without its per-call field walk: most of the cost of a step when done 100,000 times)."""
    fields = dict(template.__dict__)  # every field of the model: all of them count as set
    fields["messages"], fields["tools"] = messages, list(template.tools)
    return _model_of(StepRequest, fields)


def has_events(conn: sqlite3.Connection, path: Path, run_id: str) -> bool:
    run_id = resolve(conn, path, run_id)
    return (
        conn.execute("SELECT 1 FROM events WHERE run_id = ? LIMIT 1", (run_id,)).fetchone()
        is not None
    )


def _constructed(cls: type[M], **fields: Any) -> M:
    """``cls.model_construct(**fields)`` where every field is given and valid, without its
    per-call walk of the model's fields (most of the cost of 60,000 events read)."""
    return _model_of(cls, fields)


def _model_of(cls: type[M], fields: dict[str, Any]) -> M:
    """A ``cls`` whose ``__dict__`` is ``fields`` (every field, valid, all counted as set)."""
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", fields)
    object.__setattr__(model, "__pydantic_fields_set__", set(fields))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


def raw_request(frame: dict[str, Any], messages: SharedPrefix[Any]) -> Any:
    path, request = frame["path"], frame["request"]
    if not path:
        return request
    if path == ["messages"]:
        return {**request, "messages": messages}
    return {**request, "body": {**request["body"], "messages": messages}}


def _frame_hashes(rows: list[Any]) -> set[str]:
    return {r[3] for r in rows} | {r[6] for r in rows if r[6] is not None}


def read_verdicts(
    conn: sqlite3.Connection, run_id: str, texts: TextReader, index: int | None = None
) -> dict[int, list[Verdict]]:
    """The run's verdicts by step index (``index``: that step's only). SQLite writes each
    row as the verdict's JSON and pydantic-core validates ``BATCH`` of them a call: a
    ``Verdict(...)`` per row was ~90 ms for 10,000 verdicts, in the light read and again in
    the whole read. A row whose texts are stored apart (large) is built from its columns."""
    rows = conn.execute(
        "SELECT idx, CASE WHEN reason_text IS NULL AND feedback_text IS NULL THEN"
        " json_object('validator', validator, 'ok', json(CASE WHEN ok THEN 'true' ELSE 'false'"
        " END), 'status', status, 'reason', reason, 'feedback', feedback, 'location',"
        " json(nullif(location, '')), 'captured', captured) ELSE json_array(validator, ok,"
        " status, reason, feedback, location, captured, reason_text, feedback_text) END,"
        " reason_text IS NULL AND feedback_text IS NULL FROM verdicts"
        " WHERE run_id = ? AND (? IS NULL OR idx = ?) ORDER BY idx, pos",
        (run_id, index, index),
    ).fetchall()
    out: dict[int, list[Verdict]] = {}
    for at in range(0, len(rows), BATCH):
        chunk = rows[at : at + BATCH]
        plain = iter(_VERDICTS.validate_json("[" + ",".join([r[1] for r in chunk if r[2]]) + "]"))
        for idx, text, whole in chunk:
            verdict = next(plain) if whole else _verdict_of(json.loads(text), texts)
            out.setdefault(idx, []).append(verdict)
    return out


def _verdict_of(columns: list[Any], texts: TextReader) -> Verdict:
    """A verdict row whose reason or feedback is stored apart (a large text)."""
    validator, ok, status, reason, feedback, location, captured, r_text, f_text = columns
    return Verdict(
        validator=validator,
        ok=bool(ok),
        status=status,
        reason=texts.optional(r_text, reason),
        feedback=texts.optional(f_text, feedback),
        location=SourceLocation.model_validate_json(location) if location else None,
        captured=captured,
    )


def read_bodies(conn: sqlite3.Connection, table: str, hashes: set[str]) -> dict[str, str]:
    if not hashes:
        return {}
    sql = f"SELECT t.hash, t.body FROM {table} t JOIN json_each(?) j ON t.hash = j.value"
    return pairs(conn.execute(sql, (json.dumps(sorted(hashes)),)))


def _added_bodies(conn: sqlite3.Connection, run_id: str, column: str) -> dict[str, str]:
    """The bodies of the messages the run's steps add (``column``: ``msg_added`` or
    ``raw_added``), by hash: one join, without sending the hashes back to SQLite."""
    sql = (
        f"SELECT m.hash, m.body FROM steps s, json_each(s.{column}) j"
        " JOIN messages m ON m.hash = j.value WHERE s.run_id = ?"
    )
    return pairs(conn.execute(sql, (run_id,)))


def pairs(cursor: sqlite3.Cursor) -> dict[str, str]:
    """The cursor's (hash, body) rows as a dict, built ``BATCH * 10`` rows per call (200,000
    in one ``dict()`` held the GIL ~70 ms)."""
    out: dict[str, str] = {}
    while rows := cursor.fetchmany(BATCH * 10):
        out.update(rows)
    return out


def parse_messages(bodies: dict[str, str], texts: TextReader) -> dict[str, Message]:
    """Each message validated from its JSON, ``BATCH`` at a time (large texts resolved
    first, one by one)."""
    out: dict[str, Message] = {}
    plain: list[tuple[str, str]] = []
    for h, b in bodies.items():
        if marked(b):
            out[h] = Message.model_validate(texts.loads(b))
        else:
            plain.append((h, b))
    for at in range(0, len(plain), BATCH):
        chunk = plain[at : at + BATCH]
        joined = "[" + ",".join([b for _, b in chunk]) + "]"
        for (h, _), message in zip(chunk, _MESSAGES.validate_json(joined), strict=True):
            out[h] = message
    let_go(plain)
    return out
