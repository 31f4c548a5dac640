"""Shared helpers of the TUI benchmarks: processes in a pty, frame hooks, seeded databases, isolated homes."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench_store_lib as lib
import generate_data

REPO = lib.REPO
PYTHON = Path(sys.executable)
HARNEZ = PYTHON.parent / "harnez"
COLUMNS, LINES = 120, 40
TUI_VERSION = 1
"""Bump when the seeded session databases change shape: cached ones of older versions are ignored."""

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]"
)


def strip_ansi(text: str) -> str:
    """Terminal output without its escape sequences (what a person would read, lines run together)."""
    return _ANSI.sub("", text)


# isolated homes ------------------------------------------------------------------------------


@dataclass
class Home:
    """A temporary HARNEZ_HOME with a settings.json that names a model, and a workspace folder."""

    root: Path
    database: Path

    @property
    def home(self) -> Path:
        """The global config folder."""
        return self.root / "home"

    @property
    def workspace(self) -> Path:
        """The folder harnez starts in."""
        return self.root / "workspace"

    def env(self) -> dict[str, str]:
        """The environment of a harnez process: this home, this database, a 256-colour terminal.

        Bytecode is written to (and read from) a folder of this home, whatever the caller's
        PYTHONDONTWRITEBYTECODE says: a process started with it set compiles every module that has
        no bytecode yet, at every start — harnez's own modules, never Textual's (installed with its
        bytecode) — which made harnez's start-up figures measure the compiler. The first run of each
        kind (the benchmarks' warm-up) writes it, as an installed or once-run harnez has it.
        """
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HARNEZ_", "TEXTUAL", "TMUX")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            PYTHONPYCACHEPREFIX=str(self.root / "bytecode"),
            HARNEZ_HOME=str(self.home),
            HARNEZ_DATABASE_PATH=str(self.database),
            TERM="xterm-256color",
            COLORTERM="truecolor",
            COLUMNS=str(COLUMNS),
            LINES=str(LINES),
        )
        return env


def make_home(database: Path | None = None) -> Home:
    """A fresh home whose settings set a local model (no first-run setup), over `database` or an empty one."""
    root = Path(tempfile.mkdtemp(prefix="harnez-bench-tui-"))
    home = Home(root, database or root / "harnez.sqlite")
    home.home.mkdir()
    home.workspace.mkdir()
    settings = {
        "providers": {"local": {"wire": "openai-chat", "base_url": "http://127.0.0.1:9/v1"}},
        "model": "local/x",
    }
    (home.home / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return home


def remove_home(home: Home) -> None:
    """Delete a home made by make_home (and the database in it)."""
    shutil.rmtree(home.root, ignore_errors=True)


# processes in a pty ----------------------------------------------------------------------------


@dataclass
class PtyProcess:
    """A process whose terminal is a pty this benchmark reads."""

    process: subprocess.Popen
    master: int
    started: float
    _raw: bytearray = field(default_factory=bytearray)
    _text: tuple[int, str] = (0, "")

    @property
    def output(self) -> str:
        """Everything read so far, escape sequences removed (decoded again only when more was read:
        a streaming screen writes megabytes, and decoding them all after every read slowed the reader)."""
        if self._text[0] != len(self._raw):
            self._text = (len(self._raw), strip_ansi(self._raw.decode("utf-8", "replace")))
        return self._text[1]

    def wait_for(self, texts: Sequence[str], timeout: float = 30.0) -> float:
        """Seconds from launch until the screen output contains every one of `texts`."""
        self._wait(lambda: all(t in self.output for t in texts), repr(texts), timeout)
        return time.perf_counter() - self.started

    def mark(self) -> int:
        """Where the output read so far ends (for `wait_for_after`)."""
        self._drain()
        return len(self._raw)

    def wait_for_after(self, mark: int, text: str, timeout: float = 30.0) -> float:
        """The moment (perf_counter) the output written after `mark` first holds `text`."""
        self._wait(
            lambda: text in strip_ansi(self._raw[mark:].decode("utf-8", "replace")), repr(text), timeout
        )
        return time.perf_counter()

    def found_after(self, mark: int, text: str) -> int:
        """Where in the output read so far `text` first shows as one run of bytes after `mark` (`mark`
        when it does not): a later `wait_for_after` from there sees what came with it in one read."""
        return max(self._raw.find(text.encode(), mark), mark)

    def wrote_after(self, mark: int, text: str) -> bool:
        """Whether the output read after `mark` holds `text` as one run of bytes (a word in one style)."""
        return self._raw.find(text.encode(), mark) >= 0

    def _wait(self, seen: Callable[[], bool], what: str, timeout: float) -> None:
        """Read output until `seen()` holds; TimeoutError (with the last output) after `timeout`."""
        deadline = time.monotonic() + timeout
        while not seen():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (self.process.poll() is not None and not self._readable(0)):
                raise TimeoutError(f"never saw {what}; last output: {self.output[-400:]!r}")
            if self._readable(min(remaining, 0.5)):
                self._read()

    def _drain(self) -> None:
        while self._readable(0):
            before = len(self._raw)
            self._read()
            if len(self._raw) == before:
                return

    def _readable(self, timeout: float) -> bool:
        return bool(select.select([self.master], [], [], timeout)[0])

    def _read(self) -> None:
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            return
        self._raw += chunk

    def rss_mb(self) -> float:
        """The process's resident set size (VmRSS), in MB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self, keys: bytes = b"\x11", timeout: float = 10.0) -> None:
        """Send the quit key (Ctrl+Q), drain the output until exit, kill after `timeout`."""
        with contextlib.suppress(OSError):
            os.write(self.master, keys)
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            if self._readable(0.05):
                self._read()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        os.close(self.master)


def write(process: PtyProcess, data: bytes) -> float:
    """Type `data` into the process's terminal; the moment (perf_counter) it was written."""
    moment = time.perf_counter()
    os.write(process.master, data)
    return moment


def launch(argv: Sequence[str], env: dict[str, str], cwd: Path) -> PtyProcess:
    """Start argv with a COLUMNS×LINES pty as its terminal; the clock starts just before the fork."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    started = time.perf_counter()
    process = subprocess.Popen(
        list(argv),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=cwd,
        start_new_session=True,
        close_fds=True,
    )
    os.close(slave)
    return PtyProcess(process, master, started)


BARE_APP = """
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("bare textual app ready")

Bare().run()
"""


def bare_app_script(folder: Path) -> Path:
    """A bare Textual app that paints one line: the reference for start-up."""
    path = folder / "bare_textual_app.py"
    path.write_text(BARE_APP, encoding="utf-8")
    return path


# frames of an in-process app ---------------------------------------------------------------------


FrameListener = Callable[[float, str | None], None]


def hook_frames(app: Any, listener: FrameListener, with_text: bool = False) -> None:
    """Call listener(time, painted_text) after every frame the app paints.

    Under `run_test()` Textual's headless driver skips turning a frame into terminal output; this hook
    does that work (`render_segments`) so a frame costs what it costs in a terminal (minus the write to
    the tty), then calls the listener. With `with_text`, the painted text (escape sequences removed) is
    passed too.
    """
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        text = None
        if renderable is not None and hasattr(renderable, "render_segments"):
            sequence = renderable.render_segments(app.console)
            text = strip_ansi(sequence) if with_text else None
        original(screen, renderable)
        if renderable is not None:
            listener(time.perf_counter(), text)

    app._display = display


async def wait_until(condition: Callable[[], Any], timeout: float = 60.0, step: float = 0.002) -> None:
    """Sleep in small steps until condition() holds (a benchmark helper, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition never held")
        await asyncio.sleep(step)


# seeded databases --------------------------------------------------------------------------------


def sessions_db(sizes: Sequence[int], workspace: str = "/home/dev/src/bench") -> tuple[Path, list[str]]:
    """A cached database holding one finished session per size (events each), and their ids in order.

    Sessions are written by raw sqlite3 with the rows and shapes of `generate_data.py` (tasks of 1-4
    streamed turns, tool calls, usage), over the real schema.
    """
    name = f"tui-v{TUI_VERSION}-g{generate_data.VERSION}-{'-'.join(map(str, sizes))}.db"
    path = generate_data.DATA / name
    if not path.exists():
        build_sessions_db(path, sizes, workspace)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        ids = [row[0] for row in conn.execute("SELECT id FROM sessions ORDER BY num")]
    finally:
        conn.close()
    return path, ids


def build_sessions_db(path: Path, sizes: Sequence[int], workspace: str) -> None:
    """Write the sessions of `sessions_db` (replacing a partial file)."""
    started = time.perf_counter()
    print(f"  generating {path.name} (sessions of {', '.join(f'{s:,}' for s in sizes)} events)…", flush=True)
    generate_data.DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.db")
    for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        stale.unlink(missing_ok=True)
    generate_data.create_schema(tmp)
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    generator = generate_data.Generator(
        generate_data.Plan(len(sizes), sum(sizes)), generate_data.Writer(conn)
    )
    generator.workspaces, generator.ws_weights = [workspace], [1.0]
    now = time.time()
    for num, size in enumerate(sizes, start=1):
        generator.session(num, now - 86400 + num, size)
    generator.writer.flush()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    generate_data.upgrade(tmp)  # written at the newest schema: nothing is left to migrate
    tmp.rename(path)
    for leftover in (Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    print(f"  generated in {time.perf_counter() - started:.0f} s", flush=True)


def private_copy(path: Path) -> Path:
    """A copy of a cached database in a temp folder, for a benchmark that writes to it."""
    folder = Path(tempfile.mkdtemp(prefix="harnez-bench-db-"))
    copy = folder / path.name
    shutil.copyfile(path, copy)
    return copy


def send_key(app: Any, key: str, character: str | None = None) -> float:
    """Hand a key to the app the way its terminal driver does; returns the moment it was sent."""
    from textual import events

    event = events.Key(key, key if character is None and len(key) == 1 else character)
    event.set_sender(app)
    moment = time.perf_counter()
    app._driver.send_message(event)
    return moment


LOADED: list[Any] = []
"""Transcripts whose `load_batch` (the newest window of a session) has returned."""


def note_loaded_batches() -> None:
    """Wrap `Transcript.load_batch` to record (in LOADED) when a session's opening window is mounted."""
    from harnez.tui.widgets.transcript import Transcript

    if getattr(Transcript.load_batch, "_bench", False):
        return
    original = Transcript.load_batch

    async def load_batch(self: Transcript, *args: Any, **kwargs: Any) -> None:
        await original(self, *args, **kwargs)
        LOADED.append(self)

    load_batch._bench = True  # type: ignore[attr-defined]
    Transcript.load_batch = load_batch  # type: ignore[method-assign]
