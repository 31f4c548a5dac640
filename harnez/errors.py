"""The exception tree of Harnez; every error carries a message a person can act on.

HarnezError
├── UsageError             a command-line option, input or request is unusable as given (CLI exit code 2)
├── SettingsError          a settings file or value is wrong (CLI exit code 2)
├── StoreError
│   ├── SchemaTooNewError  the database was written by a newer Harnez; never written to
│   ├── MigrationError     a migration failed; the database stays at its previous version
│   ├── StoreBusyError     another process holds the write lock for too long
│   └── StoreWriteError    a write failed for good (disk full, I/O error, locked too long):
│       │                  the running task fails and nothing more is written (exit code 1)
│       └── DatabaseDamagedError  SQLite found a damaged page (exit code 2)
├── SessionNotFoundError   an unknown or ambiguous session id (CLI exit code 2)
├── SessionBusyError       another process runs a task in the session (exit code 2; nothing ran)
├── ModelConfigError       an unknown provider, a missing API key variable, a bad model name
├── WireError              a model call failed for good (after retries, or not retryable)
├── ToolError              a tool could not run; its message is shown to the model
├── ApprovalError          an approval answer names no waiting tool call, or an unknown verdict or policy
├── SessionFormatError     another harness's session file cannot be read as asked (CLI exit code 2)
├── HookError              a hook command crashed, timed out or answered what Harnez cannot read:
│                          the task ends failed (docs/hooks.md)
└── StartInterrupted       a signal came before a headless task began: nothing was sent (exit code 130)
"""

from __future__ import annotations


class HarnezError(Exception):
    """Base class of every error Harnez raises on purpose."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(HarnezError):
    """A command was given an option or input it cannot use (a blank prompt, a bad number), or asked
    for something it cannot do as given (a taken port, a missing folder)."""

    exit_code = 2


class SettingsError(HarnezError):
    """A settings file is malformed or holds an invalid value."""

    exit_code = 2


class StoreError(HarnezError):
    """The database cannot be opened, migrated or written."""

    exit_code = 2


class SchemaTooNewError(StoreError):
    """The database schema is newer than this binary knows."""


class MigrationError(StoreError):
    """A migration failed and was rolled back."""


class StoreBusyError(StoreError):
    """The database stayed locked by another process."""


class StoreWriteError(StoreError):
    """Saving failed for good: the disk is full, the file became unwritable, or the lock never came.

    What was committed before is intact (SQLite rolled the failed write back); the process stops
    writing and its running tasks end as failed.
    """

    exit_code = 1


class DatabaseDamagedError(StoreWriteError):
    """SQLite found a damaged page in the database file."""

    exit_code = 2


class SessionNotFoundError(HarnezError):
    """No session matches an id or prefix, or a prefix matches several."""

    exit_code = 2


class SessionBusyError(HarnezError):
    """Another live Harnez process is running a task in the session."""

    exit_code = 2

    def __init__(self, message: str, *, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid
        """The process running it (a front end names it in a message of its own)."""


class ModelConfigError(HarnezError):
    """A model or provider is named wrongly or lacks its credentials."""

    exit_code = 2


class WireError(HarnezError):
    """A model call failed for good."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class ToolError(HarnezError):
    """A tool could not do what it was asked; the message goes back to the model."""


class ApprovalError(HarnezError):
    """An answer names no waiting tool call, or is not one of the known verdicts (or policies)."""


class SessionFormatError(HarnezError):
    """A session file of another harness is not in a format Harnez reads, or `--strict` found a bad record."""

    exit_code = 2


class HookError(HarnezError):
    """A hook command crashed, timed out, or printed a decision Harnez cannot read; the task ends."""


class StartInterrupted(HarnezError):
    """Ctrl-C, SIGTERM or a hang-up before `harnez run`'s or `chat`'s task began (docs/headless.md)."""

    exit_code = 130

    def __init__(self) -> None:
        super().__init__("interrupted before the task began: nothing was sent")
