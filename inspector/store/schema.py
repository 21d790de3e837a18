"""The store's tables and their numbered migrations.

``MIGRATIONS[n - 1]`` takes a store from version ``n - 1`` to ``n`` (SQL scripts, and functions for
what SQL cannot do alone, run in order in the caller's transaction); a new version appends one and
never edits an old one, so a file written by any earlier release opens. The version lives in the
one-row ``schema_version`` table.

Layout (see docs/store.md): ``runs`` (indexed key columns + the record's JSON without its steps),
``steps`` (one row per model call; its request as references into ``messages`` and ``frames``),
``messages`` and ``frames`` (content-addressed JSON, each stored once), ``verdicts``, ``events``
(every engine event in order, with its time offset) and ``texts`` (every large string, once).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from inspector.store.texts_migration import move_texts

MIGRATION_1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (0);

CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,           -- insertion order: ties on started_at
    run_id        TEXT NOT NULL UNIQUE,
    scenario      TEXT NOT NULL,
    status        TEXT NOT NULL,                 -- a RunStatus, or 'running' while recorded
    termination   TEXT,
    started_at    TEXT NOT NULL,
    duration_ms   REAL NOT NULL DEFAULT 0,
    steps         INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    replay_of     TEXT,
    provider      TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    header        TEXT NOT NULL,                 -- RunStarted as JSON (policy, scenario source)
    record        TEXT,                          -- the final record's JSON without steps/transcript
    transcript    TEXT                           -- JSON list of message hashes
);
CREATE INDEX runs_by_started ON runs (started_at DESC, id DESC);
CREATE INDEX runs_by_scenario ON runs (scenario, started_at DESC);
CREATE INDEX runs_by_replay_of ON runs (replay_of);

-- Content-addressed JSON: chat messages (normalised and raw wire form), stored once.
CREATE TABLE messages (hash TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
-- A request's frame (system, tools, tool_choice, response_format) and a raw body's non-message
-- part: the same for most steps of a turn, stored once.
CREATE TABLE frames (hash TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE steps (
    run_id      TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,
    status      TEXT NOT NULL,                   -- 'pending' until StepFinished
    frame       TEXT NOT NULL REFERENCES frames (hash),
    msg_keep    INTEGER NOT NULL,                -- messages kept from step idx - 1's request
    msg_added   TEXT NOT NULL,                   -- JSON list of message hashes appended after them
    raw_frame   TEXT REFERENCES frames (hash),   -- raw request body minus its messages
    raw_keep    INTEGER,
    raw_added   TEXT,
    body        TEXT,                            -- the final step's JSON minus request/verdicts/raw
    raw_response TEXT,
    forced      TEXT,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE INDEX steps_by_status ON steps (status);

CREATE TABLE verdicts (
    run_id    TEXT NOT NULL,
    idx       INTEGER NOT NULL,
    pos       INTEGER NOT NULL,
    validator TEXT NOT NULL,
    ok        INTEGER NOT NULL,
    status    TEXT NOT NULL,
    reason    TEXT NOT NULL,
    feedback  TEXT,
    PRIMARY KEY (run_id, idx, pos),
    FOREIGN KEY (run_id, idx) REFERENCES steps (run_id, idx) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX verdicts_by_validator ON verdicts (validator, status);

CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    t_ms   REAL NOT NULL,                        -- since RunStarted
    kind   TEXT NOT NULL,
    idx    INTEGER,                              -- the step it belongs to, if any
    body   TEXT,                                 -- NULL: rebuilt from runs/steps (no duplicates)
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""

# Version 2: who is writing a run, so opening a store can tell a dead writer's pending rows
# (interrupted) from a live one's (still streaming in another process).
MIGRATION_2 = """
ALTER TABLE runs ADD COLUMN writer_host TEXT;
ALTER TABLE runs ADD COLUMN writer_pid INTEGER;
DROP INDEX steps_by_status;
CREATE INDEX steps_pending ON steps (run_id) WHERE status = 'pending';
CREATE INDEX runs_running ON runs (run_id) WHERE status = 'running';
"""

# Version 3: where in the user's python file a validator raised (an ``error`` verdict's
# ``location`` as JSON; NULL when unknown, as for every verdict written before).
MIGRATION_3 = """
ALTER TABLE verdicts ADD COLUMN location TEXT;
"""

# Version 4: what a python validator printed during its call (a verdict's ``captured``; NULL
# when nothing, as for every verdict written before).
MIGRATION_4 = """
ALTER TABLE verdicts ADD COLUMN captured TEXT;
"""

# Version 5: steps, verdicts, messages and frames as rowid tables. In a WITHOUT ROWID table a
# row past ~1 kB (most steps and many messages) spills into an overflow page of its own, mostly
# empty: half of a 100,000-step store was unused space. A rowid table keeps rows up to a page
# inline; the old keys stay as UNIQUE constraints. New tables are filled, then the old ones
# dropped child first (dropping ``steps`` under a live verdicts table would cascade-delete its
# rows) and the new ones renamed, which rewrites the foreign keys naming them. Foreign keys are
# checked at commit, when every parent is in place again.
MIGRATION_5 = """
PRAGMA defer_foreign_keys = ON;
CREATE TABLE messages_v5 (
    id   INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL
);
INSERT INTO messages_v5 (hash, body) SELECT hash, body FROM messages;
CREATE TABLE frames_v5 (
    id   INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL
);
INSERT INTO frames_v5 (hash, body) SELECT hash, body FROM frames;
CREATE TABLE steps_v5 (
    id          INTEGER PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,
    status      TEXT NOT NULL,
    frame       TEXT NOT NULL REFERENCES frames_v5 (hash),
    msg_keep    INTEGER NOT NULL,
    msg_added   TEXT NOT NULL,
    raw_frame   TEXT REFERENCES frames_v5 (hash),
    raw_keep    INTEGER,
    raw_added   TEXT,
    body        TEXT,
    raw_response TEXT,
    forced      TEXT,
    UNIQUE (run_id, idx)
);
INSERT INTO steps_v5 (run_id, idx, attempt, status, frame, msg_keep, msg_added, raw_frame,
                      raw_keep, raw_added, body, raw_response, forced)
    SELECT run_id, idx, attempt, status, frame, msg_keep, msg_added, raw_frame, raw_keep,
           raw_added, body, raw_response, forced FROM steps ORDER BY run_id, idx;
CREATE TABLE verdicts_v5 (
    id        INTEGER PRIMARY KEY,
    run_id    TEXT NOT NULL,
    idx       INTEGER NOT NULL,
    pos       INTEGER NOT NULL,
    validator TEXT NOT NULL,
    ok        INTEGER NOT NULL,
    status    TEXT NOT NULL,
    reason    TEXT NOT NULL,
    feedback  TEXT,
    location  TEXT,
    captured  TEXT,
    UNIQUE (run_id, idx, pos),
    FOREIGN KEY (run_id, idx) REFERENCES steps_v5 (run_id, idx) ON DELETE CASCADE
);
INSERT INTO verdicts_v5 (run_id, idx, pos, validator, ok, status, reason, feedback, location,
                         captured)
    SELECT run_id, idx, pos, validator, ok, status, reason, feedback, location, captured
    FROM verdicts
    ORDER BY run_id, idx, pos;
DROP TABLE verdicts;
DROP TABLE steps;
DROP TABLE frames;
DROP TABLE messages;
ALTER TABLE messages_v5 RENAME TO messages;
ALTER TABLE frames_v5 RENAME TO frames;
ALTER TABLE steps_v5 RENAME TO steps;
ALTER TABLE verdicts_v5 RENAME TO verdicts;
CREATE INDEX steps_pending ON steps (run_id) WHERE status = 'pending';
CREATE INDEX verdicts_by_validator ON verdicts (validator, status);
"""

# Version 6: policy sweeps (issue 15). ``sweeps`` holds each sweep's spec (its arms' overrides,
# repeat, seed, baseline) as JSON; ``sweep_runs`` maps every run started for a sweep to its arm and
# repetition (a repetition re-run by ``sweep --resume`` has one row per attempt). No foreign key
# to ``runs``: the row is written before the run's first event, so a killed sweep still knows
# which of its slots had a run in flight.
MIGRATION_SWEEPS = """
CREATE TABLE sweeps (
    sweep_id   TEXT PRIMARY KEY,
    scenario   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    spec       TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX sweeps_by_created ON sweeps (created_at DESC);
CREATE TABLE sweep_runs (
    sweep_id TEXT NOT NULL REFERENCES sweeps (sweep_id) ON DELETE CASCADE,
    run_id   TEXT NOT NULL,
    arm      INTEGER NOT NULL,
    rep      INTEGER NOT NULL,
    PRIMARY KEY (sweep_id, run_id)
) WITHOUT ROWID;
CREATE INDEX sweep_runs_by_run ON sweep_runs (run_id);
"""

# Version 7: each large text stored once (issue 13 item 11; ``inspector/store/texts.py``).
# ``texts`` holds every string of ``TEXT_MIN`` characters or more, keyed by its hash, and the
# JSON that held it a reference; a verdict's long reason or feedback moves to the ``*_text``
# column. Then ``move_texts`` rewrites the rows earlier versions wrote inline, in the same
# transaction: a crash leaves the file at version 6, as it was.
MIGRATION_TEXTS = """
CREATE TABLE texts (
    id     INTEGER PRIMARY KEY,
    hash   TEXT NOT NULL UNIQUE,                 -- BLAKE2b-128 of the text's UTF-8 bytes
    zipped INTEGER NOT NULL DEFAULT 0,           -- 1: body is the zlib-compressed UTF-8 bytes
    body   BLOB NOT NULL
);
ALTER TABLE verdicts ADD COLUMN reason_text TEXT;
ALTER TABLE verdicts ADD COLUMN feedback_text TEXT;
"""

Migration = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: tuple[tuple[Migration, ...], ...] = (
    (MIGRATION_1,),
    (MIGRATION_2,),
    (MIGRATION_3,),
    (MIGRATION_4,),
    (MIGRATION_5,),
    (MIGRATION_SWEEPS,),
    (MIGRATION_TEXTS, move_texts),
)
SCHEMA_VERSION = len(MIGRATIONS)


def current_version(conn: sqlite3.Connection) -> int:
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if has_table is None:
        return 0
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row is not None else 0


def migrate(conn: sqlite3.Connection, *, target: int = SCHEMA_VERSION) -> int:
    """Applies the migrations after the file's version up to ``target``, each in the caller's
    transaction; returns the version reached. Statements run one by one (``executescript``
    would commit the caller's transaction)."""
    version = current_version(conn)
    for number in range(version + 1, target + 1):
        for step in MIGRATIONS[number - 1]:
            if callable(step):
                step(conn)
                continue
            for statement in _statements(step):
                conn.execute(statement)
        conn.execute("UPDATE schema_version SET version = ?", (number,))
        version = number
    return version


def _statements(script: str) -> list[str]:
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
