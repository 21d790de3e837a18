"""Open formats as use cases the window runs off its UI thread (docs/formats.md): a file
imported into a store, a recorded run pushed to an OTLP collector, a recorded run as the text
of a scenario file. Each problem is one ``InspectorError`` line; nothing here prints."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import tomlkit

from inspector.core.errors import InspectorError, ScenarioError
from inspector.core.loop import new_run_id
from inspector.core.records import RunRecord
from inspector.formats.importing import ImportChoice, import_file
from inspector.store import RunNotFound, Store

__all__ = ["fidelity_line", "import_into", "push_run", "scenario_text", "write_scenario"]


def import_into(path: Path, db: str | Path, fmt: ImportChoice = "auto") -> list[RunRecord]:
    """The runs of ``path``, stored in ``db`` whole or not at all (the file is read and checked
    before the store is opened). A run id already stored (our own export imported back) gets a
    new one."""
    records = import_file(path, fmt, new_run_id)
    with Store.open(db) as store:
        for record in records:
            if _stored(store, record.run_id):
                record.run_id = new_run_id()
            store.save(record)
    return records


def _stored(store: Store, run_id: str) -> bool:
    try:
        return store.load(run_id).run_id == run_id
    except RunNotFound:
        return False


def fidelity_line(record: RunRecord) -> str:
    """What a replay of an imported run would miss, in one line ("" for a native run)."""
    fidelity = record.fidelity
    if fidelity is None:
        return ""
    gaps = ", ".join(fidelity.lacks())
    lacks = f"; the source lacks: {gaps}" if gaps else ""
    return (
        f"Imported from {fidelity.source} ({fidelity.format}): {fidelity.replay_verdict()}{lacks}"
    )


def push_run(db: str | Path, run_id: str, endpoint: str, headers: Mapping[str, str]) -> int:
    """Sends recorded run ``run_id`` to an OTLP/HTTP collector; how many spans. The headers are
    passed through only: never stored, never in an error."""
    from inspector.formats.otel_export import run_to_otlp
    from inspector.formats.otlp_push import push

    with Store.open(db) as store:
        record = store.load(run_id)
    return push(run_to_otlp(record), endpoint, headers)


def scenario_text(db: str | Path, run_id: str) -> str:
    """Recorded run ``run_id`` as a scenario file's text that replays it offline (checked as
    ``run`` will check it)."""
    from inspector.formats.scenario_from import scenario_file_data, scenario_of_record

    with Store.open(db) as store:
        record = store.load(run_id)
    try:
        data = scenario_file_data(record)
        scenario_of_record(record)
    except ValueError as exc:
        raise ScenarioError(f"Save as scenario: {exc}") from None
    return tomlkit.dumps(data)


def write_scenario(path: Path, text: str) -> None:
    from inspector.core.files import write_atomically

    try:
        write_atomically(path, [text.encode("utf-8")])
    except OSError as exc:
        raise InspectorError(f"Save as scenario: cannot write {path}: {exc.strerror}") from None
