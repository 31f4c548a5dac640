"""The tool calls of one turn: validation, permissions, approvals, execution and their records."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from harnez import events as ev
from harnez.agent.approvals import Answer
from harnez.agent.context import History
from harnez.agent.task import Emit
from harnez.errors import HarnezError, HookError
from harnez.hooks import TaskHooks
from harnez.settings import PermissionSettings
from harnez.store.ledger import ToolExecution
from harnez.text import sentence
from harnez.tools import (
    Decision,
    SessionGrants,
    Tool,
    ToolContext,
    ToolParams,
    ToolRegistry,
    ToolResult,
    decide,
)
from harnez.tools.base import resolve_path
from harnez.tools.files import load_text, unified_diff
from harnez.tools.programs import check_programs
from harnez.wires import ToolCallEnd
from harnez.wires import ToolResult as ResultItem

PREVIEW_LIMIT = 256 * 1024
"""Files larger than this get no diff in the approval prompt."""

Approver = Callable[[str], Awaitable[Answer]]
"""Waits for the answer to the approval prompt of a call id."""


@dataclass(slots=True)
class PreparedCall:
    """A call checked and approved (`tool` and `args` set), or already answered (`result` set)."""

    call: ToolCallEnd
    tool: Tool | None = None
    args: ToolParams | None = None
    result: ToolResult | None = None
    outcome: str = "completed"
    approval: str | None = None

    @property
    def concurrent(self) -> bool:
        """Read-only calls that will run may share the time with their neighbours."""
        return self.result is None and self.tool is not None and self.tool.read_only


def _requested(call: ToolCallEnd) -> ev.ToolRequested:
    """The call's `tool-requested`: with the text the model sent when it was not a JSON object."""
    if call.error is None:
        return ev.ToolRequested(call_id=call.id, name=call.name, arguments=call.arguments)
    return ev.ToolRequested(
        call_id=call.id,
        name=call.name,
        arguments=call.arguments,
        raw_arguments=ev.kept_raw_arguments(call.raw_arguments),
        arguments_error=call.error,
    )


class ToolCalls:
    """Runs the tool calls of a turn in order; consecutive read-only calls run concurrently."""

    def __init__(
        self,
        registry: ToolRegistry,
        workspace: Path,
        permissions: PermissionSettings,
        grants: SessionGrants,
        approver: Approver,
        emit: Emit,
        history: History,
        hooks: TaskHooks | None = None,
        live: Callable[[str, str], None] | None = None,
    ) -> None:
        self.registry, self.workspace, self.permissions = registry, workspace, permissions
        self.grants, self.approver, self.emit, self.history = grants, approver, emit, history
        self.hooks = hooks
        """The task's pre_tool and post_tool hooks (a HookError from them ends the task)."""
        self.live = live
        """Told (call id, text) of what a running command prints, to show it live (never stored)."""

    async def run(self, calls: Sequence[ToolCallEnd]) -> None:
        """Answer every call; each result is emitted, recorded and added to the history."""
        batch: list[PreparedCall] = []
        for call in calls:
            self.emit(_requested(call))
            prepared = await self._prepare(call)
            if prepared.concurrent:
                batch.append(prepared)
                continue
            await self._run_batch(batch)
            batch = []
            await self._run_batch([prepared])
        await self._run_batch(batch)

    async def _prepare(self, call: ToolCallEnd) -> PreparedCall:
        refused = self._refusal(call)
        if refused is not None:
            return refused
        parsed = self.registry.validate(call.name, call.arguments)
        if isinstance(parsed, ToolResult):
            return PreparedCall(call, result=parsed, outcome="invalid")
        tool = self.registry.get(call.name)
        undeclared = self._undeclared_program(call, tool, parsed)
        if undeclared is not None:
            return undeclared
        if self.hooks is not None:
            blocked = await self.hooks.pre_tool(call.id, call.name, call.arguments, tool.rule_names)
            if blocked is not None:
                why = blocked.told(f"A pre_tool hook denied this {call.name} call")
                return PreparedCall(
                    call, tool, parsed, ToolResult.error(f"{why} It did not run."), "denied", "hook"
                )
        decision = decide(tool, parsed, self.workspace, self.permissions, self.grants)
        if decision.verdict == "deny":
            denied = ToolResult.error(f"Denied by the permission rules: {decision.reason}")
            return PreparedCall(call, tool, parsed, denied, "denied", "rule")
        if decision.verdict == "allow":
            return PreparedCall(call, tool, parsed, approval="rule")
        return await self._ask(PreparedCall(call, tool, parsed), decision)

    def _refusal(self, call: ToolCallEnd) -> PreparedCall | None:
        """A call that cannot run whatever the permissions: no such tool, or arguments not JSON."""
        if call.name not in self.registry.names:
            self.emit(
                ev.WarningEvent(
                    code="unpublished-tool",
                    call_id=call.id,
                    message=(f"The model called {call.name!r}, which was not offered to it; nothing ran."),
                )
            )
            missing = ToolResult.error(
                f"There is no tool named {call.name!r}; nothing ran. Available tools: "
                f"{', '.join(self.registry.names)}."
            )
            return PreparedCall(call, result=missing, outcome="unpublished")
        if call.error:
            broken = ToolResult.error(
                f"The arguments for {call.name} were not valid JSON ({call.error}); send a JSON object."
            )
            return PreparedCall(call, result=broken, outcome="invalid")
        return None

    def _undeclared_program(self, call: ToolCallEnd, tool: Tool, args: ToolParams) -> PreparedCall | None:
        """A shell call refused because it would start a program outside the declared set."""
        declared = self.permissions.shell.programs
        if tool.kind != "shell" or declared is None:
            return None
        refusal = check_programs(str(args.model_dump().get("command", "")), declared)
        if refusal is None:
            return None
        self.emit(
            ev.ProgramRefused(
                call_id=call.id, program=refusal.program, declared=list(declared), reason=refusal.reason
            )
        )
        return PreparedCall(call, tool, args, ToolResult.error(refusal.reason), "refused", "programs")

    async def _ask(self, prepared: PreparedCall, decision: Decision) -> PreparedCall:
        call, tool, args = prepared.call, prepared.tool, prepared.args
        assert tool is not None and args is not None
        diff = await asyncio.to_thread(preview_diff, tool, args, self.workspace)  # file work, off the loop
        self.emit(
            ev.ApprovalRequired(
                call_id=call.id, name=call.name, arguments=call.arguments, reason=decision.reason, diff=diff
            )
        )
        answer = await self.approver(call.id)
        grant = self.grants.record(tool, args, self.workspace) if answer.verdict == "allow-session" else None
        self.emit(
            ev.ApprovalResolved(
                call_id=call.id,
                name=call.name,
                verdict=answer.verdict,
                reason=answer.reason,
                by=answer.by,
                grant=grant,
            )
        )
        prepared.approval = f"{answer.verdict} ({answer.by})"
        if not answer.allowed:
            why = f": {sentence(answer.reason)}" if answer.reason and answer.reason.strip() else "."
            prepared.result = ToolResult.error(f"The user denied this {call.name} call{why} It did not run.")
            prepared.outcome = "denied"
        return prepared

    async def _run_batch(self, batch: list[PreparedCall]) -> None:
        if not batch:
            return
        started = time.monotonic()
        results = await asyncio.gather(*(self._execute(p, started) for p in batch))
        failure: HookError | None = None
        for prepared, result in zip(batch, results, strict=True):
            if failure is None:
                try:
                    result = await self._post_tool(prepared, result)
                except HookError as exc:  # every call that ran is still recorded; then the task ends
                    failure = exc
            await self._complete(prepared, result, started)
        if failure is not None:
            raise failure

    async def _post_tool(self, prepared: PreparedCall, result: ToolResult) -> ToolResult:
        """The result with the notes post_tool hooks add for the model (only for calls that ran)."""
        if self.hooks is None or prepared.result is not None:
            return result
        call = prepared.call
        names = prepared.tool.rule_names if prepared.tool is not None else ()
        note = await self.hooks.post_tool(
            call.id, call.name, call.arguments, result.content, result.is_error, names
        )
        return (
            result
            if note is None
            else replace(result, content=f"{result.content}\n\n[post_tool hook] {note}")
        )

    async def _execute(self, prepared: PreparedCall, started: float) -> ToolResult:
        if prepared.result is not None:
            return prepared.result
        assert prepared.tool is not None and prepared.args is not None
        try:
            context = ToolContext(
                self.workspace,
                on_output=None if self.live is None else partial(self.live, prepared.call.id),
                processes=self.history.store.commands,
                pass_env=frozenset(self.permissions.shell.pass_env),
                call_id=prepared.call.id,
            )
            return await self.registry.execute(prepared.tool, prepared.args, context)
        except asyncio.CancelledError as exc:
            cut = getattr(exc, "result", None) or ToolResult(
                "[cancelled by the user before the tool produced output]", is_error=True, cancelled=True
            )
            prepared.outcome = "cancelled"
            await self._complete(prepared, cut, started)
            raise

    async def _complete(self, prepared: PreparedCall, result: ToolResult, started: float) -> None:
        call = prepared.call
        outcome = prepared.outcome
        if outcome == "completed" and result.is_error:
            outcome = "error"
        self.emit(
            ev.ToolCompleted(
                call_id=call.id,
                name=call.name,
                content=result.content,
                details=result.details,
                is_error=result.is_error,
                cancelled=result.cancelled,
            )
        )
        await self.history.record_tool(
            ToolExecution(
                session_num=self.history.session_num,
                task=self.history.task,
                call_id=call.id,
                tool=call.name,
                arguments=call.arguments,
                outcome=outcome,
                result=result.content,
                is_error=result.is_error,
                approval=prepared.approval,
                duration_ms=round((time.monotonic() - started) * 1000, 1),
            )
        )
        await self.history.add(ResultItem(call.id, result.content, result.is_error or result.cancelled))


def preview_diff(tool: Tool, args: ToolParams, workspace: Path) -> str | None:
    """The diff an edit or write would make, when that is cheap to compute; None otherwise."""
    if tool.name not in ("edit", "write"):
        return None
    values: dict[str, Any] = args.model_dump()
    try:
        target = resolve_path(workspace, values["path"])
        shown = target.display(workspace)
        exists = target.path.is_file()
        if exists and target.path.stat().st_size > PREVIEW_LIMIT:
            return None
        before = load_text(target.path, shown) if exists else ""
    except (HarnezError, OSError):
        return None  # no preview; the tool itself reports the problem when it runs
    if tool.name == "write":
        return unified_diff(before, values["content"], shown)
    old, new = values["old_string"], values["new_string"]
    if not old or old not in before:
        return None
    after = before.replace(old, new) if values.get("replace_all") else before.replace(old, new, 1)
    return unified_diff(before, after, shown)
