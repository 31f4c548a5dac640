"""The in-process server: sessions, events with cursors, and the running tasks."""

from harnez.server.runner import TaskOutcome, TaskRun, TaskWork
from harnez.server.server import Draft, Server

__all__ = ["Draft", "Server", "TaskOutcome", "TaskRun", "TaskWork"]
