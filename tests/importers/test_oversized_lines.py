"""`harnez read` on a file with a line of tens of megabytes: memory stays bounded, the line is named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RECORD_MIB = 16
"""The longest line read as a record (`harnez.importers.jsonl.MAX_RECORD_BYTES`, docs/importers.md)."""
LINE_MIB = 48
"""The over-long line: three times `RECORD_MIB`, so that reading it whole would show in the peak."""

PEAK_RSS = """
import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "harnez", *sys.argv[1:]], capture_output=True, text=True)
sys.stdout.write(json.dumps({"rc": done.returncode, "out": done.stdout, "err": done.stderr,
    "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def _read(*args: str) -> dict:
    """`harnez read ARGS` in a process of its own, with that process's peak resident memory (KiB)."""
    done = subprocess.run(
        [sys.executable, "-c", "import json" + PEAK_RSS, "read", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _record(text: str) -> str:
    return (
        json.dumps({"type": "user", "sessionId": "s-1", "message": {"role": "user", "content": text}}) + "\n"
    )


def _big_line_bytes() -> int:
    return len(_record("x" * (LINE_MIB * 2**20)))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a small session file, the same with a 48 MiB record between its two prompts)."""
    folder = tmp_path_factory.mktemp("oversized")
    small, big = folder / "small.jsonl", folder / "big.jsonl"
    small.write_text(_record("first prompt") + _record("second prompt"))
    with big.open("w") as out:
        out.write(_record("first prompt"))
        out.write(_record("x" * (LINE_MIB * 2**20)))
        out.write(_record("second prompt"))
    return small, big


def test_a_line_far_longer_than_a_record_is_skipped_in_bounded_memory_and_named(
    files: tuple[Path, Path],
) -> None:
    small, big = files
    reference = _read(str(small), "--summary")
    shown = _read(str(big), "--summary")
    assert shown["rc"] == 0, shown["err"]
    grown_mib = (shown["peak_kib"] - reference["peak_kib"]) / 1024
    bound = 2.5 * RECORD_MIB  # the longest record read, and its copy while it is read
    assert grown_mib < bound < LINE_MIB, f"reading grew by {grown_mib:.0f} MiB for a {LINE_MIB} MiB line"
    assert "2 prompts" in shown["out"] and "(1 unparsed)" in shown["out"]
    assert (
        f"line 2 skipped unread: {_big_line_bytes():,} bytes, longer than the {RECORD_MIB} MiB Harnez reads "
        f"as one record (see its start: tail -n +2 {big} | head -c 2000)"
    ) in shown["out"]


def test_the_json_summary_lists_the_skipped_line_and_strict_mode_refuses_it(files: tuple[Path, Path]) -> None:
    _, big = files
    summary = json.loads(_read(str(big), "--summary", "--json")["out"])
    assert summary["user_messages"] == 2
    assert summary["integrity"]["oversized_lines"] == [{"line": 2, "bytes": _big_line_bytes()}]
    refused = _read(str(big), "--strict")
    assert refused["rc"] == 2 and "Line 2 of" in refused["err"] and "longer than the" in refused["err"]
