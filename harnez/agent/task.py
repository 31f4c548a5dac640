"""The agent's view of a task: the Protocols the server's `TaskRun` satisfies, and nothing more.

The agent never sees the server. A task hands it the session it works in, its prompt and options,
one callback every event leaves through (`emit`), the stores it reads and writes (`TaskStore`), the
desk where a tool call waits for a person (`ApprovalWaiter`), and `delegate`, which runs a sub-agent's
task as a child session. `harnez.server.runner.TaskRun`
provides exactly these; tests can hand in anything else that does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from harnez.events import EventBody

if TYPE_CHECKING:
    from harnez.agent.approvals import Answer
    from harnez.agents import Delegation, DelegationResult
    from harnez.settings import Settings
    from harnez.store.commands import RunningCommands
    from harnez.store.context import ContextRecords
    from harnez.store.delegations import DelegationTable
    from harnez.store.events import EventLog
    from harnez.store.ledger import Ledger
    from harnez.store.sessions import SessionRecord


class Emit(Protocol):
    """The one callback every event of a task leaves through (`TaskRun.emit`); it does not wait for
    the commit (the event log group-commits, and fails loudly if it cannot)."""

    def __call__(self, body: EventBody, /, *, search_text: str | None = None) -> object: ...


class TaskStore(Protocol):
    """The parts of the store a task's work uses."""

    @property
    def context(self) -> ContextRecords:
        """The conversation as sent to and received from providers."""
        ...

    @property
    def ledger(self) -> Ledger:
        """Model calls and tool executions."""
        ...

    @property
    def events(self) -> EventLog:
        """The session's log, read back for the grants a person gave."""
        ...

    @property
    def commands(self) -> RunningCommands:
        """The shell commands running, by process group."""
        ...

    @property
    def delegations(self) -> DelegationTable:
        """Child sessions: whether this session is one (and of whom), for its limits."""
        ...


class ApprovalWaiter(Protocol):
    """Where a tool call that asks waits for the person's answer."""

    async def wait(self, session_id: str, call_id: str) -> Answer: ...


class TaskRunLike(Protocol):
    """What a task's work is handed (harnez.server.runner.TaskRun)."""

    @property
    def session(self) -> SessionRecord: ...

    @property
    def task_id(self) -> int: ...

    @property
    def prompt(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def options(self) -> dict[str, Any]: ...

    @property
    def settings(self) -> Settings | None: ...

    @property
    def store(self) -> TaskStore: ...

    @property
    def approvals(self) -> ApprovalWaiter: ...

    def emit(self, body: EventBody, /, *, search_text: str | None = None) -> object: ...

    def take_steering(self) -> list[str]: ...

    def live_output(self, call_id: str, text: str) -> None:
        """What the command of tool call `call_id` printed just now (shown live, never stored)."""
        ...

    async def delegate(self, delegation: Delegation, /) -> DelegationResult:
        """Run a sub-agent's task as a child session of this task (docs/agents.md)."""
        ...
