"""A process killed with SIGKILL mid-task: the database is intact, committed events are kept,
the task is closed as interrupted on the next open."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server

WRITER = Path(__file__).with_name("crash_writer.py")


def _run_until(db_path: Path, workspace: Path, events: int) -> tuple[str, int]:
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(db_path), str(workspace)], stdout=subprocess.PIPE, text=True
    )
    session, last = "", 0
    deadline = time.monotonic() + 30
    assert proc.stdout is not None
    while last < events and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("session "):
            session = line.split()[1]
        elif line.strip():
            last = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    return session, last


async def test_sigkill_mid_task_keeps_every_committed_event_and_marks_the_task_interrupted(
    db_path: Path, workspace: Path
) -> None:
    session, last_reported = _run_until(db_path, workspace, 400)
    assert session and last_reported >= 400

    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()

    server = await Server.open(db_path)
    events = await server.events_after(session)
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) >= last_reported
    ended = [e for e in events if e.task is not None][-1]  # the session's title may follow (excerpt)
    assert ended.kind == "finished" and ended.body.stop == "interrupted"
    tasks = await server.store.tasks.of_session((await server.get_session(session)).num)
    assert [t.state for t in tasks] == ["interrupted"]
    assert (await server.get_session(session)).status == "interrupted"
    await server.append(session, Event(ev.UserMessage(text="still usable")))
    await server.close()


async def test_two_processes_appending_to_one_session_never_share_a_sequence_number(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    await server.append(draft.id, Event(ev.UserMessage(text="shared")))
    await server.close()
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from harnez.events import Event, TextDelta\n"
        "from harnez.server import Server\n"
        "async def main():\n"
        "    s = await Server.open(Path(sys.argv[1]))\n"
        "    r = await s.get_session(sys.argv[2])\n"
        "    for i in range(300):\n"
        "        s.store.events.append(r.num, r.id, Event(TextDelta(text=sys.argv[3] + str(i))))\n"
        "        if i % 7 == 0: await asyncio.sleep(0.001)\n"
        "    await s.close()\n"
        "asyncio.run(main())\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(db_path), draft.id, name]) for name in ("a", "b")
    ]
    assert [p.wait(60) for p in procs] == [0, 0]
    server = await Server.open(db_path)
    events = await server.events_after(draft.id)
    assert [e.seq for e in events] == list(range(1, 602))
    texts = [e.body.text for e in events[1:]]
    assert sorted(texts) == sorted([f"a{i}" for i in range(300)] + [f"b{i}" for i in range(300)])
    assert [t for t in texts if t.startswith("a")] == [f"a{i}" for i in range(300)]
    await server.close()
