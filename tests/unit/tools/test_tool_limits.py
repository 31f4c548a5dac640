"""Size limits of the file tools: reads stream, file work stays off the event loop, huge files and
huge diffs are refused or skipped instead of eating memory and time."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable
from pathlib import Path

from harnez.tools import ToolResult
from harnez.tools.files import DIFF_LINES_CAP, TEXT_BYTES_CAP, unified_diff

MIB = 1024 * 1024

_CHILD = """
import asyncio, json, resource, sys
from pathlib import Path
from harnez.tools import ToolContext, ToolRegistry

async def main():
    registry = ToolRegistry()
    workspace = Path(sys.argv[1])
    args = registry.validate("read", {"path": sys.argv[2]})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await registry.execute(registry.get("read"), args, ToolContext(workspace))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"before_kib": before, "after_kib": after, "content": result.content[-200:],
                      "details": result.details}))

asyncio.run(main())
"""
_LAUNCHER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
"""Starts the child from a fresh interpreter: a process's peak RSS (ru_maxrss) starts from that of
the process it was forked from, and this test process may be far larger than the read."""


def test_reading_a_300_mb_one_line_file_keeps_memory_flat(workspace: Path) -> None:
    big = workspace / "one-line.txt"
    block = b"x" * MIB
    try:
        with big.open("wb") as handle:
            for _ in range(300):
                handle.write(block)
            handle.write(b"\n")
        done = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, sys.executable, "-c", _CHILD, str(workspace), big.name],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        big.unlink(missing_ok=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    grown_mib = (report["after_kib"] - report["before_kib"]) / 1024
    print(
        f"peak RSS {report['before_kib'] / 1024:.1f} MiB before reading a 300 MiB line, grew by {grown_mib:.1f}"
    )
    assert grown_mib < 40, f"peak RSS grew by {grown_mib:.0f} MiB"
    assert f"line cut, {300 * MIB - 2000} more characters" in report["content"]
    assert report["details"]["total_lines"] == 1


async def ticks_while(work: Awaitable[ToolResult]) -> tuple[ToolResult, int]:
    """Run a tool call next to a task that counts event-loop turns: a call done on the loop itself
    lets the counter run zero times, one handed to a thread at least once."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    counting = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    before = ticks
    try:
        result = await work
    finally:
        counting.cancel()
    return result, ticks - before


async def test_a_long_read_leaves_the_event_loop_free(workspace: Path, call) -> None:
    (workspace / "big.txt").write_bytes(b"0123456789abcdef\n" * (4 * MIB))
    result, ticks = await ticks_while(call("read", path="big.txt", offset=4 * MIB - 1))
    assert result.details["total_lines"] == 4 * MIB and "0123456789abcdef" in result.content
    assert ticks > 0, "the read ran on the event loop: nothing else ran meanwhile"


async def test_every_file_tool_runs_off_the_event_loop(workspace: Path, call) -> None:
    (workspace / "a.txt").write_text("one\n")
    calls = {
        "read": {"path": "a.txt"},
        "list": {},
        "glob": {"pattern": "*"},
        "grep": {"pattern": "o"},
        "write": {"path": "b.txt", "content": "two\n"},
        "edit": {"path": "a.txt", "old_string": "one", "new_string": "uno"},
    }
    for name, arguments in calls.items():
        result, ticks = await ticks_while(call(name, **arguments))
        assert not result.is_error, result.content
        assert ticks > 0, f"{name} ran on the event loop"


async def test_edit_refuses_a_file_too_large_to_load_whole(workspace: Path, call) -> None:
    with (workspace / "huge.log").open("wb") as handle:
        handle.write(b"a line of text\n" * 1000)
        handle.truncate(TEXT_BYTES_CAP + 1)
    result = await call("edit", path="huge.log", old_string="a", new_string="b")
    assert result.is_error and "files over 10 MiB are not edited as a whole" in result.content
    assert "sed" in result.content


def test_a_small_change_in_a_large_file_gets_a_diff_with_the_right_line_numbers() -> None:
    lines = [f"line {n}\n" for n in range(1, 200_001)]
    before = "".join(lines)
    lines[149_999] = "changed\n"
    diff = unified_diff(before, "".join(lines), "big.txt")
    assert diff is not None
    assert "@@ -149997,7 +149997,7 @@" in diff and "-line 150000\n+changed\n" in diff


def test_a_diff_too_large_to_compute_is_skipped() -> None:
    lines = [f"line {n}\n" for n in range(20_000)]
    before = "".join(lines)
    after = "".join(line.upper() if n % 2 else line for n, line in enumerate(lines))
    assert DIFF_LINES_CAP < 20_000
    assert unified_diff(before, after, "x") is None
