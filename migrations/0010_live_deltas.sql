-- Version 10: streamed deltas wait in a table of their own until their turn ends
-- (docs/storage.md, "Footprint").
--
-- While a model turn streams, each coalesced delta is a row of `live_deltas`; when the turn completes
-- (or its task finishes, for a turn a crash cut short) the store moves the session's live deltas to
-- `events`, each run folded into one row. `events` then only ever grows at its end: no row is deleted
-- from its pages or grows inside them, so they stay full. Readers read both tables, merged by seq.
--
-- Deltas of a task that has not finished yet (a crash, or a database migrated while a task ran) move
-- here, to be folded when the task's `finished` is written. Payloads of this version are also stored
-- compressed against a preset dictionary (harnez/store/payloads.py); older rows are read as they are.

CREATE TABLE live_deltas (
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    task INTEGER,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    time REAL NOT NULL,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;

INSERT INTO live_deltas (session, seq, task, kind, payload, time)
SELECT session, seq, task, kind, payload, time FROM events
WHERE kind IN ('text-delta', 'reasoning-delta', 'tool-arguments-delta')
    AND task IN (SELECT id FROM tasks WHERE state IN ('queued', 'running'));

DELETE FROM events
WHERE kind IN ('text-delta', 'reasoning-delta', 'tool-arguments-delta')
    AND task IN (SELECT id FROM tasks WHERE state IN ('queued', 'running'));
