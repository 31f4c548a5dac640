-- Version 2: tasks record how many model turns they took (NULL for tasks finished before this column).

ALTER TABLE tasks ADD COLUMN turns INTEGER;
