"""Benchmark bytes on disk per byte of conversation text, by table (dbstat), for a streamed chat and a
tool-heavy conversation run through the real Server / TaskRun / EventLog path; and the WAL's size."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import bench_store_lib as lib
import generate_data

from harnez import events as ev
from harnez.server import Server
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.store.ledger import ModelCall

STUCK = 60.0
"""Seconds after which one task is reported stuck (a typical task takes well under a second)."""
FTS_PREFIX = "search_"
"""search_docs, its index and the search_fts* shadow tables: the full-text index."""
MODEL = "openai/gpt-5"


@dataclass
class Conversation:
    """Makes the text of a conversation and counts its bytes."""

    rng: random.Random
    words: list[str]
    weights: list[float]
    source: str
    text_bytes: int = 0

    def prose(self, low: int, high: int) -> str:
        """Zipf-distributed words, `low` to `high` characters."""
        size = self.rng.randint(low, high)
        return " ".join(self.rng.choices(self.words, cum_weights=self.weights, k=size // 5 + 1))[:size]

    def tool_output(self) -> str:
        """A slice of real source code, as a read tool returns it."""
        size = self.rng.randint(200, 6000)
        start = self.rng.randrange(len(self.source) - size)
        return self.source[start : start + size]

    def count(self, *texts: str) -> None:
        """Add texts to the conversation's byte count."""
        self.text_bytes += sum(len(t.encode()) for t in texts)


def conversation() -> Conversation:
    """Zipf prose from the generator's vocabulary, tool output from this repository's code."""
    rng = random.Random(11)
    words = generate_data.vocabulary(rng)
    cumulative, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank**generate_data.ZIPF_EXPONENT
        cumulative.append(total)
    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted((lib.REPO / "harnez").rglob("*.py")))
    return Conversation(rng, words, cumulative, source)


def word_deltas(conv: Conversation, text: str) -> list[str]:
    """The text cut as a model streams it through the 40 ms coalescing: 2-6 words a delta."""
    words, deltas, pos = text.split(" "), [], 0
    while pos < len(words):
        step = conv.rng.randint(2, 6)
        deltas.append(" ".join(words[pos : pos + step]) + (" " if pos + step < len(words) else ""))
        pos += step
    return deltas


async def answer(run: TaskRun, conv: Conversation, turn: int, deltas: list[str], stop: str) -> str:
    """One model turn as the agent appends it: turn-started, deltas, usage, cost, turn-completed, and
    its ledger row; the turn's text is returned for its context record."""
    run.emit(ev.TurnStarted(turn=turn))
    for number, delta in enumerate(deltas):
        run.emit(ev.TextDelta(text=delta))
        if number % 8 == 7:
            await asyncio.sleep(0)  # the wire yields between chunks; commits interleave as in use
    text = "".join(deltas)
    output = len(text) // 4
    run.emit(ev.Usage(input=20000 + turn * 3000, output=output, cache_read=18000, model="gpt-5-2025-08-07"))
    run.emit(ev.Cost(usd=round(output * 1e-5, 6)))
    run.emit(ev.TurnCompleted(turn=turn, stop_reason=stop), search_text=text)
    call = ModelCall(
        run.session.num, run.task_id, MODEL, "completed", "openai", "openai-responses", "gpt-5-2025-08-07"
    )
    await run.store.ledger.record_model_call(call)
    conv.count(text)
    return text


def started() -> ev.Started:
    """The `started` event of a task."""
    return ev.Started(
        model=MODEL, wire="openai-responses", tools=["read", "edit", "shell"], context_window=400000
    )


async def begin(run: TaskRun, conv: Conversation) -> None:
    """What every task starts with: `started` and the prompt's context record."""
    conv.count(run.prompt)
    run.emit(started())
    await run.store.context.append(run.session.num, run.task_id, "user", {"type": "user", "text": run.prompt})


def make_chat_work(conv: Conversation):
    """A chat task: the prompt, one answer streamed as small deltas, its context records."""

    async def work(run: TaskRun) -> TaskOutcome:
        await begin(run, conv)
        text = await answer(run, conv, 1, word_deltas(conv, conv.prose(200, 1200)), "end_turn")
        item = {"type": "assistant", "text": text, "reasoning": "", "tool_calls": [], "opaque": []}
        await run.store.context.append(run.session.num, run.task_id, "assistant", item, "openai-responses")
        return TaskOutcome("completed", 1)

    return work


def make_tool_work(conv: Conversation):
    """A tool-heavy task: 1-4 turns of larger deltas, a read call with source output between them."""

    async def work(run: TaskRun) -> TaskOutcome:
        await begin(run, conv)
        turns = conv.rng.randint(1, 4)
        for turn in range(1, turns + 1):
            await tool_turn(run, conv, turn, turns)
        return TaskOutcome("completed", turns)

    return work


def chunks(conv: Conversation, text: str) -> list[str]:
    """Deltas of 40-200 characters."""
    pieces, pos = [], 0
    while pos < len(text):
        step = conv.rng.randint(40, 200)
        pieces.append(text[pos : pos + step])
        pos += step
    return pieces


async def tool_turn(run: TaskRun, conv: Conversation, turn: int, turns: int) -> None:
    """A turn of the tool-heavy shape: its text, then (but the last) a read call and its output."""
    context, num, task = run.store.context, run.session.num, run.task_id
    last = turn == turns
    text = await answer(
        run, conv, turn, chunks(conv, conv.prose(300, 3000)), "end_turn" if last else "tool_use"
    )
    call = {"id": f"call_{task}_{turn}", "name": "read", "arguments": {"path": "harnez/store/events.py"}}
    item = {
        "type": "assistant",
        "text": text,
        "reasoning": "",
        "tool_calls": [] if last else [call],
        "opaque": [],
    }
    await context.append(num, task, "assistant", item, "openai-responses")
    if last:
        return
    output = conv.tool_output()
    conv.count('{"path": "harnez/store/events.py"}', output)
    run.emit(ev.ToolRequested(call_id=call["id"], name="read", arguments=call["arguments"]))
    details = {"lines": output.count("\n") + 1}
    run.emit(ev.ToolCompleted(call_id=call["id"], name="read", content=output, details=details))
    result = {"type": "tool_result", "call_id": call["id"], "content": output, "is_error": False}
    await context.append(num, task, "tool", result)


def dump_stuck(what: str) -> None:
    """Print where every asyncio task waits, then stop: a task that never ends is a bug to report."""
    print(f"  STUCK: {what} did not end within {STUCK:.0f} s; asyncio tasks:")
    for task in asyncio.all_tasks():
        task.print_stack(limit=8, file=sys.stdout)
    sys.stdout.flush()
    os._exit(1)


def wal_size(path: Path) -> int:
    """Bytes of the database's WAL file (0 when absent)."""
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


@dataclass
class Shape:
    """A conversation shape: its work, how many sessions, prompts per session, sessions at once."""

    name: str
    work: Callable[[Conversation], Callable[[TaskRun], Awaitable[TaskOutcome]]]
    sessions: int
    prompts: int
    parallel: int
    prompt_size: tuple[int, int]


async def one_session(server: Server, shape: Shape, conv: Conversation, workspace: Path, path: Path) -> int:
    """Submit a session's prompts one after another; the largest WAL seen."""
    draft = server.create_session(workspace)
    largest = 0
    for number in range(shape.prompts):
        try:
            await asyncio.wait_for(server.submit(draft.id, conv.prose(*shape.prompt_size)), STUCK)
            await asyncio.wait_for(server.wait(draft.id), STUCK)
        except TimeoutError:
            dump_stuck(f"prompt {number + 1} of a session")
        largest = max(largest, wal_size(path))
    return largest


async def run_shape(path: Path, shape: Shape, conv: Conversation, workspace: Path) -> int:
    """Every session of the shape, `parallel` at a time; the largest WAL seen."""
    server = await Server.open(path)
    server.set_work(shape.work(conv))
    largest, done = 0, 0
    while done < shape.sessions:
        batch = min(shape.parallel, shape.sessions - done)
        sizes = await asyncio.gather(
            *(one_session(server, shape, conv, workspace, path) for _ in range(batch))
        )
        largest, done = max(largest, *sizes), done + batch
    await server.close()
    return largest


def sizes(path: Path) -> tuple[int, dict[str, int]]:
    """The file size after a full checkpoint, and bytes per table or index (dbstat)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    per_name = dict(conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
    conn.close()
    return path.stat().st_size, per_name


def report(
    shape: Shape, conv: Conversation, file_size: int, per_name: dict[str, int], wal: tuple[int, int]
) -> None:
    """Bytes per byte of text: the whole file, without the full-text index, the index, and by table."""
    text = conv.text_bytes
    fts = sum(v for k, v in per_name.items() if k.startswith(FTS_PREFIX))
    print(f"  {shape.name}: {shape.sessions} sessions × {shape.prompts} prompts, {text / 1e6:.2f} MB of text")
    lib.report(
        "  whole database", f"{file_size / 1e6:.2f} MB", "—", True, f"{file_size / text:.2f}× the text"
    )
    ratio = (file_size - fts) / text
    lib.report(
        "  database minus the full-text index",
        f"{(file_size - fts) / 1e6:.2f} MB",
        "≤ 2× text",
        ratio <= 2,
        f"{ratio:.2f}× the text",
    )
    lib.report(
        "  full-text index",
        f"{fts / 1e6:.2f} MB",
        "≤ 1.3× text",
        fts / text <= 1.3,
        f"{fts / text:.2f}× the text",
    )
    for name, size in sorted(per_name.items(), key=lambda kv: -kv[1]):
        if size / text >= 0.005 and size > 4096:
            tag = " (full-text index)" if name.startswith(FTS_PREFIX) else ""
            print(f"      {name}: {size / 1e6:.2f} MB = {size / text:.3f}× text{tag}")
    print(
        f"    WAL: largest seen after a task {wal[0] / 1e6:.2f} MB, after close {wal[1] / 1e6:.2f} MB "
        f"(autocheckpoint 1000 pages ≈ 4 MB, journal_size_limit 64 MB)  [bounded: {lib.verdict(wal[0] <= 64 * 2**20)}]"
    )


async def measure(shape: Shape, keep: Path | None) -> None:
    """Run one shape into a fresh database and weigh it."""
    conv = conversation()
    with tempfile.TemporaryDirectory(prefix="harnez-bench-disk-") as tmp:
        path = keep or Path(tmp) / "disk.db"
        largest = await run_shape(path, shape, conv, Path(tmp))
        after_close = wal_size(path)
        file_size, per_name = sizes(path)
    report(shape, conv, file_size, per_name, (largest, after_close))


async def main() -> None:
    """Run the chosen shapes, then weigh their databases."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shape", choices=("chat", "tools", "both"), default="both")
    parser.add_argument("--sessions", type=int, default=200, help="chat sessions (the issue measured 2,000)")
    parser.add_argument("--messages", type=int, default=50, help="messages per chat session (half prompts)")
    parser.add_argument("--tasks", type=int, default=150, help="prompts of the tool-heavy conversation")
    parser.add_argument("--keep", type=Path, help="write the database here and keep it (one shape only)")
    args = parser.parse_args()
    lib.header(
        "Disk per byte of conversation text (SPEC §10: ≤ 2× the text, full-text index excluded; WAL bounded)"
    )
    shapes = {
        "chat": Shape("streamed chat", make_chat_work, args.sessions, args.messages // 2, 4, (40, 400)),
        "tools": Shape("tool-heavy", make_tool_work, 1, args.tasks, 1, (40, 400)),
    }
    for name, shape in shapes.items():
        if args.shape in (name, "both"):
            await measure(shape, args.keep)


if __name__ == "__main__":
    lib.run(main)
