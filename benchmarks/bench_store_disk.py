"""Benchmark bytes on disk per byte of conversation text (FTS excluded) through the real path, and the WAL size."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import bench_store_lib as lib
import generate_data

from harnez import events as ev
from harnez.server import Server
from harnez.server.runner import TaskOutcome, TaskRun

STUCK = 60.0
"""Seconds after which one task is reported stuck (a typical task takes well under a second)."""
FTS_PREFIX = "search_"
"""search_docs, its index and the search_fts* shadow tables: the full-text index, excluded from the figure."""


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


def make_work(conv: Conversation):
    """A task's work: streamed turns, tool calls, usage, and a context record per message."""

    async def work(run: TaskRun) -> TaskOutcome:
        context = run.server.store.context
        num, task = run.session.num, run.task_id
        conv.count(run.prompt)
        await context.append(num, task, "user", {"role": "user", "content": run.prompt})
        turns = conv.rng.randint(1, 4)
        for turn in range(1, turns + 1):
            await stream_turn(run, conv, turn, turns)
        return TaskOutcome("completed", turns)

    return work


async def stream_turn(run: TaskRun, conv: Conversation, turn: int, turns: int) -> None:
    """One model turn: coalesced deltas of 40-200 characters, maybe a tool call, usage, context records."""
    context = run.server.store.context
    num, task = run.session.num, run.task_id
    run.emit(ev.TurnStarted(turn=turn))
    text, pos = conv.prose(300, 3000), 0
    while pos < len(text):
        step = conv.rng.randint(40, 200)
        run.emit(ev.TextDelta(text=text[pos : pos + step]))
        pos += step
        await asyncio.sleep(0.002)  # a coalescing window elapses between deltas
    run.emit(ev.TurnCompleted(turn=turn, stop="end" if turn == turns else "tool_use"), search_text=text)
    conv.count(text)
    call = {"id": f"call_{task}_{turn}", "name": "read", "arguments": '{"path": "harnez/store/events.py"}'}
    item = {"role": "assistant", "content": text}
    if turn < turns:
        item["tool_calls"] = [call]
    await context.append(num, task, "assistant", item)
    if turn < turns:
        output = conv.tool_output()
        conv.count(call["arguments"], output)
        run.emit(ev.ToolRequested(call_id=call["id"], tool="read", arguments=call["arguments"]))
        run.emit(
            ev.ToolCompleted(
                call_id=call["id"],
                tool="read",
                content=output,
                details={"lines": output.count("\n") + 1},
                is_error=False,
            )
        )
        await context.append(
            num, task, "tool", {"role": "tool", "tool_call_id": call["id"], "content": output}
        )
    run.emit(
        ev.Usage(
            input=20000 + turn * 3000,
            output=len(text) // 4,
            cache_read=18000,
            cache_write=None,
            reasoning=None,
        )
    )


async def one_task(server: Server, session_id: str, conv: Conversation) -> None:
    """Submit a prompt and wait for its task to end."""
    await server.submit(session_id, conv.prose(40, 400))
    await server.wait(session_id)


def dump_stuck(number: int) -> None:
    """Print where every asyncio task waits, then stop: a task that never ends is a bug to report."""
    print(f"  STUCK: task {number + 1} did not end within {STUCK:.0f} s; asyncio tasks:")
    for task in asyncio.all_tasks():
        task.print_stack(limit=8, file=sys.stdout)
    sys.stdout.flush()
    os._exit(1)


def wal_size(path: Path) -> int:
    """Bytes of the database's WAL file (0 when absent)."""
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


async def run_conversation(path: Path, tasks: int, conv: Conversation, workspace: Path) -> int:
    """Submit `tasks` prompts one after another; the largest WAL seen."""
    server = await Server.open(path)
    server.set_work(make_work(conv))
    draft = server.create_session(workspace)
    largest = 0
    for number in range(tasks):
        try:
            await asyncio.wait_for(one_task(server, draft.id, conv), STUCK)
        except TimeoutError:
            dump_stuck(number)
        largest = max(largest, wal_size(path))
    await server.close()
    return largest


def sizes(path: Path) -> tuple[int, dict[str, int]]:
    """The file size after a full checkpoint, and bytes per table or index (dbstat)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    per_name = dict(conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
    conn.close()
    return path.stat().st_size, per_name


async def main() -> None:
    """Run the conversation, then weigh the database."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=150, help="prompts in the conversation")
    args = parser.parse_args()
    lib.header("Disk per byte of conversation text (SPEC §10: ≤ 2× the text, FTS excluded; WAL bounded)")
    conv = conversation()
    with tempfile.TemporaryDirectory(prefix="harnez-bench-disk-") as tmp:
        path = Path(tmp) / "disk.db"
        largest_wal = await run_conversation(path, args.tasks, conv, Path(tmp))
        after_close = wal_size(path)
        file_size, per_name = sizes(path)
    fts = sum(v for k, v in per_name.items() if k.startswith(FTS_PREFIX))
    ratio = (file_size - fts) / conv.text_bytes
    print(
        f"  conversation: {args.tasks} tasks, {conv.text_bytes / 1e6:.2f} MB of text "
        f"(prompts, assistant text, tool arguments and output)"
    )
    lib.report(
        "database minus FTS",
        f"{(file_size - fts) / 1e6:.2f} MB of {file_size / 1e6:.2f} MB",
        "≤ 2× text",
        ratio <= 2,
        f"{ratio:.2f}× the conversation text",
    )
    for name, size in sorted(per_name.items(), key=lambda kv: -kv[1]):
        if size >= 8192:
            tag = " (FTS, excluded)" if name.startswith(FTS_PREFIX) else ""
            print(f"    {name}: {size / 1e6:.2f} MB = {size / conv.text_bytes:.2f}× text{tag}")
    print(
        f"  WAL: largest seen after a task {largest_wal / 1e6:.2f} MB, after close {after_close / 1e6:.2f} MB "
        f"(autocheckpoint 1000 pages ≈ 4 MB, journal_size_limit 64 MB)  "
        f"[bounded: {lib.verdict(largest_wal <= 64 * 2**20)}]"
    )


if __name__ == "__main__":
    lib.run(main)
