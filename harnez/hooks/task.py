"""The hooks of one task: each runs in order with its event on stdin, and what it decides comes back.

Every run is a `hook-ran` event; a hook that fails is a `hook-failed` event and a `HookError`, which
ends the task. The first hook that blocks decides (the ones after it do not run), except after a
tool call, where every post_tool hook runs and each may add a note to the result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnez import events as ev
from harnez.errors import HookError
from harnez.hooks.command import CommandResult, run_command
from harnez.hooks.decision import Decision, read_decision
from harnez.settings import HookCommand, HookName, HookSettings
from harnez.text import sentence

Emit = Callable[[ev.EventBody], object]


@dataclass(frozen=True, slots=True)
class Blocked:
    """A hook that blocked: its command and its reason (None when it gave none)."""

    command: str
    reason: str | None

    def told(self, what: str) -> str:
        """`what`, the hook's command and its reason, for the model or the person to read."""
        return f"{what} (`{self.command}`): {sentence(self.reason) if self.reason else 'it gave no reason.'}"


@dataclass(frozen=True, slots=True)
class StopCheck:
    """What the stop hooks said of an end: `back` is the message sending the work back, `exhausted`
    the hook that blocked once too often; neither: the task may end."""

    back: str | None = None
    exhausted: Blocked | None = None


@dataclass(slots=True)
class TaskHooks:
    """Runs the hooks in force for one task (global, and the project's once trusted)."""

    hooks: HookSettings
    emit: Emit
    workspace: Path
    about: dict[str, Any]
    """What every hook's event carries: session, task, workspace, model."""
    pass_env: frozenset[str] = frozenset()
    stop_blocks: int = 0
    """How many times the stop hooks sent this task back so far."""
    _notes: list[str] = field(default_factory=list)

    async def prompt_submit(self, prompt: str) -> tuple[Blocked | None, str | None]:
        """(the hook that refused the prompt, or None; context to add to the prompt for the model)."""
        blocked = await self._until_blocked("prompt_submit", {"prompt": prompt})
        return blocked, self._take_notes()

    async def pre_tool(
        self, call_id: str, name: str, arguments: dict[str, Any], names: tuple[str, ...] = ()
    ) -> Blocked | None:
        """The hook that denied this call, or None when it may go on to the permission rules. `names`:
        every name of the tool a hook's `tools` may give (`Tool.rule_names`; `name` alone when empty)."""
        payload = {"call_id": call_id, "name": name, "arguments": arguments}
        blocked = await self._until_blocked("pre_tool", payload, call_id=call_id, tool=names or (name,))
        self._notes.clear()
        return blocked

    async def post_tool(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        content: str,
        is_error: bool,
        names: tuple[str, ...] = (),
    ) -> str | None:
        """Notes the post_tool hooks add to the call's result for the model (a block's reason, context)."""
        payload = {
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
            "content": content,
            "is_error": is_error,
        }
        for command in self._commands("post_tool", names or (name,)):
            decision = await self._run("post_tool", command, payload, call_id)
            if decision.blocks and decision.reason:
                self._notes.append(decision.reason)
        return self._take_notes()

    async def stop(self, turns: int, text: str, answer: Any) -> StopCheck:
        """Whether the task may end now; a block sends it back, until `stop_limit` blocks were spent."""
        payload = {"turns": turns, "text": text, "answer": answer, "sent_back": self.stop_blocks}
        blocked = await self._until_blocked("stop", payload)
        self._notes.clear()
        if blocked is None:
            return StopCheck()
        if self.stop_blocks >= self.hooks.stop_limit:
            self.emit(
                ev.StopHookExhausted(
                    limit=self.hooks.stop_limit, command=blocked.command, reason=blocked.reason
                )
            )
            return StopCheck(exhausted=blocked)
        self.stop_blocks += 1
        return StopCheck(back=blocked.told("A stop hook sent the task back to work"))

    async def _until_blocked(
        self,
        hook: HookName,
        payload: dict[str, Any],
        call_id: str | None = None,
        tool: tuple[str, ...] | None = None,
    ) -> Blocked | None:
        """Run the hook's commands in order until one blocks; their context notes are kept."""
        for command in self._commands(hook, tool):
            decision = await self._run(hook, command, payload, call_id)
            if decision.blocks:
                return Blocked(command.command, decision.reason)
        return None

    def _commands(self, hook: HookName, tool: tuple[str, ...] | None = None) -> list[HookCommand]:
        """The hook's commands, those for a tool only when it has one of the tool's names."""
        commands = self.hooks.commands(hook)
        return commands if tool is None else [c for c in commands if c.applies_to(*tool)]

    async def _run(
        self, hook: HookName, command: HookCommand, payload: dict[str, Any], call_id: str | None
    ) -> Decision:
        """One command: run it, read its decision, and record both as an event."""
        stdin = json.dumps({"hook": hook, **self.about, **payload}, ensure_ascii=False).encode()
        result: CommandResult | None = None
        try:
            result = await run_command(command.command, stdin, self.workspace, command.timeout, self.pass_env)
            decision = read_decision(hook, command.command, command.timeout, result)
        except HookError as exc:
            self.emit(
                ev.HookFailed(
                    hook=hook,
                    command=command.command,
                    message=exc.message,
                    exit_code=None if result is None else result.exit_code,
                    timed_out=result is not None and result.timed_out,
                    call_id=call_id,
                )
            )
            raise
        self.emit(
            ev.HookRan(
                hook=hook,
                command=command.command,
                exit_code=result.exit_code,
                decision=decision.verdict,
                reason=decision.reason,
                context=decision.context,
                duration=result.duration,
                call_id=call_id,
            )
        )
        if decision.context:
            self._notes.append(decision.context)
        return decision

    def _take_notes(self) -> str | None:
        notes, self._notes = self._notes, []
        return "\n\n".join(notes) or None
