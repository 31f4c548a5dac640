"""Hooks: commands from settings run at points of a task, whose decisions can block it (docs/hooks.md).

command.py   one command run to its end: bash in the workspace, the event on stdin, killed at its timeout
decision.py  what the command decided, from its exit code and stdout; a failure is a HookError
task.py      `TaskHooks`: the hooks of one task, run in order, each run recorded as an event
trust.py     `HookTrust`: the project hooks a person trusted, remembered outside the project
"""

from harnez.hooks.decision import Decision, read_decision
from harnez.hooks.task import Blocked, StopCheck, TaskHooks
from harnez.hooks.trust import HookReview, HookTrust, hooks_digest

__all__ = [
    "Blocked",
    "Decision",
    "HookReview",
    "HookTrust",
    "StopCheck",
    "TaskHooks",
    "hooks_digest",
    "read_decision",
]
