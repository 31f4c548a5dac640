"""AgentWork: what the server runs for a task — model, history, prompt, tools, approvals, the loop."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harnez import events as ev
from harnez.agent.approvals import Answer, Policy, check_policy, policy_answer
from harnez.agent.attachments import expand_attachments
from harnez.agent.calls import Approver, ToolCalls
from harnez.agent.compaction import Compactor
from harnez.agent.context import History
from harnez.agent.loop import DEFAULT_MAX_STEPS, AgentLoop, Budget, LoopOutcome
from harnez.agent.prompt import build_system_prompt
from harnez.agent.task import ApprovalWaiter, TaskRunLike, TaskStore
from harnez.agent.turns import StreamFn, TaskAccounting
from harnez.agent.window import prompt_refusal, prompt_room
from harnez.errors import HarnezError, ModelConfigError
from harnez.settings import PermissionSettings, Settings, parse_model_ref
from harnez.tools import SessionGrants, ToolRegistry, ToolResult, builtin_tools
from harnez.wires import HttpClients, ResolvedModel, ToolSpec, UserMessage, open_wire, resolve_ref

if TYPE_CHECKING:
    from harnez.store.sessions import SessionRecord

MODES = ("ask", "accept-edits", "read-only")


@dataclass(frozen=True, slots=True)
class TaskOptions:
    """The options of one task (from `Server.submit(..., options=...)`)."""

    budget: Budget
    approve: Policy
    mode: str | None
    compact: bool = False
    """Compact the conversation now instead of running a model turn (`/compact`)."""
    instructions: str | None = None
    """Standing guidance added to the system prompt for this task (a UHP harness or request)."""
    disabled_tools: tuple[str, ...] = ()
    """Tools withheld from the model for this task, on top of those settings deny."""

    @classmethod
    def parse(cls, options: dict[str, Any], default_approve: Policy) -> TaskOptions:
        """Checked options: max_steps (int ≥ 1), timeout (seconds > 0), approve, mode, instructions
        (text), disabled_tools (tool names)."""
        max_steps = options.get("max_steps")
        max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise HarnezError(f"max_steps must be a whole number of at least 1, not {max_steps!r}.")
        timeout = options.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise HarnezError(f"timeout must be a number of seconds above 0, not {timeout!r}.")
        mode = options.get("mode")
        if mode is not None and mode not in MODES:
            raise HarnezError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
        approve = check_policy(options.get("approve", default_approve))
        instructions = options.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise HarnezError(f"instructions must be text, not {type(instructions).__name__}.")
        disabled = options.get("disabled_tools") or ()
        if not isinstance(disabled, (list, tuple)) or not all(isinstance(n, str) for n in disabled):
            raise HarnezError(f"disabled_tools must be a list of tool names, not {disabled!r}.")
        return cls(
            Budget(max_steps, float(timeout) if timeout else None),
            approve,
            mode,
            bool(options.get("compact")),
            instructions or None,
            tuple(disabled),
        )


class AgentWork:
    """The TaskWork of the server: one call runs one task of a session to its end.

    `approve` is the policy when a task's options name none: `ask` waits for
    `Server.answer_approval`; `deny` and `allow` answer at once (headless runs).
    """

    def __init__(
        self, settings: Settings, *, approve: Policy = "ask", tools: Callable[[], ToolRegistry] | None = None
    ) -> None:
        self.settings = settings
        self.approve = check_policy(approve)
        self._tools = tools
        self._grants: dict[str, SessionGrants] = {}
        """"Allow for this session" answers, kept across the tasks of a session."""
        self.clients = HttpClients()
        """The providers' HTTP clients, shared by every task (closed by `aclose`)."""

    async def aclose(self) -> None:
        """Close the providers' HTTP clients (the server does it when it closes)."""
        await self.clients.aclose()

    def resolve(self, model: str | None, settings: Settings | None = None) -> ResolvedModel:
        """The task's model, or the default; a ModelConfigError or SettingsError says what to fix."""
        settings = settings or self.settings
        ref = model or settings.model
        if not ref:
            raise ModelConfigError(
                "No model is configured: choose one with /model in the app, pass --model "
                "<provider>/<model>, or set `model` in settings.json."
            )
        return resolve_ref(settings, parse_model_ref(ref))

    def registry(
        self, settings: Settings | None = None, disabled: tuple[str, ...] = ()
    ) -> tuple[ToolRegistry, list[str]]:
        """The tools offered, and those withheld because settings deny them outright (or `disabled`)."""
        if self._tools is not None:
            return self._tools(), []
        settings = settings or self.settings
        denied = {name for name, rule in settings.permissions.tools.items() if rule == "deny"}
        denied |= {tool.name for tool in builtin_tools() if tool.name in disabled}
        offered = [tool for tool in builtin_tools() if tool.name not in denied]
        return ToolRegistry(offered), sorted(denied)

    async def __call__(self, run: TaskRunLike) -> LoopOutcome:
        settings = run.settings or self.settings
        try:
            options = TaskOptions.parse(run.options, self.approve)
            model = self.resolve(run.model, settings)
        except HarnezError as exc:
            return LoopOutcome("failed", 0, exc.message)
        registry, withheld = self.registry(settings, options.disabled_tools)
        system, specs, history = await _prepare(run, model, registry, options)
        if not options.compact:
            refusal = await self._take_prompt(
                run, model, history, registry, prompt_room(model, system, _schema_tokens(specs))
            )
            if refusal is not None:
                return LoopOutcome("failed", 0, refusal)  # never added: the conversation goes on without it
        wire = open_wire(
            model.endpoint, settings.retry, client=self.clients.client(model.endpoint, settings.retry)
        )
        try:
            # A compaction calls no tool: it reports none offered.
            run.emit(_started(model, *(([], []) if options.compact else (registry.names, withheld))))
            if options.compact:
                return await self._compact(run, model, history, system, specs, wire.stream)
            loop = self._loop(run, settings, options, model, registry, history, system, specs, wire.stream)
            return await loop.run()
        finally:
            await wire.aclose()

    async def _take_prompt(
        self, run: TaskRunLike, model: ResolvedModel, history: History, registry: ToolRegistry, room: int
    ) -> str | None:
        """Add the task's prompt to the history (its `@path` files attached for the model; the stored
        user-message keeps the text as typed); why it was refused, when it cannot fit the window."""
        prompt = await attach_files(run.prompt, Path(run.session.workspace))
        refusal = prompt_refusal(model, prompt, room)
        if refusal is not None:
            return refusal
        if run.session.id not in self._grants:
            self._grants[run.session.id] = await restore_grants(run.store, run.session, registry)
        await history.add(UserMessage(prompt))
        return None

    async def _compact(
        self,
        run: TaskRunLike,
        model: ResolvedModel,
        history: History,
        system: str,
        specs: tuple[ToolSpec, ...],
        stream: StreamFn,
    ) -> LoopOutcome:
        """`/compact`: summarise the older conversation now, whatever its size."""
        compactor = Compactor(
            model, stream, run.emit, TaskAccounting(), overhead_tokens=_schema_tokens(specs)
        )
        await compactor.compact_now(history, system)
        return LoopOutcome("completed", 0)

    def _loop(
        self,
        run: TaskRunLike,
        settings: Settings,
        options: TaskOptions,
        model: ResolvedModel,
        registry: ToolRegistry,
        history: History,
        system: str,
        specs: tuple[ToolSpec, ...],
        stream: StreamFn,
    ) -> AgentLoop:
        accounting = TaskAccounting()
        compactor = Compactor(model, stream, run.emit, accounting, overhead_tokens=_schema_tokens(specs))
        grants = self._grants.setdefault(run.session.id, SessionGrants())
        calls = ToolCalls(
            registry,
            Path(run.session.workspace),
            _permissions(settings, options),
            grants,
            approver(options.approve, run.approvals, run.session.id),
            run.emit,
            history,
        )
        return AgentLoop(
            model=model,
            system=system,
            tools=specs,
            stream=stream,
            emit=run.emit,
            history=history,
            calls=calls,
            budget=options.budget,
            steering=run.take_steering,
            expand=partial(attach_files, workspace=Path(run.session.workspace)),
            compactor=compactor,
            accounting=accounting,
        )


def _permissions(settings: Settings, options: TaskOptions) -> PermissionSettings:
    """The permission settings of a task: its workspace's, in the mode the task asks for."""
    permissions = settings.permissions
    return permissions if options.mode is None else permissions.model_copy(update={"mode": options.mode})


async def restore_grants(store: TaskStore, session: SessionRecord, registry: ToolRegistry) -> SessionGrants:
    """The session's "allow for this session" answers, rebuilt from its stored events.

    Each `approval-resolved` with verdict `allow-session` carries the grant the person gave (tool,
    commands, paths). Older answers without one are paired with the `approval-required` prompt they
    answered — the one just before them in the same task, which showed the person the call — and
    never looked up by call id across the session: providers repeat ids, and a grant for `ls` must
    not become one for a later call that reused its id.
    """
    grants = SessionGrants()
    events = await store.events.read_kinds(
        session.num, session.id, ("approval-required", "approval-resolved")
    )
    shown: dict[tuple[int | None, str], ev.ApprovalRequired] = {}
    workspace = Path(session.workspace)
    for event in events:
        match event.body:
            case ev.ApprovalRequired(call_id=call_id) as prompt:
                shown[(event.task, call_id)] = prompt
            case ev.ApprovalResolved(call_id=call_id, verdict=verdict, grant=grant):
                asked = shown.pop((event.task, call_id), None)
                if verdict != "allow-session":
                    continue
                if grant is not None:
                    if grant.get("tool") in registry.names:
                        grants.apply(grant)
                elif asked is not None and asked.name in registry.names:
                    parsed = registry.validate(asked.name, asked.arguments)
                    if not isinstance(parsed, ToolResult):
                        grants.record(registry.get(asked.name), parsed, workspace)
    return grants


async def _prepare(
    run: TaskRunLike, model: ResolvedModel, registry: ToolRegistry, options: TaskOptions
) -> tuple[str, tuple[ToolSpec, ...], History]:
    """The system text, the tools as published and the history: the system prompt's `git status`
    runs while the history is read (neither waits for the other)."""
    system = asyncio.ensure_future(_system_prompt(Path(run.session.workspace), registry, options))
    try:
        history = await History.load(run.store, run.session.num, run.task_id, model.endpoint.wire)
        text, specs = await system
    finally:
        system.cancel()  # nothing when it is done; stops the probe when reading failed or was cancelled
    return text, specs, history


async def _system_prompt(
    workspace: Path, registry: ToolRegistry, options: TaskOptions
) -> tuple[str, tuple[ToolSpec, ...]]:
    """The system text of a task (with the task's own instructions) and the tools as published."""
    published = registry.publish()
    system = await build_system_prompt(workspace, published)
    if options.instructions:
        system += "\n\n# Instructions for this task\n" + options.instructions
    return system, tuple(ToolSpec(t["name"], t["description"], t["parameters"]) for t in published)


def _started(model: ResolvedModel, tools: list[str], withheld: list[str]) -> ev.Started:
    """The `started` event: the model that runs the task, the tools published and withheld."""
    return ev.Started(
        model=f"{model.provider}/{model.model}",
        thinking=model.thinking,
        wire=model.endpoint.wire,
        tools=tools,
        withheld=withheld,
        context_window=model.spec.context_window,
    )


def _schema_tokens(specs: tuple[ToolSpec, ...]) -> int:
    """What the tools' schemas add to every request, in estimated tokens (characters / 4)."""
    return len(json.dumps([spec.schema for spec in specs])) // 4


async def attach_files(text: str, workspace: Path) -> str:
    """The text with the `@path` files it names attached (read in a thread)."""
    return await asyncio.to_thread(expand_attachments, text, workspace)


def approver(policy: Policy, desk: ApprovalWaiter, session_id: str) -> Approver:
    """Answers by policy, or waits for a person through the desk."""

    async def answer(call_id: str) -> Answer:
        automatic = policy_answer(policy)
        if automatic is not None:
            return automatic
        return await desk.wait(session_id, call_id)

    return answer
