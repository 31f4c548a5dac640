"""Command-line entry: parse arguments, load settings, open the server, hand over to a front end."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from harnez.errors import HarnezError, SessionNotFoundError, UsageError
from harnez.text import json_line, printable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_CANCELLED = 0, 1, 2, 3, 130


def _at_least_one(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a step budget, a page size)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _per_minute(text: str) -> int:
    """An argparse type: a whole number of at least 0 (0: no limit)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number (0 for no limit), got {text!r}")
    return value


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0 to 65535 (0 picks a free one). A larger number was passed on and
    the system took it modulo 65536: `--port 99999` listened on 34463 without a word."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(
            f"expected a port from 0 to 65535 (0 picks a free one), got {text!r}"
        )
    return value


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def _folder(text: str) -> Path:
    """An argparse type: a folder, `~` expanded (a quoted `~/x` means the same in every command). An empty
    value (an unset shell variable, `--session-dir "$DIR"`) is refused instead of read as the current
    folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder, got an empty value")
    return Path(text).expanduser()


def _session_to_resume(text: str) -> str:
    """An argparse type: `latest` or a session id. An empty value (`--resume "$ID"` with ID unset) is
    refused instead of read as the newest session, and one that is not hexadecimal as `events` and
    `sessions show` refuse it (it was looked up in every project, as if one might exist)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "expected `latest` or a session id (a unique prefix is enough), got an empty value"
        )
    return _session_id(text)


def _session_or_picker(text: str) -> str:
    """An argparse type for `harnez --resume`: empty opens the picker; anything else is a session id
    (or `latest`) refused as `run --resume` refuses it when it is not hexadecimal, before the app
    starts (it opened, then closed with the error)."""
    return _session_id(text) if text.strip() else ""


def _session_id(text: str) -> str:
    """An argparse type: a session id or a unique prefix of one. An empty value (`--session "$ID"` with
    ID unset) is refused as `--resume`'s is, instead of looked up in every project as the prefix ''."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "expected a session id (a unique prefix is enough), got an empty value"
        )
    wanted = text.strip()
    if wanted != "latest" and any(c not in "0123456789abcdef" for c in wanted.lower()):
        # Looked up in every project, it was answered 'No session id starts with …', as if one might.
        raise argparse.ArgumentTypeError(
            f"expected a session id, 32 hexadecimal digits such as 3f2a9c0b… (a unique prefix is enough; "
            f"`harnez sessions` lists them), or `latest`; got {text!r}"
        )
    return wanted


class _Version(argparse.Action):
    """`--version`: the installed version, looked up only when asked (it costs an import)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=argparse.SUPPRESS,
            help="print Harnez's version and exit",
            **kwargs,
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib import metadata

        try:
            version = metadata.version("harnez")
        except metadata.PackageNotFoundError:
            version = "(not installed: running from a source tree)"
        print(f"harnez {version}")
        parser.exit()


class _CommandParser(argparse.ArgumentParser):
    """A command's parser (`harnez run`, …) refuses an option it does not know itself, with its own
    usage: left to the top parser, `harnez run --bogus` printed `harnez`'s usage, which lists none of
    the options of `run`."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def _session_dir(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """`--session-dir DIR`, on every command that touches the database; given before or after the command."""
    parser.add_argument(
        "--session-dir",
        type=_folder,
        metavar="DIR",
        default=None if top else argparse.SUPPRESS,
        help="keep the database in DIR (like HARNEZ_DATABASE_PATH=DIR/harnez.sqlite)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harnez", description="A coding agent for the terminal.")
    parser.add_argument("--version", action=_Version)
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        type=_session_or_picker,
        metavar="ID",
        help="open the resume picker, or the session with this id (a unique prefix is enough)",
    )
    parser.add_argument(
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="open the newest session of this workspace",
    )
    parser.add_argument("--model", help="model to use, <provider>/<model>[:<thinking>]")
    _session_dir(parser, top=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
    for add in (_add_sessions, _add_headless, _add_read, _add_import, _add_serve, _add_events):
        add(commands)
    return parser


def _add_sessions(commands: Any) -> None:
    """`harnez sessions [show]`."""
    sessions = commands.add_parser("sessions", help="list saved sessions, newest first")
    sessions.add_argument(
        "--all", action="store_true", help="every workspace of every project, not only this one"
    )
    sessions.add_argument("--search", metavar="Q", help="full-text search over titles and conversations")
    sessions.add_argument(
        "--limit",
        type=_at_least_one,
        default=50,
        metavar="N",
        help="list at most N sessions (default 50); stderr says when more are left",
    )
    sessions.add_argument("--json", action="store_true", help="one JSON object per line")
    _session_dir(sessions)
    shown = sessions.add_subparsers(dest="sessions_command", metavar="show")
    show = shown.add_parser("show", help="print a session's transcript")
    show.add_argument(
        "id",
        type=_session_id,
        help="the session's id (a unique prefix is enough), or `latest`: this workspace's newest",
    )
    show.add_argument("--json", action="store_true", help="the stored events as JSON Lines")
    _session_dir(show)


def _add_headless(commands: Any) -> None:
    """`harnez run` and `harnez chat`."""
    for name, text in (
        ("run", "run one task without the full-screen app and print the answer"),
        ("chat", "a line-by-line chat on stdin, one session; `exit` or EOF ends"),
    ):
        sub = commands.add_parser(name, help=text)
        if name == "run":
            sub.add_argument(
                "prompt", nargs="?", help="the prompt (or --input TEXT); `-` or none: read stdin"
            )
            sub.add_argument("--input", metavar="TEXT", help="the prompt, as an option")
        _add_answers_and_hooks(sub, name)
        sub.add_argument("--model", dest="run_model", metavar="M", help="<provider>/<model>[:<thinking>]")
        sub.add_argument(
            "--resume",
            dest="run_resume",
            type=_session_to_resume,
            metavar="latest|ID",
            help="continue a saved session",
        )
        _session_dir(sub)
        sub.add_argument("--no-session", action="store_true", help="write nothing to any database")
        sub.add_argument(
            "--max-steps",
            type=_at_least_one,
            metavar="N",
            help="stop (incomplete, exit 3) after N model turns",
        )
        sub.add_argument(
            "--timeout", type=_seconds, metavar="SECONDS", help="stop (incomplete, exit 3) after this long"
        )
        sub.add_argument(
            "--approve",
            choices=("deny", "allow"),
            default="deny",
            help="answer for tools that need approval (default deny; the model sees the refusal)",
        )
        sub.add_argument("--json", action="store_true", help="print every event as one JSON object per line")
        _run_flags(sub)


def _run_flags(sub: argparse.ArgumentParser) -> None:
    """`run` and `chat`: an ad-hoc provider, the workspace and the declared programs (docs/headless.md)."""
    sub.add_argument(
        "--base-url",
        metavar="URL",
        help="the endpoint of the model's provider for this run (no settings needed)",
    )
    sub.add_argument(
        "--wire",
        choices=("openai-chat", "openai-responses", "anthropic-messages"),
        help="the protocol that endpoint speaks",
    )
    sub.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the environment variable holding its key (the name, not the key)",
    )
    sub.add_argument(
        "--workspace", type=_folder, metavar="DIR", help="work in DIR instead of the current folder"
    )
    sub.add_argument(
        "--programs",
        type=_program_list,
        metavar="P1,P2,…",
        help="the only programs the shell tool may start, e.g. git,pytest",
    )


def _program_list(text: str) -> tuple[str, ...]:
    """An argparse type: comma-separated program names (`git,pytest`), each a bare name or an absolute path."""
    from harnez.settings import program_name_problem

    names = tuple(name.strip() for name in text.split(","))
    if not any(names):
        raise argparse.ArgumentTypeError(
            "name at least one program, e.g. --programs git,pytest (to run no command at all, deny the "
            "shell tool: permissions.tools.shell = deny)"
        )
    for name in names:
        problem = program_name_problem(name)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
    return names


def _add_answers_and_hooks(sub: argparse.ArgumentParser, name: str) -> None:
    """`--output-schema` (run) and `--trust-hooks` (run and chat): docs/headless.md, docs/hooks.md."""
    if name == "run":
        sub.add_argument(
            "--output-schema",
            type=Path,
            metavar="FILE",
            help="a JSON Schema: the model answers through an answer tool; prints that JSON answer",
        )
    sub.add_argument(
        "--trust-hooks", action="store_true", help="trust this project's hooks as they are now (remembered)"
    )


def _add_read(commands: Any) -> None:
    """`harnez read`."""
    read = commands.add_parser(
        "read", help="read Claude Code, Codex, OpenCode or pi sessions (nothing is imported)"
    )
    read.add_argument(
        "path", type=Path, help="a session file, an OpenCode database or store folder, or a HOME to search"
    )
    read.add_argument(
        "--harness",
        choices=("claude-code", "codex", "opencode", "pi"),
        help="the format (default: recognised)",
    )
    read.add_argument(
        "--session", metavar="ID", help="only the session (or sub-agent) with this id or id prefix"
    )
    read.add_argument("--summary", action="store_true", help="figures only, read in one streaming pass")
    read.add_argument("--json", action="store_true", help="one JSON object per session")
    read.add_argument(
        "--strict", action="store_true", help="an unparsable record is an error, not counted and skipped"
    )


def _add_import(commands: Any) -> None:
    """`harnez import`."""
    imports = commands.add_parser(
        "import", help="import Claude Code, Codex, OpenCode and pi sessions into this database"
    )
    imports.add_argument(
        "--harness",
        choices=("claude-code", "codex", "opencode", "pi"),
        action="append",
        help="only this harness (repeat for several; default: all four)",
    )
    imports.add_argument(
        "--home", type=_folder, default=None, metavar="DIR", help="the HOME to search (default: yours)"
    )
    imports.add_argument(
        "--since", metavar="DATE", help="only sessions changed since DATE (YYYY-MM-DD or ISO time)"
    )
    imports.add_argument("--json", action="store_true", help="print the report as one JSON object")
    _session_dir(imports)


def _add_serve(commands: Any) -> None:
    """`harnez serve`."""
    serve = commands.add_parser("serve", help="serve the Unified Harness Protocol over HTTP (docs/uhp.md)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=_port, default=3000, help="port to listen on (default 3000; 0 picks one)"
    )
    serve.add_argument(
        "--token-env",
        default="HARNEZ_SERVE_TOKEN",
        metavar="NAME",
        help="environment variable holding the bearer token of the principal 'default'",
    )
    serve.add_argument(
        "--principal",
        action="append",
        default=[],
        metavar="NAME=VARIABLE",
        help="another principal: its name and the environment variable holding its token (repeatable); "
        "each sees only what it made",
    )
    serve.add_argument(
        "--approve",
        choices=("deny", "allow"),
        default="deny",
        help="answer for tools that need approval (default deny; the model sees the refusal)",
    )
    serve.add_argument(
        "--workspaces",
        type=_folder,
        metavar="DIR",
        help="where each HTTP session gets its own folder (default: beside the database)",
    )
    serve.add_argument(
        "--workspace",
        type=_folder,
        metavar="DIR",
        help="a fixed workspace for every session of the default harness (a shared repository)",
    )
    serve.add_argument(
        "--max-tasks",
        type=_at_least_one,
        metavar="N",
        help="tasks that may run at once; one more is refused with 429 rate_limited (default 64)",
    )
    serve.add_argument(
        "--tasks-per-minute",
        type=_per_minute,
        metavar="N",
        help="tasks each principal may create per minute; one more is refused with 429 rate_limited "
        "(default 600; 0: no limit)",
    )
    _session_dir(serve)


def _add_events(commands: Any) -> None:
    """`harnez events`."""
    events = commands.add_parser("events", help="a session's stored event log as JSON Lines")
    events.add_argument(
        "--session",
        required=True,
        type=_session_id,
        metavar="ID",
        help="the session's id (a unique prefix is enough), or `latest`: this workspace's newest",
    )
    events.add_argument("--after", type=int, default=0, metavar="N", help="only events with seq > N")
    events.add_argument("--follow", action="store_true", help="keep printing events as they are appended")
    _session_dir(events)


def main(argv: Sequence[str] | None = None) -> int:
    """Run Harnez; returns the process exit code."""
    _open_closed_standard_streams()
    parser = _parser()
    args = parser.parse_args(argv)
    if args.continue_latest and args.resume is not None:
        # Each chooses the session to open: argparse took both, and --resume was ignored without a word.
        parser.error(
            "--continue (the newest session of this workspace) and --resume (the picker, or the "
            "session named) each choose the session to open: pass one of them"
        )
    try:
        if args.command in ("run", "chat"):
            return _headless(args)
        if args.command == "read":
            return _read(args)
        if args.command == "import":
            return asyncio.run(_import(args))
        if args.command == "serve":
            return asyncio.run(_serve(args))
        return asyncio.run(_dispatch(args)) if args.command else _tui(args)
    except HarnezError as exc:
        from harnez.redaction import redact

        print(f"harnez: {printable(redact(exc.message))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_CANCELLED
    except BrokenPipeError:
        # The reader went away (`harnez run --json | head`): stop quietly, as other tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED


def _open_closed_standard_streams() -> None:
    """A standard stream its caller closed (`harnez run <&-`, `>&-`) is /dev/null instead of None: stdin
    reads as empty and output goes nowhere, as with a redirection to /dev/null, instead of a traceback.
    The descriptor is taken, so no database or socket opened later lands on 0, 1 or 2."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False))  # noqa: SIM115 (for the whole run)


def _workspace() -> Path:
    """The current folder, the workspace of every command without `--workspace`."""
    try:
        folder = Path.cwd().resolve()
    except FileNotFoundError:
        # A folder removed under the shell (a cleaned CI checkout, `git worktree remove`): a traceback before.
        raise UsageError(
            "The current folder no longer exists (it was deleted or moved after this shell entered it): "
            "cd to a folder that exists, or name the workspace with --workspace DIR (run, chat)."
        ) from None
    return _text_path(folder)


def _text_path(folder: Path) -> Path:
    """A workspace whose path is text: a session stores its workspace as UTF-8, and a folder named with
    other bytes (Latin-1 from an old archive: `caf\xe9`) failed with a traceback at the first write,
    after the database was made."""
    try:
        str(folder).encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"The path of the folder {folder} is not UTF-8 text, and a session stores its workspace as "
            "text: rename the folder (convmv -f latin1 -t utf8 converts such names), or work in another."
        ) from None
    return folder


def _settings(workspace: Path):  # -> Settings; imported here to keep `harnez --help` light
    from harnez.settings import load_settings

    settings = load_settings(workspace)
    for warning in settings.warnings:
        print(f"harnez: warning: {warning}", file=sys.stderr)
    return settings


def _database(args: argparse.Namespace, workspace: Path, settings) -> Path:
    """The database a command uses: `--session-dir DIR`, else HARNEZ_DATABASE_PATH or the settings',
    else the project's (`harnez.paths.project_root`)."""
    if args.session_dir is not None:
        return _session_dir_database(args.session_dir)
    return settings.database_file(workspace, os.environ)


def _session_dir_database(folder: Path) -> Path:
    """The database of `--session-dir DIR`."""
    return (folder / "harnez.sqlite").expanduser().resolve()


async def _open_server(
    workspace: Path, settings, *, with_agent: bool = False, database: Path | None = None
):  # -> Server
    from harnez.server import Server
    from harnez.server.projects import remember_database

    database = database if database is not None else settings.database_file(workspace, os.environ)
    if not with_agent:
        server = await Server.open(database, settings)
        notices = [*server.notices, remember_database(server.database)]
        for notice in filter(None, notices):
            print(f"harnez: note: {notice}", file=sys.stderr)
        return server
    from harnez.server.factory import open_agent_server

    # Only the TUI opens the server with the agent here: its approval prompt answers the calls that ask.
    return await open_agent_server(database, settings, approve="ask")


async def _dispatch(args: argparse.Namespace) -> int:
    workspace = _workspace()
    settings = _settings(workspace)
    database = _database(args, workspace, settings)
    if args.command == "sessions" and args.sessions_command != "show":
        return await _list_sessions(database if database.exists() else None, workspace, settings, args)
    wanted = args.id if args.command == "sessions" else args.session
    if wanted == "latest":
        server = await _server_of_latest(database, workspace, settings, args)
    else:
        server = await _server_with(wanted, database, workspace, settings, elsewhere=args.session_dir is None)
    try:
        if args.command == "sessions":
            return await _show_session(server, args)
        return await _print_events(server, args)
    finally:
        await server.close()


async def _server_of_latest(database: Path, workspace: Path, settings, args: argparse.Namespace):  # -> Server
    """`latest` for `sessions show` and `events --session`, as `run --resume latest` takes it: the newest
    session of this workspace (it was looked up as an id and refused as not hexadecimal). Its id is put
    in `args` for the command."""
    if not database.exists():
        raise SessionNotFoundError(f"No saved session in {workspace}: there is no database at {database}.")
    server = await _open_server(workspace, settings, database=database)
    try:
        record = await server.newest_session(workspace)
    except SessionNotFoundError:
        await server.close()
        # The server's own words told to start one with `harnez`, which shows or prints nothing here.
        raise SessionNotFoundError(
            f"No saved session in {workspace}: `harnez sessions --all` lists those of every workspace."
        ) from None
    except BaseException:
        await server.close()
        raise
    setattr(args, "id" if args.command == "sessions" else "session", record.id)
    return server


async def _server_with(
    session: str, database: Path, workspace: Path, settings, *, elsewhere: bool
):  # -> Server
    """The server of the database holding a session: this project's, else (when `elsewhere`) the
    project the index of databases finds it in."""
    from harnez.server.projects import AllProjects

    if database.exists():
        server = await _open_server(workspace, settings, database=database)
        try:
            await server.get_session(session)
            return server
        except SessionNotFoundError:
            await server.close()
            if not elsewhere:
                raise
    elif not elsewhere:
        raise SessionNotFoundError(f"No session {session!r}: there is no database at {database}.")
    projects = AllProjects()
    try:
        _, found = await projects.locate(session)
    finally:
        projects.close()
    return await _open_server(workspace, settings, database=found)


async def _list_sessions(database: Path | None, workspace: Path, settings, args: argparse.Namespace) -> int:
    """`harnez sessions`: this workspace's sessions, or with --all every project's (no database is created)."""
    if database is None and not args.all:
        where = _database(args, workspace, settings)
        print(f"No sessions yet: there is no database at {where}.", file=sys.stderr)
        return EXIT_OK
    server = await _open_server(workspace, settings, database=database) if database is not None else None
    try:
        if args.all:
            from harnez.server.projects import AllProjects

            projects = AllProjects(server)
            try:
                page = await projects.page(args.search, None, args.limit)
            finally:
                projects.close()
            for reason in page.skipped:
                print(f"harnez: note: {printable(reason)}", file=sys.stderr)
        else:
            assert server is not None  # no --all: this project's database exists (checked above)
            page = await server.list_sessions(args.search, workspace, limit=args.limit)
    finally:
        if server is not None:
            await server.close()
    _print_listing(page, args)
    if page.sessions and page.next_cursor:
        # The listing stopped at --limit (50 unless given) without a word: older sessions looked absent.
        print(
            f"harnez: note: there are more sessions than --limit {args.limit} lists: raise it to see them.",
            file=sys.stderr,
        )
    if not page.sessions and not args.json:
        scope = "any project" if args.all else str(workspace)
        print(
            f"No sessions{' match ' + repr(args.search) if args.search else ''} in {scope}.", file=sys.stderr
        )
    return EXIT_OK


def _print_listing(page, args: argparse.Namespace) -> None:
    """Listed sessions, one line (or one JSON object) each; across projects, each names its project."""
    from harnez.server.projects import project_of

    databases = getattr(page, "databases", {})
    for record in page.sessions:
        database = databases.get(record.id)
        if args.json:
            snippet = page.snippets.get(record.id)
            where = {"project": str(project_of(database)), "database": str(database)} if database else {}
            print(json_line({**record.to_json(), **where, **({"snippet": snippet} if snippet else {})}))
        else:
            created = datetime.fromtimestamp(record.created_at).strftime("%Y-%m-%d %H:%M")
            origin = f"[{record.origin}] " if record.origin else ""
            project = f"{project_of(database).name}: " if database else ""
            line = (
                f"{record.id[:12]}  {created}  {record.status:<11}  {project}{origin}{record.display_title}  "
                f"({record.workspace})"
            )
            print(printable(line, one_line=True))


async def _show_session(server, args: argparse.Namespace) -> int:
    record = await server.get_session(args.id)
    events = await server.events_after(record.id)
    if args.json:
        for event in events:
            print(event.dumps())
        return EXIT_OK
    from harnez.transcript import endpoints_used, render_plain

    print(printable(f"# {record.display_title}", one_line=True))
    print(printable(f"{record.workspace} · {record.id} · {record.status}", one_line=True))
    for used in endpoints_used(events):
        print(printable(f"ran with {used}", one_line=True))
    origin = await server.session_origin(record.id)
    if origin:
        agent = f" (sub-agent {origin['agent_id']})" if origin["agent_id"] else ""
        print(
            printable(
                f"imported from {origin['harness']} session {origin['original_id']}{agent} · "
                f"{origin['source']}",
                one_line=True,
            )
        )
        for line in _import_link_lines(origin):
            print(printable(line, one_line=True))
    for line in await _delegation_lines(server, record.id):
        print(printable(line, one_line=True))
    print()
    sys.stdout.write(printable(render_plain(events)))
    return EXIT_OK


def _import_link_lines(origin: dict) -> list[str]:
    """`sessions show`'s lines on an imported session's links: the session it was forked from or ran
    under, and the imported sub-agents and forks of its own."""
    lines = []
    if origin["parent_original_id"]:
        relation = "sub-agent of" if origin["agent_id"] else "forked from"
        found = f" ({origin['parent_session']})" if origin["parent_session"] else " (not imported)"
        lines.append(f"{relation} {origin['harness']} session {origin['parent_original_id']}{found}")
    if origin["children"]:
        lines.append("imported sub-agents and forks: " + ", ".join(origin["children"]))
    return lines


async def _delegation_lines(server, session_id: str) -> list[str]:
    """`sessions show`'s lines on sub-agents: whose child the session is, and the children it has."""
    link = await server.delegation_of(session_id)
    lines = [f"sub-agent {link.agent} of session {link.parent} (call {link.call_id})"] if link else []
    children = await server.children(session_id)
    if children:
        lines.append("sub-agent sessions (open one with `harnez sessions show <id>`):")
    for child in children:
        ended = child.stop or child.child_status
        lines.append(f"  {child.child[:12]}  {child.agent:<12}  {ended:<11}  {child.child_title or ''}")
    return lines


async def _print_events(server, args: argparse.Namespace) -> int:
    record = await server.get_session(args.session)
    if not args.follow:
        for event in await server.events_after(record.id, args.after):
            print(event.dumps())
        return EXIT_OK
    async for event in server.subscribe(record.id, after=args.after, poll=0.2):
        print(event.dumps(), flush=True)
    return EXIT_OK


def _read(args: argparse.Namespace) -> int:
    from harnez.reading import ReadRequest, read_command

    return read_command(
        ReadRequest(args.path, args.harness, args.session, args.summary, args.json, args.strict)
    )


async def _import(args: argparse.Namespace) -> int:
    from harnez.reading import ProgressLine, import_report_text, parse_since

    since = parse_since(args.since)
    home = args.home.expanduser() if args.home is not None else Path.home()
    if not home.is_dir():
        raise UsageError(
            f"--home {home} is not a folder: name the HOME whose .claude, .codex, .local/share/opencode "
            "or .pi to import (without --home, yours)."
        )
    workspace = _workspace()
    settings = _settings(workspace)
    server = await _open_server(workspace, settings, database=_database(args, workspace, settings))
    try:
        progress = ProgressLine(sys.stderr)
        report = await server.import_sessions(
            home,
            workspace=workspace,
            harnesses=args.harness,
            since=since,
            progress=progress,
        )
        progress.done()
    finally:
        await server.close()
    print(json_line(report.to_json()) if args.json else printable(import_report_text(report)))
    return EXIT_OK


async def _serve(args: argparse.Namespace) -> int:
    """`harnez serve`: the server with the agent (approvals by --approve), behind the UHP application."""
    from harnez.http.principals import read_principals
    from harnez.http.serve import is_loopback
    from harnez.redaction import SECRETS

    variables = [args.token_env, *(spec.partition("=")[2] for spec in args.principal)]
    SECRETS.learn_all(v for v in variables if v)  # masked wherever they surface, withheld from shells
    principals = read_principals(args.token_env, args.principal, os.environ)
    if not principals and not is_loopback(args.host):
        raise UsageError(
            f"Refusing to serve on {args.host} without a token: export one in {args.token_env} "
            "(or name another variable with --token-env, or give --principal NAME=VARIABLE), "
            "or serve on 127.0.0.1."
        )
    workspace = _workspace()
    settings = _settings(workspace)
    database = _database(args, workspace, settings)
    fixed = args.workspace.resolve() if args.workspace is not None else None
    if fixed is not None and not fixed.is_dir():
        raise UsageError(f"--workspace {fixed} is not a folder; create it or name another.")
    from harnez.http.serve import serve
    from harnez.server.factory import open_agent_server
    from harnez.server.server import UHP_WORKSPACES

    server = await open_agent_server(database, settings, approve=args.approve)
    for notice in server.notices:
        print(f"harnez: note: {notice}", file=sys.stderr)
    try:
        await serve(
            server,
            host=args.host,
            port=args.port,
            principals=principals,
            fixed_workspace=fixed,
            max_tasks=args.max_tasks,
            tasks_per_minute=args.tasks_per_minute,
            workspaces=(args.workspaces or database.parent / UHP_WORKSPACES).resolve(),
        )
    finally:
        await server.close()
    return EXIT_OK


def _headless(args: argparse.Namespace) -> int:
    # SIGTERM or a hang-up before the loop takes them (settings, imports) ends the run as Ctrl-C does
    # (KeyboardInterrupt: exit 130) instead of killing it without a word.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    from harnez import headless
    from harnez.headless.provider import AdHocProvider

    workspace = _run_workspace(args.workspace)
    opts = headless.RunOptions(
        workspace,
        _settings(workspace),
        model=args.run_model,
        resume=args.run_resume,
        no_session=args.no_session,
        session_dir=args.session_dir,
        max_steps=args.max_steps,
        timeout=args.timeout,
        approve=args.approve,
        json=args.json,
        output_schema=_output_schema(getattr(args, "output_schema", None)),
        trust_hooks=args.trust_hooks,
        provider=AdHocProvider(args.base_url, args.wire, args.api_key_env),
        programs=args.programs,
        fixed_workspace=args.workspace is not None,
    )
    if args.command == "chat":
        return asyncio.run(headless.chat(opts, _StdinLines(sys.stdin.fileno())))
    if args.prompt is not None and args.input is not None:
        raise UsageError(
            'Give the prompt once: as an argument (`harnez run "fix the test"`) or with --input, not both.'
        )
    given = args.prompt if args.prompt is not None else args.input
    if args.prompt == "-":
        # stdin, as `cat -` reads it: sent as the prompt "-", it was a paid request for nothing
        prompt = _stdin_text()
    else:
        prompt = given if given is not None else ("" if sys.stdin.isatty() else _stdin_text())
    return asyncio.run(headless.run(opts, prompt))


def _output_schema(path: Path | None) -> dict | None:
    """The checked JSON Schema of `--output-schema`, or None (a bad file: exit 2, before anything opens)."""
    if path is None:
        return None
    from harnez.server.answers import load_output_schema

    return load_output_schema(path)


def _run_workspace(given: Path | None) -> Path:
    """`--workspace DIR` (an existing folder), else the current folder."""
    if given is None:
        return _workspace()
    folder = given.expanduser().resolve()
    if not folder.is_dir():
        raise UsageError(f"--workspace {folder} is not a folder: create it, or name another.")
    return _text_path(folder)


def _stdin_text() -> str:
    """All of stdin as UTF-8, whatever the locale; bytes that are not UTF-8 become U+FFFD."""
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")


class _StdinLines:
    """Lines of stdin ("" at its end), decoded like `_stdin_text`, read from its descriptor without
    Python's buffer: `harnez chat` reads them in a daemon thread that a signal may leave blocked, and a
    thread blocked in `sys.stdin.buffer` holds a lock the interpreter's shutdown takes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = b""
        self._ended = False

    def __call__(self) -> str:
        while b"\n" not in self._pending and not self._ended:
            chunk = os.read(self.fd, 65536)
            self._ended = not chunk
            self._pending += chunk
        line, newline, self._pending = self._pending.partition(b"\n")
        return (line + newline).decode("utf-8", errors="replace")


def _tui(args: argparse.Namespace) -> int:
    workspace = _workspace()
    loaded: list = []

    def settings():  # -> Settings; read by the app after its first frame (pydantic's import is slow)
        from harnez.settings import load_settings, parse_model_ref

        found = load_settings(workspace)
        if args.model:
            found = found.model_copy(update={"model": str(parse_model_ref(args.model))})
        loaded.append(found)
        return found

    def own_database() -> Path:  # asked once the settings are read
        return _database(args, workspace, loaded[-1])

    def open_server(database: Path | None = None):  # -> Awaitable[Server]; another project's when given
        return _open_server(workspace, loaded[-1], with_agent=True, database=database or own_database())

    def early_database() -> Path | None:  # known before the settings are read: the picker lists at once
        from harnez.paths import database_path_before_settings

        if args.session_dir is not None:
            return _session_dir_database(args.session_dir)
        return database_path_before_settings(workspace)

    if args.resume and args.resume != "latest":
        _check_session_exists(args.resume, early_database, workspace)
    from harnez.tui import run_tui

    return run_tui(
        open_server,
        workspace,
        resume=args.resume or None,
        open_picker=args.resume == "",
        continue_latest=args.continue_latest,
        model=args.model,
        load_settings=settings,
        database=own_database,
        early_database=early_database,
        session_dir=args.session_dir,
    )


def _check_session_exists(prefix: str, early_database: Callable[[], Path | None], workspace: Path) -> None:
    """Refuse `harnez --resume ID` before the app starts when no session id starts with ID, in the
    words of `run --resume` (the app opened, then closed with the error). This project's database is
    read directly (sqlite3, no store import); only when it does not hold the session are the other
    projects' looked up, as the app would. A database that cannot be read is left to the app."""
    database = early_database()
    if database is None:  # a settings file may name it: only then are they read here
        from harnez.settings import load_settings

        database = load_settings(workspace).database_file(workspace, os.environ)
    from harnez.server.lookup import sessions_starting_with

    found = sessions_starting_with(database, prefix)
    if found is None or found == 1:
        return
    if found > 1:
        raise SessionNotFoundError(f"Several sessions start with {prefix!r}; type more of the id.")
    from harnez.server.projects import AllProjects

    projects = AllProjects()
    try:
        asyncio.run(projects.locate(prefix))
    except SessionNotFoundError as exc:
        if "Several sessions" in exc.message:
            raise
        raise SessionNotFoundError(
            f"No session id starts with {prefix!r}. List them with `harnez sessions --all`."
        ) from None
    finally:
        projects.close()
