"""AgentWork: what the server runs for a task — model, history, prompt, tools, approvals, the loop."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harnez import events as ev
from harnez.agent.answer import ANSWER_INSTRUCTIONS, AnswerTool, OutputSchema
from harnez.agent.approvals import Answer, Policy, check_policy, policy_answer
from harnez.agent.attachments import expand_attachments, mentions
from harnez.agent.calls import Approver, ToolCalls
from harnez.agent.compaction import Compactor
from harnez.agent.context import History
from harnez.agent.ending import TaskEnding
from harnez.agent.loop import DEFAULT_MAX_STEPS, AgentLoop, Budget, LoopOutcome
from harnez.agent.offer import Offer
from harnez.agent.prompt import Environments, build_system_prompt
from harnez.agent.task import ApprovalWaiter, TaskRunLike, TaskStore
from harnez.agent.turns import StreamFn, TaskAccounting
from harnez.agent.window import prompt_refusal, prompt_room
from harnez.agents import ParentLimits
from harnez.agents.definitions import DELEGATE
from harnez.agents.offer import TaskAgents
from harnez.errors import HarnezError, HookError, ModelConfigError
from harnez.hooks import HookReview, HookTrust, TaskHooks
from harnez.paths import settings_sources
from harnez.settings import PermissionSettings, Settings, parse_model_ref, program_name_problem
from harnez.tools import SessionGrants, Tool, ToolRegistry, ToolResult, builtin_tools
from harnez.tools.mcp import McpConnections, McpTool
from harnez.tools.permissions import configured_rule
from harnez.wires import (
    HttpClients,
    ResolvedModel,
    ToolSpec,
    UserMessage,
    forces_tools,
    open_wire,
    resolve_ref,
)
from harnez.wires.http import needs_tls, no_roots_context, tls_context

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
    output_schema: OutputSchema | None = None
    """The JSON Schema of the task's structured answer (the `answer` tool, harnez/agent/answer.py)."""
    programs: tuple[str, ...] | None = None
    """The only programs the shell tool may start in this task (`--programs`); None: settings decide."""
    mcp_servers: tuple[dict[str, Any], ...] = ()
    """The enabled MCP servers of the task's UHP harness (name, url, transport, headers, auth reference)."""
    skills_dir: str | None = None
    """The folder the task's UHP harness's skills were written to (offered before the workspace's);
    None: the task has no harness, and sees the workspace's and the global skills only."""

    @classmethod
    def parse(cls, options: dict[str, Any], default_approve: Policy) -> TaskOptions:
        """Checked options: max_steps (int ≥ 1), timeout (seconds > 0), approve, mode, instructions
        (text), disabled_tools (tool names), output_schema (a JSON Schema), programs (declared program
        names), mcp_servers (the harness's enabled MCP server entries), skills_dir (the folder of the
        harness's skills)."""
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
        schema = options.get("output_schema")
        mcp = options.get("mcp_servers") or ()
        if not isinstance(mcp, (list, tuple)) or not all(
            isinstance(entry, dict) and isinstance(entry.get("name"), str) for entry in mcp
        ):
            raise HarnezError(f"mcp_servers must be a list of MCP server entries, not {mcp!r}.")
        skills_dir = options.get("skills_dir")
        if skills_dir is not None and not isinstance(skills_dir, str):
            raise HarnezError(f"skills_dir must be a folder path, not {skills_dir!r}.")
        return cls(
            Budget(max_steps, float(timeout) if timeout else None),
            approve,
            mode,
            bool(options.get("compact")),
            instructions or None,
            tuple(disabled),
            output_schema=None if schema is None else OutputSchema.parse(schema),
            programs=_declared_programs(options.get("programs")),
            mcp_servers=tuple(mcp),
            skills_dir=skills_dir,
        )

    def lent(self) -> dict[str, Any]:
        """The options this task lends the sub-agents it delegates to (docs/agents.md, "What a
        sub-agent inherits"): its permission mode and approval policy, its standing instructions (a
        UHP harness's system prompt, the request's), disabled tools, MCP servers (narrowed to those
        whose tools the agent gets: `child_options`), skills, turn budget and declared programs. Not
        the time budget (the parent's clock covers its children: when it runs out, they are
        cancelled with it) nor the structured answer (the parent's own)."""
        given = {
            "approve": self.approve,
            "mode": self.mode,
            "instructions": self.instructions,
            "disabled_tools": list(self.disabled_tools) or None,
            "mcp_servers": [dict(entry) for entry in self.mcp_servers] or None,
            "skills_dir": self.skills_dir,
            "max_steps": self.budget.max_steps,
            "programs": None if self.programs is None else list(self.programs),
        }
        return {key: value for key, value in given.items() if value is not None}


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
        self._grant_owners: dict[str, str] = {}
        """The session whose grants a session uses: its own, or a child session's parent's."""
        self.clients = HttpClients()
        """The providers' HTTP clients, shared by every task (closed by `aclose`)."""
        self.environments = Environments()
        """Each session's environment section, kept for its later tasks (a stable system prompt)."""

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
        self,
        settings: Settings | None = None,
        disabled: tuple[str, ...] = (),
        answer: Tool | None = None,
        extra: list[Tool] | None = None,
    ) -> tuple[ToolRegistry, list[str]]:
        """The tools offered (the built-in ones, then `extra`: the MCP servers' tools, then the task's
        `answer` tool), and those withheld because settings deny them outright (or `disabled`)."""
        if self._tools is not None:
            return self._tools(), []
        settings = settings or self.settings
        tools = [*builtin_tools(), *(extra or ())]
        denied = {name for name, rule in settings.permissions.tools.items() if rule == "deny"}
        denied |= {tool.name for tool in tools if _denied(tool, settings.permissions, disabled)}
        offered = [tool for tool in tools if tool.name not in denied]
        return ToolRegistry(offered + ([answer] if answer else [])), sorted(denied)

    async def __call__(self, run: TaskRunLike) -> LoopOutcome:
        settings = run.settings or self.settings
        try:
            options = TaskOptions.parse(run.options, self.approve)
            model = self.resolve(run.model, settings)
        except ModelConfigError as exc:
            return LoopOutcome("failed", 0, f"{exc.message} {settings_sources(Path(run.session.workspace))}")
        except HarnezError as exc:
            return LoopOutcome("failed", 0, exc.message)
        mcp = McpConnections()
        try:
            if not options.compact:  # a compaction calls no tool: it connects no MCP server
                servers = options.mcp_servers
                tls = any(needs_tls(str(server.get("url", ""))) for server in servers)
                mcp = await McpConnections.open(servers, verify=tls_context() if tls else no_roots_context())
            return await self._run(run, settings, options, model, mcp)
        finally:
            await mcp.aclose()

    async def _run(
        self,
        run: TaskRunLike,
        settings: Settings,
        options: TaskOptions,
        model: ResolvedModel,
        mcp: McpConnections,
    ) -> LoopOutcome:
        """The task, its MCP servers connected (those it goes on without each get a warning)."""
        answer = AnswerTool(options.output_schema) if options.output_schema else None
        # The system prompt's `git status` and the history's reads run while the agents and tools are
        # read: each read comes back through the event loop, which the TUI may hold for a while (the
        # prompt's mount), and reads made one after the other would each wait for it.
        environment = self.environments.section(run.session.id, Path(run.session.workspace))
        reading = asyncio.ensure_future(
            History.load(run.store, run.session.num, run.task_id, model.endpoint.wire)
        )
        try:
            registry, offer, agents = await self._offer(run, settings, options, answer, mcp.tools)
            system, specs, history = await _prepare(
                run, registry, options, offer, agents.instructions, environment, reading
            )
        finally:
            for started in (environment, reading):  # nothing once awaited; stops those of a failed task
                _drop(started)
        # A compaction calls no tool: it reports none offered.
        run.emit((Offer.nothing() if options.compact else offer).started(model))
        if not options.compact:
            agents.warn(run.emit, registry)
            for server in mcp.unavailable:
                run.emit(mcp_unavailable(server.name, server.why))
        hooks = None if options.compact else task_hooks(run, settings, model)
        if not options.compact:
            refusal = await self._take_prompt(
                run, model, history, registry, prompt_room(model, system, _schema_tokens(specs)), hooks
            )
            if refusal is not None:
                return LoopOutcome("failed", 0, refusal)  # never added: the conversation goes on without it
        wire = open_wire(
            model.endpoint, settings.retry, client=self.clients.client(model.endpoint, settings.retry)
        )
        try:
            if options.compact:
                return await self._compact(run, model, history, system, specs, wire.stream)
            ending = TaskEnding(run.emit, answer, hooks, forces_tools(model))
            loop = self._loop(
                run, settings, options, model, registry, history, system, specs, wire.stream, ending
            )
            return await loop.run()
        finally:
            await wire.aclose()

    async def _offer(
        self,
        run: TaskRunLike,
        settings: Settings,
        options: TaskOptions,
        answer: Tool | None,
        extra: list[Tool],
    ) -> tuple[ToolRegistry, Offer, TaskAgents]:
        """The tools the task publishes (`delegate` among them when it has agents: docs/agents.md), what
        the model is told of them (those withheld too), and its agents. A child session gets its link's
        tools and shares its parent's grants."""
        agents = await TaskAgents.load(run.store, run.session, settings)
        withheld_by_link = agents.withheld(
            [*(tool.name for tool in builtin_tools()), *(t.name for t in extra)]
        )
        registry, withheld = self.registry(settings, options.disabled_tools + withheld_by_link, answer, extra)
        if DELEGATE in options.disabled_tools and DELEGATE not in withheld:
            withheld = sorted([*withheld, DELEGATE])
        owner = self._grant_owners[run.session.id] = agents.grants_owner or run.session.id
        shared = agents.grants_session(run.session)
        if shared is not None and owner not in self._grants:  # every tool: the parent's grants too
            self._grants[owner] = await restore_grants(run.store, shared, ToolRegistry(builtin_tools()))
        parent = ParentLimits(
            tuple(registry.names),
            run.model or settings.model,
            options.lent(),
            mcp_servers(extra),
            {tool.name: tool.full_name for tool in extra if isinstance(tool, McpTool)},
        )
        registry = agents.offer(registry, withheld, run.delegate, parent)
        harness_skills = Path(options.skills_dir) if options.skills_dir else None
        offer = Offer.of(
            registry,
            withheld,
            Path(run.session.workspace),
            agents.offered(registry),
            harness_skills=harness_skills,
        )
        return registry, offer, agents

    def _session_grants(self, session_id: str) -> SessionGrants:
        """A session's "allow for this session" answers (a child session's are its parent's)."""
        return self._grants.setdefault(self._grant_owners.get(session_id, session_id), SessionGrants())

    async def _take_prompt(
        self,
        run: TaskRunLike,
        model: ResolvedModel,
        history: History,
        registry: ToolRegistry,
        room: int,
        hooks: TaskHooks | None,
    ) -> str | None:
        """Add the task's prompt to the history (its `@path` files attached for the model and what the
        prompt_submit hooks add; the stored user-message keeps the text as typed); why it was refused,
        when it cannot fit the window or a hook refused it."""
        prompt = await attach_files(run.prompt, Path(run.session.workspace))
        refusal = prompt_refusal(model, prompt, room)
        if refusal is None and hooks is not None:
            refusal, prompt = await submitted_prompt(hooks, run.prompt, prompt)
        if refusal is not None:
            return refusal
        owner = self._grant_owners.get(run.session.id, run.session.id)
        if owner not in self._grants:
            self._grants[owner] = await restore_grants(run.store, run.session, registry)
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
            model,
            stream,
            run.emit,
            TaskAccounting(rates=dict((run.settings or self.settings).rates)),
            overhead_tokens=_schema_tokens(specs),
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
        ending: TaskEnding,
    ) -> AgentLoop:
        accounting = TaskAccounting(rates=dict(settings.rates))
        grants = self._session_grants(run.session.id)
        calls = ToolCalls(
            registry,
            Path(run.session.workspace),
            _permissions(settings, options),
            grants,
            approver(options.approve, run.approvals, run.session.id),
            run.emit,
            history,
            ending.hooks,
            run.live_output,
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
            compactor=Compactor(model, stream, run.emit, accounting, overhead_tokens=_schema_tokens(specs)),
            accounting=accounting,
            ending=ending,
            cache_key=prompt_cache_key(run.session.id),
        )


def _denied(tool: Tool, permissions: PermissionSettings, disabled: tuple[str, ...]) -> bool:
    """Whether settings deny the tool or `disabled` blocks it, by the name it is offered under or, for an
    MCP tool offered cut and tagged, its whole `mcp__<server>__<tool>` name."""
    rule = configured_rule(tool, permissions)
    return (rule is not None and rule[0] == "deny") or any(name in disabled for name in tool.rule_names)


def mcp_servers(tools: list[Tool]) -> dict[str, str]:
    """The server of each of a task's MCP tools, by the name it is offered under."""
    return {tool.name: tool.session.name for tool in tools if isinstance(tool, McpTool)}


def mcp_unavailable(name: str, why: str) -> ev.WarningEvent:
    """The warning of an enabled MCP server the task goes on without (docs/events.md)."""
    return ev.WarningEvent(
        code="mcp-unavailable",
        message=f"MCP server `{name}` not connected: {why}; the task goes on without its tools.",
    )


def prompt_cache_key(session_id: str) -> str:
    """A session's key for the provider's prompt cache: the same for every request of its conversation,
    and no more than a digest of the session id (nothing of the workspace or the person)."""
    return "harnez-" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def task_hooks(run: TaskRunLike, settings: Settings, model: ResolvedModel) -> TaskHooks | None:
    """The hooks in force for a task (the project's only once trusted; a warning when they are not),
    or None when there are none."""
    hooks, waiting = HookTrust().in_force(settings)
    if waiting is not None:
        run.emit(ev.WarningEvent(code="untrusted-hooks", message=untrusted_message(waiting)))
    if hooks.empty:
        return None
    about = {
        "session": run.session.id,
        "task": run.task_id,
        "workspace": run.session.workspace,
        "model": f"{model.provider}/{model.model}",
    }
    workspace, pass_env = Path(run.session.workspace), frozenset(settings.permissions.shell.pass_env)
    return TaskHooks(hooks, run.emit, workspace, about, pass_env)


def untrusted_message(review: HookReview) -> str:
    """The `untrusted-hooks` warning: whose hooks did not run, and how to trust them."""
    count = len(review.lines())
    return (
        f"The project's hooks in {review.settings_file} ({count} command{'s' if count != 1 else ''}) are not "
        "trusted yet, so they did not run. Trust them when the app asks, or run with --trust-hooks."
    )


async def submitted_prompt(hooks: TaskHooks, typed: str, prompt: str) -> tuple[str | None, str]:
    """(why the prompt_submit hooks refused the prompt, or None; the prompt with the context they add)."""
    try:
        blocked, context = await hooks.prompt_submit(typed)
    except HookError as exc:
        return exc.message, prompt
    if blocked is not None:
        return blocked.told("A prompt_submit hook refused this prompt"), prompt
    return None, prompt if context is None else f"{prompt}\n\n[prompt_submit hook] {context}"


def _declared_programs(programs: Any) -> tuple[str, ...] | None:
    """The `programs` option checked: None, or a non-empty list of program names."""
    if programs is None:
        return None
    if (
        not isinstance(programs, (list, tuple))
        or not programs
        or not all(isinstance(n, str) for n in programs)
    ):
        raise HarnezError(f"programs must be a non-empty list of program names, not {programs!r}.")
    for name in programs:
        problem = program_name_problem(name)
        if problem is not None:
            raise HarnezError(f"programs: {problem}.")
    return tuple(programs)


def _permissions(settings: Settings, options: TaskOptions) -> PermissionSettings:
    """The permission settings of a task: its workspace's, in the mode the task asks for, with the
    programs it declares."""
    permissions = settings.permissions
    if options.programs is not None:
        shell = permissions.shell.model_copy(update={"programs": list(options.programs)})
        permissions = permissions.model_copy(update={"shell": shell})
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
    run: TaskRunLike,
    registry: ToolRegistry,
    options: TaskOptions,
    offer: Offer,
    agent: str | None,
    environment: Awaitable[str],
    history: Awaitable[History],
) -> tuple[str, tuple[ToolSpec, ...], History]:
    """The system text, the tools as published and the history: the system prompt's `environment`
    (its `git status`) and the history's reads, both started by the caller, run side by side."""
    workspace = Path(run.session.workspace)
    system = asyncio.ensure_future(_system_prompt(workspace, registry, options, offer, agent, environment))
    try:
        read = await history
        text, specs = await system
    finally:
        system.cancel()  # nothing when it is done; stops the probe when reading failed or was cancelled
    return text, specs, read


def _drop(started: asyncio.Future[Any]) -> None:
    """Stop work a task started ahead and did not wait for (it failed first); a failure it already
    met is taken, not left to be reported as never retrieved."""
    if not started.cancel() and not started.cancelled():
        started.exception()


async def _system_prompt(
    workspace: Path,
    registry: ToolRegistry,
    options: TaskOptions,
    offer: Offer,
    agent: str | None = None,
    environment: Awaitable[str] | None = None,
) -> tuple[str, tuple[ToolSpec, ...]]:
    """The system text of a task (with the task's own instructions, and a sub-agent's) and the tools
    as published."""
    published = registry.publish()
    system = await build_system_prompt(workspace, published, skills=offer.skills, environment=environment)
    if agent:
        system += "\n\n" + agent
    if options.instructions:
        system += "\n\n# Instructions for this task\n" + options.instructions
    if options.output_schema is not None:
        system += "\n\n" + ANSWER_INSTRUCTIONS
    return system, tuple(ToolSpec(t["name"], t["description"], t["parameters"]) for t in published)


def _schema_tokens(specs: tuple[ToolSpec, ...]) -> int:
    """What the tools' schemas add to every request, in estimated tokens (characters / 4)."""
    return len(json.dumps([spec.schema for spec in specs])) // 4


async def attach_files(text: str, workspace: Path) -> str:
    """The text with the `@path` files it names attached (read in a thread; a prompt that names none
    is returned at once, without waiting for a thread's turn)."""
    if not mentions(text):
        return text
    return await asyncio.to_thread(expand_attachments, text, workspace)


def approver(policy: Policy, desk: ApprovalWaiter, session_id: str) -> Approver:
    """Answers by policy, or waits for a person through the desk."""

    async def answer(call_id: str) -> Answer:
        automatic = policy_answer(policy)
        if automatic is not None:
            return automatic
        return await desk.wait(session_id, call_id)

    return answer
