"""OpenCode records (message and part rows, or files of the JSON store) larger than the 16 MiB Harnez
reads as one record are skipped unread, counted and named — like an over-long JSONL line."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

RECORD_BYTES = 16 * 2**20
"""`harnez.importers.jsonl.MAX_RECORD_BYTES` (docs/importers.md)."""
SCHEMA = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
  directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
"""


def _user(session: str) -> dict:
    return {"role": "user", "sessionID": session, "time": {"created": 1000}}


def _assistant(session: str) -> dict:
    return {
        "role": "assistant",
        "sessionID": session,
        "providerID": "fake",
        "modelID": "fake-model",
        "time": {"created": 2000, "completed": 3000},
    }


def _tool_part(call: str, output: str) -> dict:
    return {
        "type": "tool",
        "callID": call,
        "tool": "bash",
        "state": {"status": "completed", "input": {"command": "cat big"}, "output": output},
    }


def _finish() -> dict:
    return {"type": "step-finish", "tokens": {"input": 5, "output": 2, "cache": {"read": 0, "write": 0}}}


def _read(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harnez", "read", str(path), "--summary", *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session whose second tool part holds 17 MiB of output, plus a 17 MiB message row."""
    path = tmp_path_factory.mktemp("opencode-cap") / "opencode.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.execute(
        "INSERT INTO session VALUES ('ses_1', 'p', NULL, 's', '/w', 'Big output', '1.18.33', 1000, 4000)"
    )
    messages = [
        ("msg_1", 1000, _user("ses_1")),
        ("msg_2", 2000, _assistant("ses_1")),
        ("msg_3", 3000, {**_user("ses_1"), "padding": "y" * (RECORD_BYTES + 10)}),
    ]
    for message_id, created, data in messages:
        db.execute(
            "INSERT INTO message VALUES (?, 'ses_1', ?, ?, ?)",
            (message_id, created, created, json.dumps(data)),
        )
    parts = [
        ("prt_1", "msg_1", {"type": "text", "text": "show both files"}),
        ("prt_2", "msg_2", _tool_part("call_1", "small\n")),
        ("prt_3", "msg_2", _tool_part("call_2", "x" * (RECORD_BYTES + 1))),
        ("prt_4", "msg_2", {"type": "text", "text": "One is small, one is huge."}),
        ("prt_5", "msg_2", _finish()),
    ]
    for part_id, message_id, data in parts:
        db.execute(
            "INSERT INTO part VALUES (?, ?, 'ses_1', 0, 0, ?)", (part_id, message_id, json.dumps(data))
        )
    db.commit()
    db.close()
    return path


def _size(data: dict) -> int:
    return len(json.dumps(data).encode())


def test_an_oversized_part_and_message_of_the_database_are_skipped_counted_and_named(database: Path) -> None:
    shown = _read(database, "--json")
    assert shown.returncode == 0, shown.stderr
    summary = json.loads(shown.stdout)
    big_part = _size(_tool_part("call_2", "x" * (RECORD_BYTES + 1)))
    big_message = _size({**_user("ses_1"), "padding": "y" * (RECORD_BYTES + 10)})
    assert summary["integrity"]["oversized_records"] == [
        {"record": "part prt_3 (message msg_2)", "bytes": big_part},
        {"record": "message msg_3", "bytes": big_message},
    ]
    # 3 messages + the 4 parts read + the skipped part; every skipped record counts as unparsed
    assert summary["integrity"]["records"] == 8
    assert summary["integrity"]["unparsed_records"] == 2
    assert (summary["user_messages"], summary["tool_calls"], summary["tool_results"]) == (1, 1, 1)
    assert summary["usage"]["input"] == 5

    text = _read(database)
    assert text.returncode == 0, text.stderr
    assert (
        f"part prt_3 (message msg_2) skipped unread: {big_part:,} bytes, longer than the 16 MiB Harnez "
        "reads as one record" in text.stdout
    )

    strict = _read(database, "--strict")
    assert strict.returncode == 2
    assert "part prt_3 (message msg_2)" in strict.stderr


def test_an_oversized_or_unparsable_file_of_the_json_store_is_skipped_counted_and_named(
    tmp_path: Path,
) -> None:
    store = tmp_path / "storage"
    (store / "session" / "proj").mkdir(parents=True)
    (store / "session" / "proj" / "ses_1.json").write_text(json.dumps({"id": "ses_1", "title": "Store"}))
    (store / "message" / "ses_1").mkdir(parents=True)
    for message_id, data in (("msg_1", _user("ses_1")), ("msg_2", _assistant("ses_1"))):
        (store / "message" / "ses_1" / f"{message_id}.json").write_text(
            json.dumps({"id": message_id, **data})
        )
    (store / "message" / "ses_1" / "msg_3.json").write_text("{torn")
    (store / "part").mkdir()
    # the oldest layout: parts flat in part/, each naming its message (ids first, as OpenCode writes them)
    flat = {
        "prt_1": {"messageID": "msg_1", "type": "text", "text": "show it"},
        "prt_2": {"messageID": "msg_2", **_tool_part("call_1", "x" * (RECORD_BYTES + 1))},
        "prt_3": {"messageID": "msg_2", **_finish()},
    }
    for part_id, data in flat.items():
        (store / "part" / f"{part_id}.json").write_text(json.dumps({"id": part_id, **data}))

    shown = _read(store, "--json")
    assert shown.returncode == 0, shown.stderr
    summary = json.loads(shown.stdout)
    big = store / "part" / "prt_2.json"
    assert summary["integrity"]["oversized_records"] == [{"record": str(big), "bytes": big.stat().st_size}]
    assert summary["integrity"]["unparsed_records"] == 2  # the big part and the torn message
    assert summary["integrity"]["records"] == 6
    assert (summary["user_messages"], summary["model_calls"], summary["tool_calls"]) == (1, 1, 0)
