"""The shell tool: exit codes, timeouts, tail-kept output, and cancellation that kills the whole group."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

import pytest

from harnez.tools import ToolCancelled, ToolContext
from harnez.tools.shell import OUTPUT_CAP_BYTES, ShellParams, ShellTool


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_until_gone(pids: list[int]) -> list[int]:
    """Poll briefly (a hang guard, not a timing check) and return the pids still alive."""
    for _ in range(100):
        if not any(alive(pid) for pid in pids):
            return []
        await asyncio.sleep(0.02)
    return [pid for pid in pids if alive(pid)]


async def test_reports_output_exit_code_and_duration(call) -> None:
    result = await call("shell", command="echo out; echo err >&2; exit 3")
    assert result.content.splitlines()[:2] == ["out", "err"]
    assert re.search(r"\[exit code 3 after \d+\.\d s\]$", result.content)
    assert result.is_error
    assert result.details["exit_code"] == 3 and result.details["duration"] >= 0


async def test_runs_in_the_workspace(workspace: Path, call) -> None:
    result = await call("shell", command="pwd")
    assert not result.is_error
    assert result.content.splitlines()[0] == os.path.realpath(workspace)


async def test_a_silent_command_says_no_output(call) -> None:
    result = await call("shell", command="true")
    assert result.content.startswith("(no output)\n[exit code 0")
    assert not result.is_error


async def test_big_output_keeps_the_tail_and_counts_what_was_dropped(call) -> None:
    result = await call("shell", command="seq 1 100000")
    lines = result.content.splitlines()
    dropped = result.details["dropped_bytes"]
    total = sum(len(f"{n}\n") for n in range(1, 100001))
    assert dropped == total - OUTPUT_CAP_BYTES
    assert lines[0] == f"[… {dropped} earlier bytes of output dropped; the last {OUTPUT_CAP_BYTES} follow]"
    assert lines[-2] == "100000"


async def test_timeout_kills_the_command(call) -> None:
    result = await call("shell", command="echo started; sleep 30", timeout=0.3)
    assert result.is_error and result.details["timed_out"] is True
    assert result.content.startswith("started\n[timed out after 0.3 s")
    assert result.details["duration"] < 5


async def test_a_background_job_holding_the_output_does_not_hang_the_call(call) -> None:
    result = await call("shell", command="sleep 30 & echo $!; echo done")
    pid = int(result.content.splitlines()[0])
    assert result.details["exit_code"] == 0 and "done" in result.content
    os.kill(pid, 9)


async def test_streams_output_to_the_context_callback(workspace: Path) -> None:
    chunks: list[str] = []
    ctx = ToolContext(workspace=workspace, on_output=chunks.append)
    await ShellTool().run(ShellParams(command="echo one; echo two"), ctx)
    assert "".join(chunks) == "one\ntwo\n"


async def test_cancel_kills_the_process_group_within_a_second_and_keeps_output(workspace: Path) -> None:
    chunks: list[str] = []
    ctx = ToolContext(workspace=workspace, on_output=chunks.append)
    command = "sleep 30 & echo child $!; echo shell $$; sleep 30"
    task = asyncio.create_task(ShellTool().run(ShellParams(command=command), ctx))
    async with asyncio.timeout(10):  # hang guard
        while "shell" not in "".join(chunks):
            await asyncio.sleep(0.01)
    pids = [int(pid) for pid in re.findall(r"(?:child|shell) (\d+)", "".join(chunks))]
    assert len(pids) == 2 and all(alive(pid) for pid in pids)

    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as raised:
        await task
    elapsed = time.monotonic() - started

    assert elapsed < 1.0
    assert isinstance(raised.value, ToolCancelled)
    partial = raised.value.result
    assert partial.cancelled and partial.is_error
    assert partial.content.startswith(f"child {pids[0]}\nshell {pids[1]}\n[cancelled by the user")
    assert await wait_until_gone(pids) == []


async def test_cancel_escalates_to_sigkill_for_a_process_ignoring_sigterm(workspace: Path) -> None:
    chunks: list[str] = []
    ctx = ToolContext(workspace=workspace, on_output=chunks.append)
    command = "trap '' TERM; echo ready $$; while true; do sleep 0.05; done"
    task = asyncio.create_task(ShellTool().run(ShellParams(command=command), ctx))
    async with asyncio.timeout(10):
        while "ready" not in "".join(chunks):
            await asyncio.sleep(0.01)
    pid = int("".join(chunks).split()[1])
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 1.0
    assert await wait_until_gone([pid]) == []


async def test_empty_command_is_an_argument_error(call) -> None:
    result = await call("shell", command="")
    assert result.is_error and "command" in result.content


@pytest.mark.parametrize("yields", [0, 1, 2, 3, 5, 8])
async def test_a_cancellation_while_the_command_starts_still_stops_it(tmp_path: Path, yields: int) -> None:
    marker = tmp_path / "pid"
    running = asyncio.ensure_future(
        ShellTool().run(ShellParams(command=f"echo $$ > {marker}; sleep 30"), ToolContext(tmp_path))
    )
    for _ in range(yields):  # land the cancellation at different points of starting
        await asyncio.sleep(0)
    running.cancel()
    with pytest.raises(asyncio.CancelledError) as raised:
        await running
    await asyncio.sleep(0.3)  # a command left running writes its pid by now
    pid = int(marker.read_text()) if marker.exists() and marker.read_text().strip() else None
    assert pid is None or await wait_until_gone([pid]) == []
    if isinstance(raised.value, ToolCancelled):
        assert raised.value.result.cancelled
