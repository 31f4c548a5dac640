"""Generate a realistic Harnez database (10k sessions, 1M events by default) for the storage benchmarks.

The rows are the ones the store writes, made by its own functions (payload encoding, folding of each
turn's deltas, full-text documents) and inserted by plain sqlite3 in large transactions into a
database at the newest schema, so 50,000 sessions / 5 M events take minutes, not the hour that
writing them through the store (or writing an old schema and migrating it) would.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# After the path set-up:
from harnez import events as ev  # noqa: E402
from harnez.store import documents  # noqa: E402
from harnez.store.documents import Document  # noqa: E402
from harnez.store.events import TURN_ENDS  # noqa: E402
from harnez.store.folding import FOLDABLE, TURN_MARKS, Row, moved  # noqa: E402
from harnez.store.migrate import migrate  # noqa: E402
from harnez.store.payloads import loads, stored_payload  # noqa: E402

DATA = Path(os.environ.get("HARNEZ_BENCH_DATA") or REPO / "benchmarks" / ".data")
"""Where generated databases are cached; `HARNEZ_BENCH_DATA` moves them (a 50,000-session one is GBs)."""
VERSION = 3
"""Bump when the generated data changes shape: cached databases of older versions are ignored."""
SEED = 20240601
YEAR = 365 * 24 * 3600.0
POOL_WORDS = 3_000_000
VOCABULARY = 20_000
ZIPF_EXPONENT = 1.07
WORKSPACES = 30
WIRES = {
    "anthropic/claude-sonnet-4": "anthropic-messages",
    "openai/gpt-4.1": "openai-chat",
    "openai/o4-mini": "openai-responses",
    "ollama/qwen3:8b": "openai-chat",
}
MODELS = tuple(WIRES)
TOOLS = ("read", "write", "edit", "list", "glob", "grep", "shell")

COMMON = [
    "the",
    "to",
    "of",
    "and",
    "a",
    "in",
    "is",
    "it",
    "you",
    "that",
    "for",
    "this",
    "on",
    "with",
    "be",
    "we",
    "can",
    "file",
    "function",
    "test",
    "not",
    "should",
    "code",
    "error",
    "line",
    "use",
    "error",
    "add",
    "make",
    "check",
    "change",
    "update",
    "fix",
    "need",
    "when",
    "from",
    "return",
    "value",
    "what",
    "how",
    "if",
    "but",
    "about",
    "so",
    "run",
    "then",
    "there",
    "new",
    "module",
    "class",
    "type",
    "config",
    "server",
    "session",
    "store",
    "event",
    "events",
    "title",
    "picker",
    "model",
    "tool",
    "call",
    "output",
    "input",
    "data",
    "path",
    "query",
    "cursor",
    "page",
    "list",
    "search",
    "index",
    "table",
    "migration",
    "schema",
    "commit",
    "branch",
    "review",
    "diff",
    "python",
    "async",
    "await",
    "import",
    "package",
    "build",
    "release",
    "version",
    "install",
    "dependency",
    "docs",
    "readme",
    "refactor",
    "rename",
    "move",
    "split",
    "merge",
    "delete",
    "create",
    "read",
    "write",
    "open",
    "close",
    "start",
    "stop",
    "retry",
    "timeout",
    "cancel",
    "stream",
    "delta",
    "token",
    "usage",
    "cost",
    "provider",
    "wire",
    "request",
    "response",
    "status",
    "json",
    "yaml",
    "toml",
    "string",
    "number",
    "bytes",
    "buffer",
    "queue",
    "task",
    "worker",
    "thread",
    "process",
    "shell",
    "command",
    "terminal",
    "screen",
    "widget",
    "render",
    "frame",
    "keystroke",
    "scroll",
    "footer",
    "header",
    "prompt",
    "history",
]

ONSETS = (
    "b",
    "br",
    "c",
    "ch",
    "d",
    "dr",
    "f",
    "fl",
    "g",
    "gr",
    "h",
    "j",
    "k",
    "kl",
    "l",
    "m",
    "n",
    "p",
    "pl",
    "qu",
    "r",
    "s",
    "sh",
    "sk",
    "st",
    "t",
    "th",
    "tr",
    "v",
    "w",
    "z",
)
NUCLEI = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "y")
CODAS = ("", "", "n", "r", "s", "t", "x", "nd", "lk", "m")


@dataclass
class Plan:
    """What to generate."""

    sessions: int
    events: int

    @property
    def path(self) -> Path:
        """The cached database of this plan."""
        return DATA / f"store-v{VERSION}-{self.sessions}s-{self.events}e.db"

    @property
    def meta_path(self) -> Path:
        """The terms chosen for the benchmarks, next to the database."""
        return self.path.with_suffix(".json")


def vocabulary(rng: random.Random) -> list[str]:
    """Real common words first, then pronounceable made-up words: ranked for a Zipf draw."""
    words = list(dict.fromkeys(COMMON))
    seen = set(words)
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(ONSETS) + rng.choice(NUCLEI) for _ in range(rng.randint(2, 4)))
        word += rng.choice(CODAS)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def word_pool(rng: random.Random) -> list[str]:
    """A long Zipf-distributed word stream; texts are slices of it."""
    words = vocabulary(rng)
    weights = [1.0 / (rank**ZIPF_EXPONENT) for rank in range(1, len(words) + 1)]
    total, cumulative = 0.0, []
    for weight in weights:
        total += weight
        cumulative.append(total)
    return rng.choices(words, cum_weights=cumulative, k=POOL_WORDS)


@dataclass
class Writer:
    """Accumulates the rows the store would write and inserts them with executemany, one transaction a flush."""

    conn: sqlite3.Connection
    events: list[tuple] = field(default_factory=list)
    docs: list[Document] = field(default_factory=list)
    tasks: list[tuple] = field(default_factory=list)
    sessions: list[tuple] = field(default_factory=list)
    next_doc: int = 0
    """The id of the last document written (documents are numbered in the order they are added, as
    `documents.add` numbers them after the largest id)."""

    def __post_init__(self) -> None:
        self.next_doc = self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM search_docs").fetchone()[0]

    def flush(self) -> None:
        """Insert what is pending in one transaction (the title trigram index fills from its trigger)."""
        c = self.conn
        first = self.next_doc + 1
        self.next_doc += len(self.docs)
        c.execute("BEGIN")
        c.executemany(
            "INSERT INTO sessions (num, id, workspace, title, title_source, naming_used, model, status, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, 'completed', ?, ?)",
            self.sessions,
        )
        c.executemany(
            "INSERT INTO tasks (id, session, state, input, model, stop_reason, created_at, started_at, "
            "finished_at, turns, input_seq) VALUES (?, ?, 'completed', '', ?, 'completed', ?, ?, ?, ?, ?)",
            self.tasks,
        )
        c.executemany(
            "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)",
            self.events,
        )
        c.executemany(
            "INSERT INTO search_docs (id, session, kind, seq, text) VALUES (?, ?, ?, ?, ?)",
            [
                (first + i, d.session, d.kind, d.seq, d.text if d.kept else None)
                for i, d in enumerate(self.docs)
            ],
        )
        c.executemany(
            "INSERT INTO search_fts (rowid, text) VALUES (?, ?)",
            [(first + i, d.text) for i, d in enumerate(self.docs)],
        )
        c.execute("COMMIT")
        self.events, self.docs, self.tasks, self.sessions = [], [], [], []


class SessionLog:
    """One session's events as `EventLog` stores them: numbered from 1, payloads encoded by the store's
    own functions, each turn's deltas folded into one row when the turn ends (`folding.moved`), and the
    documents of prompts and answers made by `harnez.store.documents`."""

    def __init__(self, num: int, writer: Writer, clock: float, rng: random.Random) -> None:
        self.num = num
        self.writer = writer
        self.clock = clock
        self.rng = rng
        self.seq = 0
        self.live: list[tuple] = []
        """Deltas of the turn streaming now: (seq, task, kind, payload, time), as `live_deltas` holds them."""
        self.turn: list[Row] = []
        """The session's rows since its last turn mark (a turn's start, or its task's prompt)."""

    def emit(self, task: int, body: ev.EventBody, search_text: str | None = None) -> int:
        """Store one event; its sequence number."""
        self.seq += 1
        self.clock += self.rng.random() * 0.5
        kind = body.kind
        stored, payload = stored_payload(body.to_payload(), kind)
        row = (self.seq, task, kind, stored, self.clock)
        if kind in FOLDABLE:
            self.live.append(row)
            return self.seq
        if kind in TURN_ENDS:
            self.fold()
        self.writer.events.append((self.num, *row))
        if kind == "turn-completed" and search_text:
            self.writer.docs += documents.turn_documents(self.num, self.seq, self.turn_rows(), search_text)
        elif search_text and kind not in TURN_ENDS:
            self.writer.docs.append(documents.event_document(self.num, kind, self.seq, payload, search_text))
        if kind in TURN_MARKS:
            self.turn = []
        else:
            self.turn.append(Row(0, self.seq, kind, None))
        return self.seq

    def fold(self) -> None:
        """Move the live deltas to the session's rows, each run folded into one row."""
        for seq, task, kind, stored, when in moved(self.live):
            self.writer.events.append((self.num, seq, task, kind, stored, when))
            self.turn.append(Row(0, seq, kind, loads(stored)))
        self.live = []

    def turn_rows(self) -> list[Row]:
        """The rows of the turn ending now, in order (what `folding.turn_rows` reads back)."""
        return sorted((row for row in self.turn if row.seq < self.seq), key=lambda row: row.seq)


@dataclass
class TaskShape:
    """How many deltas each model turn of a task streams (a tool call between two turns)."""

    deltas: list[int]

    def events(self, titled: bool) -> int:
        """The events the task writes: prompt, start, (title), per turn its start, deltas, usage, cost
        and end, a tool call of TOOL_EVENTS between turns, and the task's end."""
        between = TOOL_EVENTS * (len(self.deltas) - 1)
        return 3 + int(titled) + sum(4 + d for d in self.deltas) + between


TOOL_EVENTS = 4
"""A tool call's events: two argument deltas (folded into one row), the request and the result."""

MIN_TASK = 9
"""The events of the smallest task (one turn of one delta, titled): no session has a smaller budget."""


class Generator:
    """Builds sessions from a word pool, deterministically from the seed."""

    def __init__(self, plan: Plan, writer: Writer) -> None:
        self.plan = plan
        self.writer = writer
        self.rng = random.Random(SEED)
        self.pool = word_pool(self.rng)
        self.workspaces = [f"/home/dev/src/{self.words(1)}-{self.words(1)}" for _ in range(WORKSPACES)]
        self.ws_weights = [1.0 / rank for rank in range(1, WORKSPACES + 1)]
        self.task_id = writer.conn.execute("SELECT COALESCE(MAX(id), 0) FROM tasks").fetchone()[0]

    def words(self, count: int) -> str:
        """`count` consecutive words of the pool from a random place."""
        start = self.rng.randrange(POOL_WORDS - count)
        return " ".join(self.pool[start : start + count])

    def event_budgets(self) -> list[int]:
        """Events per session: log-normal, at least MIN_TASK, summing to the plan's total."""
        raw = [self.rng.lognormvariate(0, 1.0) for _ in range(self.plan.sessions)]
        scale = (self.plan.events - MIN_TASK * self.plan.sessions) / sum(raw)
        budgets = [MIN_TASK + int(r * scale) for r in raw]
        budgets[0] += self.plan.events - sum(budgets)
        return budgets

    def run(self) -> None:
        """Generate every session, oldest first, so row ids follow time as they do in use."""
        if self.plan.events < MIN_TASK * self.plan.sessions:
            raise SystemExit(f"Ask for at least {MIN_TASK} events a session (--events).")
        now = time.time()
        starts = sorted(now - self.rng.random() * YEAR for _ in range(self.plan.sessions))
        for num, (start, budget) in enumerate(zip(starts, self.event_budgets(), strict=True), start=1):
            self.session(num, start, budget)
            if num % 500 == 0:
                self.writer.flush()
        self.writer.flush()

    def session(self, num: int, start: float, budget: int) -> None:
        """One session of exactly `budget` events: its row, its documents, tasks until the budget is spent."""
        rng = self.rng
        workspace = rng.choices(self.workspaces, weights=self.ws_weights)[0]
        model = rng.choice(MODELS)
        prompt = self.words(rng.randint(8, 60))
        title = None if rng.random() < 0.1 else " ".join(prompt.split()[: rng.randint(2, 5)]).capitalize()
        self.writer.docs.append(Document(num, "workspace", None, workspace))
        log = SessionLog(num, self.writer, start, rng)
        while log.seq < budget:
            shape = self.task_shape(budget - log.seq, titled=log.seq == 0 and title is not None)
            self.task(log, shape, prompt, model, title if log.seq == 0 else None)
            prompt = self.words(rng.randint(5, 60))
        self.writer.sessions.append(
            (
                num,
                f"{rng.getrandbits(128):032x}",
                workspace,
                title,
                "keywords" if title else None,
                model,
                start,
                log.clock,
            )
        )

    def task_shape(self, room: int, titled: bool) -> TaskShape:
        """1-4 turns of 3-22 deltas; the session's last task when what would be left cannot hold
        another, its last turn then taking up the rest of the budget."""
        shape = TaskShape([self.rng.randint(3, 22) for _ in range(self.rng.randint(1, 4))])
        while len(shape.deltas) > 1 and shape.events(titled) > room:
            shape.deltas.pop()
        left = room - shape.events(titled)
        if left < MIN_TASK:
            shape.deltas[-1] += left
        return shape

    def task(self, log: SessionLog, shape: TaskShape, prompt: str, model: str, title: str | None) -> None:
        """One task as the agent emits it: the prompt, its start (and the title landing), model turns
        streaming deltas with a tool call between them, usage and cost after each, the end."""
        self.task_id += 1
        task, created = self.task_id, log.clock
        prompt_seq = log.emit(task, ev.UserMessage(text=prompt), search_text=prompt)
        log.emit(task, ev.Started(model=model, wire=WIRES[model], tools=list(TOOLS), context_window=200_000))
        if title:
            log.emit(task, ev.TitleChanged(title=title, source="keywords"))
            log.writer.docs.append(Document(log.num, "title", None, title))
        for turn, deltas in enumerate(shape.deltas, start=1):
            last = turn == len(shape.deltas)
            self.turn(log, task, turn, deltas, None if last else f"call_{task}_{turn}", model)
            if not last:
                self.tool_result(log, task, f"call_{task}_{turn}")
        log.emit(task, ev.Finished(stop="completed", turns=len(shape.deltas)))
        self.writer.tasks.append(
            (task, log.num, model, created, created, log.clock, len(shape.deltas), prompt_seq)
        )

    def turn(
        self, log: SessionLog, task: int, number: int, deltas: int, call: str | None, model: str
    ) -> None:
        """One model turn: its start, its text streamed, a tool call's arguments, usage, cost, its end."""
        rng = self.rng
        log.emit(task, ev.TurnStarted(turn=number))
        text = [self.words(rng.randint(3, 14)) + " " for _ in range(deltas)]
        for piece in text:
            log.emit(task, ev.TextDelta(text=piece))
        if call:
            arguments = json.dumps({"path": self.words(2).replace(" ", "/") + ".py"})
            half = len(arguments) // 2
            for piece in (arguments[:half], arguments[half:]):
                log.emit(task, ev.ToolArgumentsDelta(call_id=call, name="read", delta=piece))
        usage = ev.Usage(input=rng.randint(2000, 90000), output=rng.randint(20, 2000), model=model)
        log.emit(task, usage)
        log.emit(task, ev.Cost(usd=round(rng.random() / 20, 6)))
        stop = "tool_use" if call else "end_turn"
        log.emit(task, ev.TurnCompleted(turn=number, stop_reason=stop), search_text="".join(text))

    def tool_result(self, log: SessionLog, task: int, call: str) -> None:
        """The tool call the turn asked for, and its result."""
        path = self.words(2).replace(" ", "/") + ".py"
        log.emit(task, ev.ToolRequested(call_id=call, name="read", arguments={"path": path}))
        output = self.words(self.rng.randint(10, 80))
        details = {"lines": output.count(" ") // 10 + 1}
        log.emit(task, ev.ToolCompleted(call_id=call, name="read", content=output, details=details))


def choose_terms(conn: sqlite3.Connection) -> dict:
    """A common term, a rare term (in a few sessions), a title word, and workspaces, for the benchmarks."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, search_fts, row)")
    common = conn.execute(
        "SELECT term FROM temp.vocab WHERE length(term) >= 4 ORDER BY doc DESC LIMIT 1"
    ).fetchone()[0]
    rare = conn.execute(
        "SELECT v.term FROM temp.vocab v WHERE v.doc BETWEEN 8 AND 40 AND length(v.term) >= 7 "
        "AND NOT EXISTS (SELECT 1 FROM temp.vocab w WHERE w.term > v.term "
        "AND w.term < v.term || 'z' AND w.term != v.term) "
        "ORDER BY v.doc, v.term LIMIT 1"
    ).fetchone()[0]
    workspaces = [
        r[0] for r in conn.execute("SELECT workspace FROM sessions GROUP BY workspace ORDER BY count(*) DESC")
    ]
    title_word = conn.execute(
        "SELECT lower(substr(title, 1, instr(title || ' ', ' ') - 1)) AS w FROM sessions WHERE title IS NOT NULL "
        "AND length(w) >= 5 GROUP BY w ORDER BY abs(count(*) - (SELECT count(*) / 100 FROM sessions)) LIMIT 1"
    ).fetchone()[0]
    return {
        "common": common,
        "rare": rare,
        "title_word": title_word,
        "workspace_big": workspaces[0],
        "workspace_small": workspaces[len(workspaces) // 2],
    }


def create_schema(path: Path) -> None:
    """An empty database at the newest schema, made by the store's own migrations."""
    migrate(path)


def upgrade(path: Path) -> None:
    """Migrate a written database to the newest schema (nothing to do for one this module wrote)."""
    migrate(path)


def generate(plan: Plan) -> None:
    """Write the database and its term file (replacing a partial one)."""
    DATA.mkdir(parents=True, exist_ok=True)
    tmp = plan.path.with_suffix(".tmp.db")
    for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        stale.unlink(missing_ok=True)
    create_schema(tmp)
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -200000")
    Generator(plan, Writer(conn)).run()
    meta = choose_terms(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    tmp.rename(plan.path)
    for leftover in (Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    plan.meta_path.write_text(json.dumps(meta, indent=2), encoding="utf-8")


def ensure(sessions: int = 10_000, events: int = 1_000_000, force: bool = False) -> tuple[Path, dict]:
    """The cached database and its terms, generating them first when missing."""
    plan = Plan(sessions, events)
    if force or not plan.path.exists() or not plan.meta_path.exists():
        start = time.perf_counter()
        print(f"generating {plan.path.name} ({sessions} sessions, {events} events)…", flush=True)
        generate(plan)
        print(
            f"generated in {time.perf_counter() - start:.0f} s, {plan.path.stat().st_size / 1e6:.0f} MB",
            flush=True,
        )
    return plan.path, json.loads(plan.meta_path.read_text(encoding="utf-8"))


def main() -> None:
    """Command line: generate (or reuse) the database and print where it is."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--force", action="store_true", help="regenerate even when cached")
    args = parser.parse_args()
    path, meta = ensure(args.sessions, args.events, args.force)
    print(path)
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
