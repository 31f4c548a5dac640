"""A hook command runs in bash in the workspace, reads its event on stdin, and keeps only the tail of its output."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from harnez.errors import HookError
from harnez.hooks import read_decision
from harnez.hooks.command import OUTPUT_CAP, run_command
from tests.agent.helpers import process_gone


async def test_the_event_arrives_on_stdin_in_the_workspace(tmp_path: Path) -> None:
    result = await run_command("pwd; cat", b'{"hook": "stop"}', tmp_path, 10)
    assert result.exit_code == 0 and result.stdout == f'{tmp_path}\n{{"hook": "stop"}}'


async def test_a_flood_of_output_keeps_only_its_tail_where_the_reason_is(tmp_path: Path) -> None:
    flood = "head -c 3000000 /dev/zero | tr '\\0' x; head -c 3000000 /dev/zero | tr '\\0' y >&2"
    result = await run_command(f"{flood}; echo ' the real reason' >&2; exit 2", b"", tmp_path, 30)
    assert len(result.stdout.encode()) == len(result.stderr.encode()) == OUTPUT_CAP
    assert set(result.stdout) == {"x"}
    decision = read_decision("stop", "flood", 30, result)
    assert decision.blocks and decision.reason.endswith("yyy the real reason")


async def test_a_hook_that_never_reads_a_large_event_still_answers(tmp_path: Path) -> None:
    result = await run_command("exit 0", b"x" * 5_000_000, tmp_path, 10)
    assert result.exit_code == 0 and not result.timed_out


async def test_cancelling_a_running_hook_kills_its_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pid"
    running = asyncio.ensure_future(run_command(f"sleep 30 & echo $! > {pids}; wait", b"", tmp_path, 60))
    for _ in range(500):
        if pids.exists() and pids.read_text().strip():
            break
        await asyncio.sleep(0.01)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert process_gone(int(pids.read_text()))


async def test_a_workspace_that_is_gone_is_a_hook_error(tmp_path: Path) -> None:
    with pytest.raises(HookError, match=r"Could not start the hook `true` in .*gone"):
        await run_command("true", b"", tmp_path / "gone", 10)
    assert os.path.exists(tmp_path)
