"""`harnez read` as a real process: summaries, transcripts, damaged files, strict mode, bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.importers.conftest import harnez_in

CLAUDE = (
    "claude-code/agtrace-2.0.28/home/.claude/projects/-Users-test_user-agent-sample/"
    "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
)
CODEX_HOME = "codex/lazyagents-0.158.0/home"


def harnez(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harnez", *args], capture_output=True, text=True, timeout=60)


def test_summary_json_prints_one_object_per_session_with_the_documented_fields(fixtures: Path) -> None:
    shown = harnez("read", str(fixtures / CLAUDE), "--summary", "--json")
    assert shown.returncode == 0, shown.stderr
    [line] = shown.stdout.splitlines()
    summary = json.loads(line)
    assert {
        "harness",
        "session_id",
        "agent_id",
        "source",
        "user_messages",
        "model_calls",
        "tool_calls",
        "tool_results",
        "usage",
        "models",
        "ending",
        "integrity",
        "started_at",
        "ended_at",
    } <= set(summary)
    assert summary["harness"] == "claude-code"
    assert summary["ending"] == {"status": "completed"}
    assert set(summary["integrity"]) == {
        "records",
        "unparsed_records",
        "torn_tail",
        "oversized_lines",
        "oversized_records",
    }


def test_a_home_is_searched_in_the_harness_layout_and_a_session_picked_by_id(fixtures: Path) -> None:
    shown = harnez(
        "read", str(fixtures / CODEX_HOME), "--harness", "codex", "--session", "01a0f21c", "--json"
    )
    assert shown.returncode == 0, shown.stderr
    [line] = shown.stdout.splitlines()
    session = json.loads(line)
    assert session["session_id"] == "01a0f21c-5c40-7f72-9aa9-ef0b43570680"
    kinds = [entry["type"] for entry in session["entries"]]
    assert kinds.count("assistant") == 2 and "tool_result" in kinds


def test_the_transcript_shows_prompts_tools_and_answers(fixtures: Path) -> None:
    shown = harnez("read", str(fixtures / CLAUDE))
    assert shown.returncode == 0, shown.stderr
    assert "> add myapp directory and create myapp/hoge.py" in shown.stdout
    assert "[tool Write]" in shown.stdout and "File created successfully" in shown.stdout


def test_an_unparsable_record_is_counted_and_strict_mode_refuses_it(fixtures: Path, tmp_path: Path) -> None:
    lines = (fixtures / CLAUDE).read_text(encoding="utf-8").splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join(lines[:5] + ["{not json at all\n"] + lines[5:]), encoding="utf-8")
    shown = harnez("read", str(damaged), "--summary", "--json")
    assert shown.returncode == 0, shown.stderr
    summary = json.loads(shown.stdout)
    assert summary["integrity"] == {
        "records": 27,
        "unparsed_records": 1,
        "torn_tail": False,
        "oversized_lines": [],
        "oversized_records": [],
    }
    assert summary["model_calls"] == 6
    strict = harnez("read", str(damaged), "--summary", "--strict")
    assert strict.returncode == 2
    assert (
        "Line 6" in strict.stderr
        and "not a JSON object" in strict.stderr
        and "Traceback" not in strict.stderr
    )


def test_one_bad_file_in_a_home_is_reported_and_skipped(fixtures: Path, tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-work"
    project.mkdir(parents=True)
    shutil.copy(fixtures / CLAUDE, project / "good.jsonl")
    (project / "unreadable.jsonl").mkdir()  # a folder where a file should be: reading it fails
    shown = harnez("read", str(tmp_path), "--summary", "--json")
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1
    assert "skipped" in shown.stderr and "unreadable.jsonl" in shown.stderr


def test_bad_input_is_one_clear_line_and_exit_code_2(tmp_path: Path) -> None:
    missing = harnez("read", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    other = tmp_path / "notes.txt"
    other.write_text("hello\n", encoding="utf-8")
    unknown = harnez("read", str(other))
    assert unknown.returncode == 2 and "--harness" in unknown.stderr
    empty = harnez("read", str(tmp_path), "--summary")
    assert empty.returncode == 2 and "no session" in empty.stderr.lower()
    (tmp_path / "empty.jsonl").write_bytes(b"")
    empty_file = harnez("read", str(tmp_path / "empty.jsonl"))
    assert empty_file.returncode == 2 and "is empty" in empty_file.stderr
    for shown in (missing, unknown, empty, empty_file):
        assert len(shown.stderr.strip().splitlines()) == 1 and "Traceback" not in shown.stderr


def test_a_file_with_nothing_of_the_harness_named_is_refused_not_read_as_an_empty_session(
    fixtures: Path, tmp_path: Path
) -> None:
    """The refusal of an unrecognised file says to name its format with --harness; doing so read any file
    of lines as a session of that harness, exit 0: the notes below as a "completed" codex session of
    two unparsed records, a Claude Code session as an empty pi one."""
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\nworld\n", encoding="utf-8")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    refused = {
        "notes": harnez("read", str(notes), "--harness", "codex"),
        "claude": harnez("read", str(fixtures / CLAUDE), "--harness", "pi", "--summary", "--json"),
        "empty": harnez("read", str(tmp_path / "empty.jsonl"), "--harness", "claude-code"),
    }
    for name, shown in refused.items():
        assert shown.returncode == 2 and shown.stdout == "", name
        assert len(shown.stderr.strip().splitlines()) == 1 and "Traceback" not in shown.stderr, name
    assert refused["notes"].stderr == (
        f"harnez: {notes} holds no codex session: no record in it is one codex writes. Is it a session file?\n"
    )
    assert refused["claude"].stderr.endswith(
        "holds no pi session: no record in it is one pi writes. It reads as a claude-code session file: "
        "name that with --harness, or leave --harness out.\n"
    )
    assert "is empty" in refused["empty"].stderr
    walked = harnez(
        "read", str(tmp_path), "--harness", "codex", "--summary"
    )  # a folder: such files are passed by
    assert walked.returncode == 2 and walked.stderr == f"harnez: Found no session at {tmp_path}.\n"
    named = harnez("read", str(fixtures / CLAUDE), "--harness", "claude-code", "--summary", "--json")
    assert named.returncode == 0 and json.loads(named.stdout)["harness"] == "claude-code"


def test_the_fixtures_folder_is_a_place_to_search_too(fixtures: Path) -> None:
    shown = harnez("read", str(fixtures), "--summary", "--json")
    assert shown.returncode == 0, shown.stderr
    harnesses = {json.loads(line)["harness"] for line in shown.stdout.splitlines()}
    assert harnesses == {"claude-code", "codex", "opencode", "pi"}


def test_import_then_list_and_show_from_the_command_line(fixtures: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(fixtures / CODEX_HOME, home)
    run = harnez_in(tmp_path)
    first = run("import", "--home", str(home), "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["imported"] == 1 and "importing: 1/1" in first.stderr
    again = run("import", "--home", str(home))
    assert again.returncode == 0 and "0 sessions imported, 0 updated, 1 sources unchanged" in again.stdout
    listed = run("sessions", "--all")
    assert "[codex] run echo fixture please" in listed.stdout
    session_id = listed.stdout.split()[0]
    shown = run("sessions", "show", session_id)
    assert "imported from codex session 01a0f21c-5c40-7f72-9aa9-ef0b43570680" in shown.stdout
    assert "> run echo fixture please" in shown.stdout and "The command printed fixture." in shown.stdout
    assert json.loads(run("sessions", "--all", "--json").stdout.splitlines()[0])["origin"] == "codex"
    bad = run("import", "--home", str(home), "--since", "last tuesday")
    assert bad.returncode == 2 and "YYYY-MM-DD" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_an_import_from_a_home_that_is_no_folder_is_refused_before_anything_is_created(
    fixtures: Path, tmp_path: Path
) -> None:
    """A mistyped --home is an error that says so, not "0 sessions imported" and a new empty database."""
    database = tmp_path / "db" / "harnez.sqlite"
    env = {**os.environ, "HARNEZ_DATABASE_PATH": str(database)}
    session_file = fixtures / CLAUDE
    for home in (tmp_path / "no-such-home", session_file):
        done = subprocess.run(
            [sys.executable, "-m", "harnez", "import", "--home", str(home)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=tmp_path,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert (
            done.stderr == f"harnez: --home {home} is not a folder: name the HOME whose .claude, .codex, "
            ".local/share/opencode or .pi to import (without --home, yours).\n"
        )
        assert not database.parent.exists()
