"""Benchmark `harnez import` of 2,000 sessions (500 per harness, the shapes of the real fixtures).

The HOME is generated here (benchmarks/.data/, git-ignored): copies of the real fixture sessions of
each harness with fresh ids — Claude Code and pi files, Codex rollouts, and one OpenCode database
holding 500 sessions. It is imported into a new database, then imported again (nothing changed).
The reference, measured in the same run, is reading every session (`Reader.read`) without storing.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harnez.importers import Readers  # noqa: E402  (after the path set-up)
from harnez.server import Server  # noqa: E402

FIXTURES = REPO.parent / "shared" / "fixtures" / "importers"
DATA = REPO / "benchmarks" / ".data"
CLAUDE = [
    (
        "claude-code/agtrace-2.0.28/home/.claude/projects/-Users-test_user-agent-sample/"
        "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl",
        "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9",
    ),
    ("claude-code/git-ai-2.0.69/claude-code-with-thinking.jsonl", "dac34307-159f-4fcd-9c21-35210246ad38"),
    (
        "claude-code/lazyagents-2.1.284/home/.claude/projects/-home-user-proj/"
        "609b44ad-7c18-4745-a70b-784281dce85e.jsonl",
        "609b44ad-7c18-4745-a70b-784281dce85e",
    ),
]
CODEX = [
    ("codex/agtrace-0.66.0/codex_session.jsonl", "019b04ae-b1c6-7c72-a134-a4c2de66058c"),
    (
        "codex/lazyagents-0.158.0/home/.codex/sessions/2026/09/30/"
        "rollout-2026-09-30T08-39-00-01a0f21c-5c40-7f72-9aa9-ef0b43570680.jsonl",
        "01a0f21c-5c40-7f72-9aa9-ef0b43570680",
    ),
]
PI = [
    (
        "pi/lazyagents-0.87.1/home/.pi/agent/sessions/--home-user-proj--/"
        "2026-09-30T11-37-32-309Z_01a0f21b-0595-72a7-84dc-df0fc0d0de3f.jsonl",
        "01a0f21b-0595-72a7-84dc-df0fc0d0de3f",
    ),
    ("pi/agent-sessions-stub-provider/small.jsonl", "019e19b4-eb48-746a-aa6b-8dfcfa37954b"),
]
OPENCODE = "opencode/lazyagents-1.18.33/home/.local/share/opencode/opencode.db"
OPENCODE_SESSION = "ses_f0de500f8ffeXvsiYJDOg5JtrU"


def generate(home: Path, per_harness: int) -> None:
    """Write the HOME: `per_harness` sessions of each harness."""
    for n in range(per_harness):
        new = str(uuid.uuid4())
        path, old = CLAUDE[n % len(CLAUDE)]
        _copy_text(
            FIXTURES / path, home / ".claude" / "projects" / f"-bench-{n % 25}" / f"{new}.jsonl", old, new
        )
        path, old = CODEX[n % len(CODEX)]
        _copy_text(
            FIXTURES / path,
            home
            / ".codex"
            / "sessions"
            / "2026"
            / "09"
            / f"{n % 28 + 1:02d}"
            / f"rollout-2026-09-30T08-39-00-{new}.jsonl",
            old,
            new,
        )
        path, old = PI[n % len(PI)]
        _copy_text(
            FIXTURES / path,
            home
            / ".pi"
            / "agent"
            / "sessions"
            / f"--bench-{n % 25}--"
            / f"2026-09-30T11-37-32-309Z_{new}.jsonl",
            old,
            new,
        )
    _opencode(home / ".local" / "share" / "opencode" / "opencode.db", per_harness)


def _copy_text(source: Path, target: Path, old: str, new: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def _opencode(target: Path, sessions: int) -> None:
    """The fixture database with its one session repeated under fresh ids."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / OPENCODE, target)
    db = sqlite3.connect(target)
    with db:
        for n in range(1, sessions):
            suffix = f"{n:06d}"
            db.execute(
                "INSERT INTO session SELECT ? || substr(id, 11), project_id, workspace_id, parent_id, slug, "
                "directory, path, title, version, share_url, summary_additions, summary_deletions, "
                "summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, "
                "tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created, "
                "time_updated, time_compacting, time_archived FROM session WHERE id = ?",
                (f"ses_{suffix}", OPENCODE_SESSION),
            )
            db.execute(
                "INSERT INTO message SELECT id || ?, ? || substr(session_id, 11), time_created, time_updated, "
                "data FROM message WHERE session_id = ?",
                (suffix, f"ses_{suffix}", OPENCODE_SESSION),
            )
            db.execute(
                "INSERT INTO part SELECT id || ?, message_id || ?, ? || substr(session_id, 11), time_created, "
                "time_updated, data FROM part WHERE session_id = ?",
                (suffix, suffix, f"ses_{suffix}", OPENCODE_SESSION),
            )
    db.close()


async def import_twice(home: Path, database: Path, workspace: Path) -> tuple[float, float, int, int]:
    server = await Server.open(database)
    try:
        started = time.perf_counter()
        first = await server.import_sessions(home, workspace=workspace)
        middle = time.perf_counter()
        again = await server.import_sessions(home, workspace=workspace)
        ended = time.perf_counter()
    finally:
        await server.close()
    if first.skipped:
        raise SystemExit(f"sources skipped: {first.skipped[:3]}")
    return middle - started, ended - middle, first.imported, again.unchanged


def read_only(home: Path) -> tuple[float, int]:
    started, count = time.perf_counter(), 0
    with Readers() as readers:
        for ref in readers.locate(home):
            count += len(readers[ref.harness].read(ref))
    return time.perf_counter() - started, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-harness", type=int, default=500)
    args = parser.parse_args()
    if not FIXTURES.is_dir():
        sys.exit(f"the importer fixtures are missing: {FIXTURES}")
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=DATA) as scratch:
        home, workspace = Path(scratch) / "home", Path(scratch) / "workspace"
        workspace.mkdir()
        began = time.perf_counter()
        generate(home, args.per_harness)
        print(f"generated {4 * args.per_harness:,} sessions in {time.perf_counter() - began:.1f} s")
        reading, read_count = read_only(home)
        first, again, imported, unchanged = asyncio.run(
            import_twice(home, Path(scratch) / "harnez.sqlite", workspace)
        )
        size = (Path(scratch) / "harnez.sqlite").stat().st_size / 1e6
    print(
        f"import: {imported:,} sessions in {first:.2f} s ({imported / first:,.0f}/s); database {size:.1f} MB"
    )
    print(f"import again (nothing changed, {unchanged:,} sources skipped unread): {again:.2f} s")
    print(
        f"reference, reading the {read_count:,} sessions without storing them: {reading:.2f} s — import takes "
        f"{first / reading:.2f}× that"
    )
    print("target: seconds, not minutes")


if __name__ == "__main__":
    main()
