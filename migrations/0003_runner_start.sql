-- Version 3: tasks record when their runner process started (clock ticks since boot, from Linux's
-- /proc/<pid>/stat), so that crash recovery does not take a recycled pid for the runner.

ALTER TABLE tasks ADD COLUMN runner_start INTEGER;
