"""Slash commands and keys: their registry, the parser for typed commands, the palette's loader."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A command typed as `/name argument` or chosen in the command palette."""

    name: str
    usage: str
    help: str
    during_task: bool = True
    """Whether it runs while this process runs a task in the session. Those that would leave the task
    to run unseen (its approvals unanswered: /new, /resume) or change what it works with (/model,
    /compact) are refused until it ends, as Codex refuses them (`available_during_task`)."""
    changes_session: bool = False
    """Whether it writes into the session what its tasks work with (/model, /compact): refused too while
    another process runs a task there, among whose events its own would land."""


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("session-name", "/session-name <name>", "Rename this session (saved at once)."),
    SlashCommand("new", "/new", "Start a new session in this workspace.", during_task=False),
    SlashCommand("resume", "/resume", "Open the resume picker.", during_task=False),
    SlashCommand(
        "parent",
        "/parent",
        "Open the session this one came from: an imported one's fork, resume or parent, or the "
        "session whose sub-agent made this one.",
    ),
    SlashCommand(
        "model",
        "/model [<provider>/<model>[:<thinking>]]",
        "Change this session's model; without an argument, pick from a list.",
        during_task=False,
        changes_session=True,
    ),
    SlashCommand(
        "compact",
        "/compact",
        "Summarise the older conversation now (the full history is kept).",
        during_task=False,
        changes_session=True,
    ),
    SlashCommand("help", "/help", "List keys and commands."),
    SlashCommand("quit", "/quit", "Quit Harnez."),
)

ALIASES: dict[str, str] = {
    "clear": "new",
    "exit": "quit",
    "sessions": "resume",
    "models": "model",
    "rename": "session-name",
}
"""Names the peers use for the same commands (Claude Code's `/clear` and `/exit`, OpenCode's
`/sessions` and `/models`, …): accepted as typed, listed by /help beside the command they run."""

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "Send the prompt (queued while a task runs); with the completion menu open, accept."),
    ("Shift+Enter, Ctrl+J", "Insert a newline."),
    ("Up / Down", "Walk the prompt history (at the first / last line); with the menu open, move in it."),
    ("/", "At the start of the prompt: complete a slash command."),
    ("@path", "Complete a workspace file; the model receives the file's contents with the prompt."),
    ("!command", "Run a shell command in the workspace; shown and saved, not sent to the model."),
    ("!!command", "The same, and its output is shared with the model for the next task."),
    ("Tab", "Accept the highlighted completion."),
    ("Ctrl+S", "Send the prompt as a steering message into the running task."),
    ("Esc", "Close the completion menu; otherwise cancel the running task (or a running `!` command)."),
    ("Ctrl+C", "Clear the prompt (Up brings it back); press again within 2 s to quit."),
    ("Shift+Tab", "Cycle the permission mode: ask, accept-edits, read-only."),
    ("Page Up / Page Down", "Scroll the transcript (at its end, it follows the stream again)."),
    ("Ctrl+End", "Back to the transcript's end, following it again."),
    ("Ctrl+P", "Open the command palette."),
    ("Ctrl+N", "Every notification of this run, in full (a long one shows only its first sentence)."),
    ("Ctrl+Q", "Quit."),
)

PICKER_KEYS: tuple[tuple[str, str], ...] = (
    ("type", "Search titles, workspaces, ids and conversation text."),
    ("Up / Down", "Move the selection."),
    ("Page Up / Page Down", "Move the selection by the rows in view."),
    ("Enter", "Open the selected session."),
    ("Ctrl+T", "Toggle this workspace / all workspaces."),
    ("Ctrl+R", "Rename the selected session."),
    ("Ctrl+D", "Delete the selected session (asks first)."),
    ("Esc", "Close the picker."),
)

APPROVAL_KEYS: tuple[tuple[str, str], ...] = (
    ("y, Enter", "Allow the tool call once."),
    ("a", "Allow it for this session (the same command, or the tool inside the workspace)."),
    ("n", "Deny; type an optional reason for the model, Enter sends (Esc goes back)."),
    ("Esc", "Deny without a reason; the task goes on (nothing is cancelled)."),
    ("x", "Stop the task: the call is withdrawn and the task ends cancelled."),
    ("Up / Down, PgUp / PgDn", "Scroll a long command or diff."),
)


class SlashCommandError(ValueError):
    """A slash command that cannot run as typed: the prompt keeps it, to be mended."""


class UnknownCommandError(SlashCommandError):
    """A `/word` that names no command."""


def parse_slash(text: str) -> tuple[SlashCommand, str] | None:
    """The command and its argument when `text` is a slash command, else None.

    A first word with another `/` in it is a path (`/etc/hosts is wrong`, pasted or typed), not a
    command: the prompt is sent as it is (it was refused as an unknown command, and cleared)."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    first_word = stripped[1:].split(maxsplit=1)[:1]
    if first_word and "/" in first_word[0]:
        return None
    name, _, argument = stripped[1:].partition(" ")
    name = ALIASES.get(name, name)
    for command in COMMANDS:
        if command.name == name:
            if argument.strip() and " " not in command.usage:
                # `/compact keep the API notes` ran /compact and dropped the words without a word.
                raise SlashCommandError(f"/{name} takes no argument: send /{name} alone. {command.help}")
            return command, argument.strip()
    known = ", ".join(f"/{c.name}" for c in COMMANDS)
    raise UnknownCommandError(f"Unknown command /{name}. Commands: {known}.")


def help_markdown() -> str:
    """The /help text: keys, then commands."""
    lines = ["# Keys", "", "| key | does |", "|---|---|"]
    lines += [f"| {key} | {does} |" for key, does in KEYS]
    lines += ["", "# Commands", "", "| command | does |", "|---|---|"]
    lines += [f"| `{c.usage}` | {c.help}{_also(c.name)}{_when(c)} |" for c in COMMANDS]
    lines += ["", "# Resume picker", "", "| key | does |", "|---|---|"]
    lines += [f"| {key} | {does} |" for key, does in PICKER_KEYS]
    lines += ["", "# Approval prompt", "", "| key | does |", "|---|---|"]
    lines += [f"| {key} | {does} |" for key, does in APPROVAL_KEYS]
    return "\n".join(lines)


def _when(command: SlashCommand) -> str:
    """For /help: when a command waits for the running task to end."""
    return "" if command.during_task else " Not while a task runs (Esc stops it)."


def _also(name: str) -> str:
    """The aliases of a command, for /help (" Also `/clear`.")."""
    names = [f"`/{alias}`" for alias, target in ALIASES.items() if target == name]
    return f" Also {', '.join(names)}." if names else ""
