"""Permission decisions for tool calls: modes, per-tool settings, shell and path patterns, session grants."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harnez.settings import PathRules, PermissionSettings, ShellRules
from harnez.tools.base import Tool, ToolParams, WorkspacePath, real_workspace
from harnez.tools.programs import check_programs
from harnez.tools.search import compile_glob

Verdict = Literal["allow", "ask", "deny"]
_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_SEPARATORS = ("&&", "||", "|&", ";", "|", "&", "\n", ")")
MODE_HINT = "Press Shift+Tab to switch the permission mode to ask or accept-edits."


@dataclass(frozen=True)
class Decision:
    """Whether a call may run, must be approved by the user, or is refused, and why."""

    verdict: Verdict
    reason: str


def split_command(command: str) -> list[str]:
    """The simple commands of a command line.

    Splits on `&&`, `||`, `;`, `|`, `&`, newlines and parentheses; the inside of `$(…)`, `<(…)`,
    `>(…)` and backticks becomes a command of its own, the substitution leaving the outer command
    (`echo "$(id)"` gives `echo ""` and `id`). Quotes keep `;|&` literal; substitutions count even
    inside double quotes, as bash runs them there too. Redirections like `2>&1` do not split.
    """
    return _CommandSplitter(command).split()


class _CommandSplitter:
    """A single pass over a command line with a stack for nested substitutions."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.parts: list[str] = []
        self.current: list[str] = []
        self.quote: str | None = None
        self.stack: list[tuple[list[str], str | None, str]] = []
        """Outer command text, its quote state, and the closer (`)` or a backtick) awaited."""

    def split(self) -> list[str]:
        index = 0
        while index < len(self.command):
            index = self._step(index)
        self._flush()
        while self.stack:  # unclosed substitutions: keep what was read of the outer commands
            self.current, self.quote, _ = self.stack.pop()
            self._flush()
        return self.parts

    def _step(self, index: int) -> int:
        command, char = self.command, self.command[index]
        if self.quote == "'":
            self.quote = None if char == "'" else "'"
            self.current.append(char)
            return index + 1
        if char == "\\" and index + 1 < len(command):
            self.current.append(command[index : index + 2])
            return index + 2
        opener = next((sep for sep in _OPENERS if command.startswith(sep, index)), None)
        if opener and (self.quote is None or opener in ("$(", "`")) and not self._closes(char):
            self.stack.append((self.current, self.quote, "`" if opener == "`" else ")"))
            self.current, self.quote = [], None
            return index + len(opener)
        if self._closes(char):
            self._flush()
            self.current, self.quote, _ = self.stack.pop()
            return index + 1
        separator = None if self.quote else _separator_at(command, index)
        if separator:
            self._flush()
            return index + len(separator)
        if char in "'\"" and self.quote in (None, char):
            self.quote = None if self.quote else char
        self.current.append(char)
        return index + 1

    def _closes(self, char: str) -> bool:
        return self.quote is None and bool(self.stack) and self.stack[-1][2] == char

    def _flush(self) -> None:
        text = "".join(self.current).strip()
        if text:
            self.parts.append(text)
        self.current = []


_OPENERS = ("$(", "<(", ">(", "`", "(")


def _separator_at(command: str, index: int) -> str | None:
    for separator in _SEPARATORS:
        if not command.startswith(separator, index):
            continue
        if separator == "&" and _is_redirection(command, index):
            return None
        return separator
    return None


def _is_redirection(command: str, index: int) -> bool:
    """Whether the `&` at `index` belongs to a redirection such as `2>&1`, `>&2` or `&>file`."""
    before = command[index - 1] if index else ""
    after = command[index + 1] if index + 1 < len(command) else ""
    return (before != "" and before in "<>") or after == ">"


class SessionGrants:
    """ "Allow for this session" answers.

    A tool grant covers that tool's calls inside the workspace. A shell grant covers exact simple
    commands (each part of a compound command is granted on its own) or, when granted explicitly,
    every command starting with a prefix word by word. Paths outside the workspace are granted one
    by one (a granted directory covers what lies under it).
    """

    def __init__(self) -> None:
        self._tools: set[str] = set()
        self._commands: set[str] = set()
        self._prefixes: set[str] = set()
        self._paths: set[Path] = set()

    def allow_tool(self, name: str) -> None:
        self._tools.add(name)

    def allow_command(self, command: str) -> None:
        self._commands.update(split_command(command))

    def allow_command_prefix(self, prefix: str) -> None:
        self._prefixes.add(" ".join(prefix.split()))

    def allow_path(self, path: Path) -> None:
        self._paths.add(Path(os.path.realpath(path)))

    def record(self, tool: Tool, args: ToolParams, workspace: Path) -> dict[str, Any]:
        """Remember an "allow for this session" answer to a call that asked; returns the grant.

        The grant (JSON) says exactly what the person allowed — the tool, the simple commands of a
        shell line, the paths outside the workspace — and is stored with the answer, so a restart
        rebuilds grants from it, never from a provider-chosen call id.
        """
        if tool.kind == "shell":
            grant: dict[str, Any] = {"tool": tool.name, "commands": split_command(_command_of(args))}
        else:
            outside = [str(t.path) for t in tool.targets(args, workspace) if not t.inside]
            grant = {"tool": tool.name, "paths": outside}
        self.apply(grant)
        return grant

    def apply(self, grant: dict[str, Any]) -> None:
        """Grant again what a stored grant (from `record`) says."""
        commands = grant.get("commands")
        if isinstance(commands, list):
            self._commands.update(str(c) for c in commands)
            return
        self.allow_tool(str(grant.get("tool")))
        for path in grant.get("paths") or []:
            self.allow_path(Path(str(path)))

    def covers_tool(self, name: str) -> bool:
        return name in self._tools

    def covers_command(self, part: str) -> bool:
        words = part.split()
        normalized = " ".join(words)
        return (
            normalized in self._commands
            or part in self._commands
            or any(words[: len(prefix.split())] == prefix.split() for prefix in self._prefixes)
        )

    def covers_path(self, path: Path) -> bool:
        return any(path == granted or granted in path.parents for granted in self._paths)


def _command_of(args: ToolParams) -> str:
    """The command line of a shell tool's arguments (every shell tool's parameters name it `command`)."""
    command = args.model_dump().get("command")
    if not isinstance(command, str):
        raise TypeError(f"{type(args).__name__} has no command: a shell tool's parameters must have one.")
    return command


def decide(
    tool: Tool, args: ToolParams, workspace: Path, settings: PermissionSettings, grants: SessionGrants
) -> Decision:
    """Whether a validated call may run now (`allow`), needs the user (`ask`), or is refused (`deny`)."""
    if settings.mode == "read-only" and not tool.read_only:
        return Decision("deny", f"The session is in read-only mode, so {tool.name} cannot run. {MODE_HINT}")
    rule = configured_rule(tool, settings)
    if rule is not None and rule[0] == "deny":
        return Decision("deny", f"Settings deny the {tool.name} tool (permissions.tools.{rule[1]}).")
    if tool.kind == "shell":
        return _decide_shell(_command_of(args), settings, grants)
    rules = [
        (target, _path_rule(target, workspace, settings.paths)) for target in tool.targets(args, workspace)
    ]
    by_path = _decide_paths(tool, rules, workspace, grants)
    if by_path is not None:
        return by_path
    verdict, reason = _tool_default(tool, settings)
    if verdict == "ask" and grants.covers_tool(tool.name):
        return Decision("allow", f"{tool.name} was allowed for this session.")
    return Decision(verdict, reason)


def _decide_paths(
    tool: Tool,
    rules: list[tuple[WorkspacePath, tuple[Verdict | None, str]]],
    workspace: Path,
    grants: SessionGrants,
) -> Decision | None:
    """The decision forced by the paths a call touches, or None to fall back to the tool's rule."""
    for target, (rule, pattern) in rules:
        if rule == "deny":
            return Decision(
                "deny", f"Settings deny access to {target.path} (permissions.paths.deny {pattern!r})."
            )
    for target, (rule, pattern) in rules:
        if rule == "ask":
            return Decision("ask", f"{target.path} matches permissions.paths.ask {pattern!r}.")
    for target, (rule, _) in rules:
        if not target.inside and rule != "allow" and not grants.covers_path(target.path):
            return Decision("ask", f"{tool.name} touches {target.path}, outside the workspace {workspace}.")
    if rules and all(rule == "allow" for _, (rule, _) in rules):
        return Decision("allow", "Its paths match permissions.paths.allow.")
    return None


def configured_rule(tool: Tool, settings: PermissionSettings) -> tuple[Verdict, str] | None:
    """The `permissions.tools` rule set for the tool and the name it is set under: its name, or for an
    MCP tool offered under a cut name its whole name too (the stricter when both are set), or None."""
    rules = [(settings.tools[name], name) for name in tool.rule_names if name in settings.tools]
    return max(rules, key=lambda rule: _RANK[rule[0]], default=None)


def _tool_default(tool: Tool, settings: PermissionSettings) -> tuple[Verdict, str]:
    configured = configured_rule(tool, settings)
    if configured is not None:
        return configured[0], f"permissions.tools.{configured[1]} is {configured[0]!r}."
    if tool.kind == "read":
        return "allow", "Reading inside the workspace is allowed."
    if tool.kind == "edit" and settings.mode == "accept-edits":
        return "allow", "Edits inside the workspace are accepted in accept-edits mode."
    what = {"edit": "Edits", "remote": "Calls to MCP servers' tools"}.get(tool.kind, "Shell commands")
    return "ask", f"{what} need approval in {settings.mode} mode."


def _decide_shell(command: str, settings: PermissionSettings, grants: SessionGrants) -> Decision:
    parts = split_command(command) or [command.strip()]
    rules = settings.shell
    for subject in [command, *parts]:
        pattern = _first_match(subject, rules.deny)
        if pattern is not None:
            return Decision(
                "deny", f"Settings deny `{subject.strip()}` (permissions.shell.deny {pattern!r})."
            )
    for subject in [command, *parts]:
        pattern = _first_match(subject, rules.ask)
        if pattern is not None:
            return Decision("ask", f"`{subject.strip()}` matches permissions.shell.ask {pattern!r}.")
    base, base_reason = _shell_default(settings, command)
    pending = [part for part in parts if _part_verdict(part, base, rules, grants) == "ask"]
    if pending:
        if len(parts) == 1:
            return Decision("ask", base_reason)
        listed = ", ".join(f"`{part}`" for part in pending)
        return Decision("ask", f"{base_reason} Not allowed by a rule or grant: {listed}.")
    return Decision("allow", "Every part of the command is allowed by settings or a session grant.")


def _shell_default(settings: PermissionSettings, command: str) -> tuple[Verdict, str]:
    configured = settings.tools.get("shell")
    if configured is not None:
        return configured, f"permissions.tools.shell is {configured!r}."
    declared = settings.shell.programs
    if declared is not None and check_programs(command, declared) is None:
        return "allow", "Every program the command starts is declared (permissions.shell.programs)."
    return "ask", f"Shell commands need approval in {settings.mode} mode."


def _part_verdict(part: str, base: Verdict, rules: ShellRules, grants: SessionGrants) -> Verdict:
    if _first_match(part, rules.allow) is not None or grants.covers_command(part):
        return "allow"
    return base


def _first_match(subject: str, patterns: list[str]) -> str | None:
    text = subject.strip()
    return next((pattern for pattern in patterns if fnmatch.fnmatchcase(text, pattern)), None)


def _path_rule(target: WorkspacePath, workspace: Path, rules: PathRules) -> tuple[Verdict | None, str]:
    """The strongest path rule matching a target (deny beats ask beats allow), with its pattern."""
    best: tuple[Verdict | None, str] = (None, "")
    for verdict, patterns in (("allow", rules.allow), ("ask", rules.ask), ("deny", rules.deny)):
        for pattern in patterns:
            if _path_matches(target, workspace, pattern) and _RANK[verdict] >= _RANK.get(best[0] or "", -1):
                best = (verdict, pattern)  # type: ignore[assignment]
    return best


def _path_matches(target: WorkspacePath, workspace: Path, pattern: str) -> bool:
    expanded = os.path.expanduser(pattern)
    regex = compile_glob(expanded.lstrip("/") if expanded.startswith("/") else expanded.removeprefix("./"))
    if "/" not in expanded:
        return regex.match(target.path.name) is not None
    if expanded.startswith("/"):
        return regex.match(target.path.as_posix().lstrip("/")) is not None
    if not target.inside:
        return False
    return regex.match(target.path.relative_to(real_workspace(workspace)).as_posix()) is not None
