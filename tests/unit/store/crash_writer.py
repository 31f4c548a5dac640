"""A process that streams events into a running task until it is killed; prints each committed seq."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from harnez import events as ev
from harnez.events import StoredEvent
from harnez.server import Server, TaskOutcome, TaskRun


async def stream_forever(run: TaskRun) -> TaskOutcome:
    i = 0
    while True:
        run.emit(ev.TextDelta(text=f"chunk {i} "))
        i += 1
        await asyncio.sleep(0.0005)


async def main(db: Path, workspace: Path) -> None:
    server = await Server.open(db, work=stream_forever)
    publish = server.store.events._on_commit

    def report(events: list[StoredEvent]) -> None:
        publish(events)
        sys.stdout.write("".join(f"{e.seq}\n" for e in events))
        sys.stdout.flush()

    server.store.events._on_commit = report
    draft = server.create_session(workspace)
    await server.submit(draft.id, "stream until killed")
    print(f"session {draft.id}", flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2])))
