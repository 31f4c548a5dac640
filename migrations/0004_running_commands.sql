-- Version 4: shell commands are recorded by process group while they run, with the process that
-- started them, so the next open can stop a command that outlived a killed Harnez.

CREATE TABLE running_commands (
    id INTEGER PRIMARY KEY,
    pgid INTEGER NOT NULL,
    leader_start INTEGER,
    boot_id TEXT,
    runner_pid INTEGER NOT NULL,
    runner_start INTEGER,
    command TEXT NOT NULL,
    created_at REAL NOT NULL
);
