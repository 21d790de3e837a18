"""Opening a store settles what a dead process left behind (B4 after a crash): every step row it
left ``pending`` becomes ``interrupted``, and so does its run, with a record rebuilt from the rows.

A run is "running" while its writer lives. Rows remember the writer's host and pid; a run whose
writer is alive (this process included) is left alone, so a store can be opened while another
process records into it.
"""

from __future__ import annotations

import os
import socket
import sys

from inspector.store.reader import interrupted_record
from inspector.store.writer import PENDING, RUNNING, RowWriter


def process_alive(pid: int) -> bool:
    """True while process ``pid`` runs on this machine (a zombie counts as dead)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        try:
            code = ctypes.c_ulong()
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
            return bool(code.value == 259)  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, belongs to someone else
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) said it exists


def writer_alive(host: str | None, pid: int | None) -> bool:
    """Whether the process that wrote a running row may still be writing it. Rows from a store
    version without writer columns have no host: dead. Another machine's writer cannot be
    checked: alive (the rows wait for that machine to open the store)."""
    if host is None or pid is None:
        return False
    if host != socket.gethostname():
        return True
    return pid == os.getpid() or process_alive(pid)


def recover(writer: RowWriter) -> list[str]:
    """Marks the runs of dead writers interrupted; returns their ids."""
    conn = writer.conn
    candidates = conn.execute(
        "SELECT run_id, writer_host, writer_pid FROM runs WHERE status = ?"
        " UNION SELECT r.run_id, r.writer_host, r.writer_pid FROM runs r"
        " JOIN steps s ON s.run_id = r.run_id WHERE s.status = ?",
        (RUNNING, PENDING),
    ).fetchall()
    recovered: list[str] = []
    for run_id, host, pid in candidates:
        if writer_alive(host, pid):
            continue
        with writer.transaction():
            # Re-read inside the write lock: another process may have recovered it meanwhile.
            pending = [
                r[0]
                for r in conn.execute(
                    "SELECT idx FROM steps WHERE run_id = ? AND status = ? ORDER BY idx",
                    (run_id, PENDING),
                )
            ]
            status = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            for index in pending:
                writer.interrupt_step(run_id, index)
            if status is not None and status[0] == RUNNING:
                writer.finish_run(interrupted_record(conn, run_id))
        recovered.append(run_id)
    return recovered
