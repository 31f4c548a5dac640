"""Generate a realistic Harnez database (10k sessions, 1M events by default) for the storage benchmarks."""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harnez.store.migrate import load_migrations, migrate  # noqa: E402  (after the path set-up)

DATA = REPO / "benchmarks" / ".data"
VERSION = 2
"""Bump when the generated data changes shape: cached databases of older versions are ignored."""
SEED = 20240601
YEAR = 365 * 24 * 3600.0
POOL_WORDS = 3_000_000
VOCABULARY = 20_000
ZIPF_EXPONENT = 1.07
WORKSPACES = 30
MODELS = ("anthropic/claude-sonnet-4", "openai/gpt-4.1", "openai/o4-mini", "ollama/qwen3:8b")
TOOLS = ("read", "edit", "write", "shell", "grep", "glob")

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
    """Accumulates rows and inserts them with executemany."""

    conn: sqlite3.Connection
    events: list[tuple] = field(default_factory=list)
    docs: list[tuple] = field(default_factory=list)
    tasks: list[tuple] = field(default_factory=list)
    sessions: list[tuple] = field(default_factory=list)

    def flush(self) -> None:
        """Insert what is pending in one transaction (docs after sessions, in time order)."""
        c = self.conn
        c.execute("BEGIN")
        c.executemany(
            "INSERT INTO sessions (num, id, workspace, title, title_source, naming_used, model, status, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, 'completed', ?, ?)",
            self.sessions,
        )
        c.executemany(
            "INSERT INTO tasks (id, session, state, input, model, stop_reason, created_at, started_at, "
            "finished_at, turns) VALUES (?, ?, 'completed', ?, ?, 'completed', ?, ?, ?, ?)",
            self.tasks,
        )
        c.executemany(
            "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)",
            self.events,
        )
        c.executemany("INSERT INTO search_docs (session, kind, seq, text) VALUES (?, ?, ?, ?)", self.docs)
        c.execute("COMMIT")
        self.events, self.docs, self.tasks, self.sessions = [], [], [], []


class Generator:
    """Builds sessions from a word pool, deterministically from the seed."""

    def __init__(self, plan: Plan, writer: Writer) -> None:
        self.plan = plan
        self.writer = writer
        self.rng = random.Random(SEED)
        self.pool = word_pool(self.rng)
        self.workspaces = [f"/home/dev/src/{self.words(1)}-{self.words(1)}" for _ in range(WORKSPACES)]
        self.ws_weights = [1.0 / rank for rank in range(1, WORKSPACES + 1)]
        self.task_id = 0

    def words(self, count: int) -> str:
        """`count` consecutive words of the pool from a random place."""
        start = self.rng.randrange(POOL_WORDS - count)
        return " ".join(self.pool[start : start + count])

    def event_budgets(self) -> list[int]:
        """Events per session: log-normal, at least 5, summing to the plan's total."""
        raw = [self.rng.lognormvariate(0, 1.0) for _ in range(self.plan.sessions)]
        scale = (self.plan.events - 5 * self.plan.sessions) / sum(raw)
        budgets = [5 + int(r * scale) for r in raw]
        budgets[0] += self.plan.events - sum(budgets)
        return budgets

    def run(self) -> None:
        """Generate every session, oldest first, so row ids follow time as they do in use."""
        now = time.time()
        starts = sorted(now - self.rng.random() * YEAR for _ in range(self.plan.sessions))
        for num, (start, budget) in enumerate(zip(starts, self.event_budgets(), strict=True), start=1):
            self.session(num, start, budget)
            if num % 250 == 0:
                self.writer.flush()
        self.writer.flush()

    def session(self, num: int, start: float, budget: int) -> None:
        """One session: its row, its workspace and title documents, then tasks until the budget is spent."""
        rng = self.rng
        workspace = rng.choices(self.workspaces, weights=self.ws_weights)[0]
        model = rng.choice(MODELS)
        first_prompt = self.words(rng.randint(8, 60))
        title = (
            None if rng.random() < 0.1 else " ".join(first_prompt.split()[: rng.randint(2, 5)]).capitalize()
        )
        w = self.writer
        w.docs.append((num, "workspace", None, workspace))
        if title:
            w.docs.append((num, "title", None, title))
        clock = [start]
        events = list(self.session_events(num, budget, first_prompt, model, clock))
        for seq, (task, kind, payload, search_text) in enumerate(events[:budget], start=1):
            clock[0] += rng.random() * 0.5
            w.events.append((num, seq, task, kind, json.dumps(payload, separators=(",", ":")), clock[0]))
            if search_text:
                w.docs.append((num, kind, seq, search_text))
        w.sessions.append(
            (
                num,
                f"{rng.getrandbits(128):032x}",
                workspace,
                title,
                "keywords" if title else None,
                model,
                start,
                clock[0],
            )
        )

    def session_events(
        self, num: int, budget: int, prompt: str, model: str, clock: list[float]
    ) -> Iterator[tuple]:
        """(task, kind, payload, search_text) of consecutive tasks, at least `budget` of them."""
        produced = 0
        while produced < budget:
            self.task_id += 1
            task_events = list(self.task_events(self.task_id, prompt, model))
            turns = sum(1 for e in task_events if e[1] == "turn-started")
            self.writer.tasks.append(
                (
                    self.task_id,
                    num,
                    prompt,
                    model,
                    clock[0],
                    clock[0],
                    clock[0] + len(task_events) * 0.25,
                    turns,
                )
            )
            produced += len(task_events)
            yield from task_events
            prompt = self.words(self.rng.randint(5, 60))

    def task_events(self, task: int, prompt: str, model: str) -> Iterator[tuple]:
        """One task: the prompt, 1-4 model turns streaming deltas, some tool calls, usage, the end."""
        rng = self.rng
        yield task, "user-message", {"text": prompt, "mode": "prompt"}, prompt
        yield task, "started", {"model": model, "wire": "chat", "tools": list(TOOLS)}, None
        turns = rng.randint(1, 4)
        for turn in range(1, turns + 1):
            yield task, "turn-started", {"turn": turn}, None
            deltas = [self.words(rng.randint(3, 14)) + " " for _ in range(rng.randint(3, 22))]
            for delta in deltas:
                yield task, "text-delta", {"text": delta}, None
            yield (
                task,
                "turn-completed",
                {"turn": turn, "stop": "tool_use" if turn < turns else "end"},
                "".join(deltas).strip(),
            )
            if turn < turns:
                yield from self.tool_call(task, turn)
            yield (
                task,
                "usage",
                {
                    "input": rng.randint(2000, 90000),
                    "output": rng.randint(20, 2000),
                    "cache_read": rng.randint(0, 80000),
                    "cache_write": None,
                    "reasoning": None,
                },
                None,
            )
        yield task, "finished", {"stop": "completed", "turns": turns, "error": None}, None

    def tool_call(self, task: int, turn: int) -> Iterator[tuple]:
        """A tool request and its result."""
        call = f"call_{task}_{turn}"
        tool = self.rng.choice(TOOLS)
        yield (
            task,
            "tool-requested",
            {"call_id": call, "tool": tool, "arguments": {"path": self.words(2)}},
            None,
        )
        output = self.words(self.rng.randint(10, 80))
        yield (
            task,
            "tool-completed",
            {
                "call_id": call,
                "tool": tool,
                "content": output,
                "details": {"lines": output.count(" ") // 10 + 1},
                "is_error": False,
            },
            None,
        )


WRITTEN_AT = 6
"""The schema version the rows are written in (streamed deltas one row each, the full-text index
filled by triggers); `migrate` then brings the database to the newest, as it would a person's."""


def create_schema(path: Path) -> None:
    """An empty database with the real schema of version `WRITTEN_AT`, made by the store's own migrations."""
    with tempfile.TemporaryDirectory(prefix="harnez-migrations-") as folder:
        for migration in load_migrations()[:WRITTEN_AT]:
            (Path(folder) / migration.name).write_text(migration.sql, encoding="utf-8")
        migrate(path, Path(folder))


def upgrade(path: Path) -> None:
    """Migrate the written database to the newest schema (folding its deltas), timed; no backup kept."""
    start = time.perf_counter()
    migrate(path)
    print(f"migrated to the newest schema in {time.perf_counter() - start:.1f} s", flush=True)
    for backup in path.parent.glob(f"{path.name}.v{WRITTEN_AT}-*.bak"):
        backup.unlink()


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
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    upgrade(tmp)
    conn = sqlite3.connect(tmp, isolation_level=None)
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
