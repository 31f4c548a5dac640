"""Versions and layouts of each harness's format that the fixtures lack, written small inside the tests
from the shapes in each harness's own source (docs/importers.md lists them)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from harnez.importers import Readers, detect
from harnez.importers.to_context import context_records


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def summaries(path: Path) -> list[dict]:
    with Readers() as readers:
        return [s.to_json() for ref in readers.refs_for(path) for s in readers[ref.harness].summarize(ref)]


def sessions(path: Path) -> list[dict]:
    with Readers() as readers:
        return [s.to_json() for ref in readers.refs_for(path) for s in readers[ref.harness].read(ref)]


def located(home: Path, harness: str) -> list[Path]:
    with Readers() as readers:
        return [ref.path for ref in readers.locate(home, [harness])]


# Codex ----------------------------------------------------------------------------------------------

TS_ROLLOUT_ID = "5e3f2a10-4b7c-4d8e-9f01-23456789abcd"


def _ts_rollout(home: Path) -> Path:
    """A session of the TypeScript Codex CLI (spring 2025): one pretty-printed JSON document
    `{"session": {...}, "items": [...]}` in `~/.codex/sessions/rollout-<date>-<id>.json`."""
    path = home / ".codex" / "sessions" / f"rollout-2025-04-20-{TS_ROLLOUT_ID}.json"
    path.parent.mkdir(parents=True)
    items = [
        {"role": "user", "type": "message", "content": [{"type": "input_text", "text": "what is in src?"}]},
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "List it."}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "shell",
            "arguments": '{"command": ["ls", "src"]}',
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": '{"output": "main.py\\n", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}',
        },
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "One file: main.py.", "annotations": []}],
        },
        {"role": "user", "type": "message", "content": [{"type": "input_text", "text": "thanks"}]},
    ]
    document = {
        "session": {"timestamp": "2025-04-20T09:15:00.000Z", "id": TS_ROLLOUT_ID, "instructions": ""},
        "items": items,
    }
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def test_a_typescript_codex_cli_json_rollout_is_found_recognised_and_read(tmp_path: Path) -> None:
    path = _ts_rollout(tmp_path)
    assert located(tmp_path, "codex") == [path]
    assert detect(path) == "codex"
    [summary] = summaries(path)
    assert summary["session_id"] == TS_ROLLOUT_ID
    assert (summary["user_messages"], summary["tool_calls"], summary["tool_results"]) == (2, 1, 1)
    assert summary["usage"] is None  # that CLI recorded no token counts
    assert summary["started_at"] == "2025-04-20T09:15:00.000Z"
    assert summary["integrity"]["records"] == 7 and summary["integrity"]["unparsed_records"] == 0
    [session] = sessions(path)
    texts = [e.get("text") for e in session["entries"] if e["type"] == "user"]
    assert texts == ["what is in src?", "thanks"]
    [result] = [e for e in session["entries"] if e["type"] == "tool_result"]
    assert result["content"] == "main.py\n"


def test_a_typescript_codex_cli_rollout_imports(tmp_path: Path) -> None:
    _ts_rollout(tmp_path / "home")
    workspace = tmp_path / "work"
    workspace.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "harnez", "import", "--home", str(tmp_path / "home"), "--json"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["imported"] == 1, report
    db = sqlite3.connect(workspace / ".harnez" / "harnez.sqlite")
    try:
        [(original,)] = db.execute("SELECT original_id FROM imported_sessions").fetchall()
    finally:
        db.close()
    assert original == TS_ROLLOUT_ID


def test_a_typescript_codex_cli_rollout_over_the_record_cap_is_skipped_counted_and_named(
    tmp_path: Path,
) -> None:
    path = _ts_rollout(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["items"].append({"type": "function_call_output", "call_id": "c2", "output": "x" * (16 * 2**20)})
    path.write_text(json.dumps(document), encoding="utf-8")
    [summary] = summaries(path)
    assert summary["session_id"] == TS_ROLLOUT_ID  # from the file name: the file is not read
    assert summary["integrity"]["oversized_records"] == [{"record": str(path), "bytes": path.stat().st_size}]
    assert (summary["integrity"]["records"], summary["integrity"]["unparsed_records"]) == (1, 1)


# OpenCode -------------------------------------------------------------------------------------------


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _project_store(home: Path) -> Path:
    """OpenCode's per-project store of summer 2025: `project/<p>/storage/session/{info,message,part}`;
    one session of the first message shape (parts inline, `metadata`), one of the later one."""
    store = home / ".local" / "share" / "opencode" / "project" / "home-me-app" / "storage"
    _write_json(store / "session" / "info" / "ses_old.json", {"id": "ses_old", "title": "First shape"})
    _write_json(
        store / "session" / "message" / "ses_old" / "msg_1.json",
        {
            "id": "msg_1",
            "role": "user",
            "parts": [{"type": "text", "text": "what does main.py do?"}],
            "metadata": {"time": {"created": 1750000000000}, "sessionID": "ses_old", "tool": {}},
        },
    )
    _write_json(
        store / "session" / "message" / "ses_old" / "msg_2.json",
        {
            "id": "msg_2",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "state": "result",
                        "toolCallId": "call_1",
                        "toolName": "read",
                        "args": {"filePath": "main.py"},
                        "result": "print('hi')",
                    },
                },
                {"type": "text", "text": "It prints hi."},
            ],
            "metadata": {
                "time": {"created": 1750000001000, "completed": 1750000002000},
                "sessionID": "ses_old",
                "tool": {"call_1": {"title": "main.py", "time": {"start": 1, "end": 2}}},
                "assistant": {
                    "system": [],
                    "modelID": "claude-sonnet-4",
                    "providerID": "anthropic",
                    "path": {"cwd": "/home/me/app", "root": "/home/me/app"},
                    "cost": 0.01,
                    "tokens": {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 2, "write": 0}},
                },
            },
        },
    )
    _write_json(store / "session" / "info" / "ses_new.json", {"id": "ses_new", "title": "Later shape"})
    _write_json(
        store / "session" / "message" / "ses_new" / "msg_3.json",
        {"id": "msg_3", "role": "user", "sessionID": "ses_new", "time": {"created": 1751000000000}},
    )
    _write_json(
        store / "session" / "part" / "ses_new" / "msg_3" / "prt_1.json",
        {"id": "prt_1", "messageID": "msg_3", "sessionID": "ses_new", "type": "text", "text": "hello"},
    )
    _write_json(
        store / "session" / "message" / "ses_new" / "msg_4.json",
        {
            "id": "msg_4",
            "role": "assistant",
            "sessionID": "ses_new",
            "providerID": "openai",
            "modelID": "gpt-4.1",
            "path": {"cwd": "/home/me/app", "root": "/home/me/app"},
            "time": {"created": 1751000001000, "completed": 1751000002000},
            "tokens": {"input": 3, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        },
    )
    _write_json(
        store / "session" / "part" / "ses_new" / "msg_4" / "prt_2.json",
        {"id": "prt_2", "messageID": "msg_4", "sessionID": "ses_new", "type": "text", "text": "Hi."},
    )
    return store


def test_opencode_per_project_stores_of_summer_2025_are_found_and_both_message_shapes_read(
    tmp_path: Path,
) -> None:
    store = _project_store(tmp_path)
    with Readers() as readers:
        refs = list(readers.locate(tmp_path, ["opencode"]))
    assert [(ref.path, ref.key) for ref in refs] == [(store, "ses_new"), (store, "ses_old")]
    by_id = {s["session_id"]: s for s in summaries(store)}
    old, new = by_id["ses_old"], by_id["ses_new"]
    assert (old["title"], old["cwd"], old["user_messages"], old["model_calls"]) == (
        "First shape",
        "/home/me/app",
        1,
        1,
    )
    assert (old["tool_calls"], old["tool_results"], old["models"]) == (1, 1, ["anthropic/claude-sonnet-4"])
    assert old["usage"] == {
        "input": 10,
        "output": 5,
        "cache_read": 2,
        "cache_write": 0,
        "reasoning": 0,
        "cost": 0.01,
    }
    assert old["ending"] == {"status": "completed"}
    assert (new["user_messages"], new["model_calls"], new["models"], new["cwd"]) == (
        1,
        1,
        ["openai/gpt-4.1"],
        "/home/me/app",
    )
    [session] = [s for s in sessions(store) if s["session_id"] == "ses_old"]
    kinds = [e["type"] for e in session["entries"]]
    assert kinds[:3] == ["user", "assistant", "tool_result"]
    assert session["entries"][0]["text"] == "what does main.py do?"


# Claude Code ----------------------------------------------------------------------------------------


def _claude(uuid: str, kind: str, content, *, message: dict | None = None, **extra) -> dict:
    return {
        "type": kind,
        "uuid": uuid,
        "sessionId": "s-1",
        "timestamp": f"2025-10-01T00:00:{len(uuid):02d}.000Z",
        "message": {"role": kind, "content": content, **(message or {})},
        **extra,
    }


def test_claude_server_tool_blocks_are_provider_items_not_unanswered_tool_calls(tmp_path: Path) -> None:
    """A server tool (web search, web fetch, code execution) puts its call and its result in the
    assistant's own content: no user record answers it, and it is not a `tool_use` block."""
    response = {"id": "msg_1", "model": "claude-x", "usage": {"input_tokens": 4, "output_tokens": 3}}
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
    found = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://example.org", "title": "Example"}],
    }
    path = write_jsonl(
        tmp_path / "s-1.jsonl",
        [
            _claude("u1", "user", "search the web for q"),
            _claude("a1", "assistant", [search], message=response, requestId="req_1"),
            _claude("a2", "assistant", [found], message=response, requestId="req_1"),
            _claude(
                "a3",
                "assistant",
                [{"type": "text", "text": "Found it."}],
                message=response,
                requestId="req_1",
            ),
        ],
    )
    [summary] = summaries(path)
    assert (summary["model_calls"], summary["tool_calls"], summary["tool_results"]) == (1, 0, 0)
    assert summary["ending"] == {"status": "completed"}
    [session] = sessions(path)
    [turn] = [e for e in session["entries"] if e["type"] == "assistant"]
    assert [o["item"]["type"] for o in turn["opaque"]] == ["server_tool_use", "web_search_tool_result"]
    assert turn["parts"] == [{"type": "text", "text": "Found it."}]


def test_codex_prompt_images_attached_from_files_are_counted(tmp_path: Path) -> None:
    """Codex 0.4x+ lists images attached from a file as `local_images` of the prompt event."""
    path = write_jsonl(
        tmp_path / "rollout-2025-10-01T00-00-00-c1.jsonl",
        [
            {"timestamp": "2025-10-01T00:00:00Z", "type": "session_meta", "payload": {"id": "c1"}},
            {
                "timestamp": "2025-10-01T00:00:01Z",
                "type": "event_msg",
                "payload": {
                    "type": "user_message",
                    "message": "what is in these?",
                    "images": ["data:image/png;base64,AAAA"],
                    "local_images": ["/home/me/a.png", "/home/me/b.png"],
                },
            },
        ],
    )
    [session] = sessions(path)
    [prompt] = [e for e in session["entries"] if e["type"] == "user" and e["kind"] == "prompt"]
    assert (prompt["text"], prompt["images"]) == ("what is in these?", 3)


# pi -------------------------------------------------------------------------------------------------


def test_a_pi_version_1_compaction_keeps_the_entries_from_its_first_kept_index(tmp_path: Path) -> None:
    """Version 1 entries have no ids; a compaction names the first entry it keeps by its position in
    the file (`firstKeptEntryIndex`, the header being 0), which pi's migration turns into an id."""

    def message(role: str, text: str) -> dict:
        return {
            "type": "message",
            "timestamp": "2025-06-01T10:00:00.000Z",
            "message": {"role": role, "content": text},
        }

    path = write_jsonl(
        tmp_path / ".pi" / "agent" / "sessions" / "--w--" / "2025-06-01T10-00-00-000Z_v1.jsonl",
        [
            {"type": "session", "id": "v1", "timestamp": "2025-06-01T10:00:00.000Z", "cwd": "/w"},
            message("user", "old question"),
            message("user", "recent question"),
            {
                "type": "compaction",
                "timestamp": "2025-06-01T10:05:00.000Z",
                "summary": "They talked about the old question.",
                "firstKeptEntryIndex": 2,
                "tokensBefore": 900,
            },
            message("user", "new question"),
        ],
    )
    with Readers() as readers:
        [ref] = readers.refs_for(path)
        [session] = readers["pi"].read(ref)
    records = context_records(session)
    [compaction] = [r for r in records if r[0] == "compaction"]
    kept = [item["text"] for item in compaction[2]["items"]]
    assert kept[1:] == ["recent question"]
    assert records[-1][2]["text"] == "new question"


def test_opencode_counts_only_image_files_of_a_prompt_as_images(tmp_path: Path) -> None:
    store = tmp_path / "storage"
    _write_json(store / "session" / "proj" / "ses_1.json", {"id": "ses_1", "title": "Files"})
    _write_json(
        store / "message" / "ses_1" / "msg_1.json",
        {"id": "msg_1", "role": "user", "sessionID": "ses_1", "time": {"created": 1}},
    )
    parts = [
        {"type": "text", "text": "compare the log and the screenshot"},
        {"type": "file", "mime": "text/plain", "filename": "error.log", "url": "file:///w/error.log"},
        {"type": "file", "mime": "image/png", "filename": "shot.png", "url": "data:image/png;base64,AAAA"},
    ]
    for number, part in enumerate(parts, 1):
        _write_json(store / "part" / "msg_1" / f"prt_{number}.json", {"id": f"prt_{number}", **part})
    [session] = sessions(store)
    [prompt] = [e for e in session["entries"] if e["type"] == "user"]
    assert (prompt["text"], prompt["images"]) == ("compare the log and the screenshot", 1)


def test_opencode_sessions_kept_only_in_the_session_message_projection_are_read(tmp_path: Path) -> None:
    """Newer OpenCode keeps a session's conversation in `session_message` (one row per prompt,
    assistant message, shell command, compaction…) and may leave `message`/`part` empty for it."""
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE session (id text PRIMARY KEY, directory text, title text, version text,
          parent_id text, time_created integer, time_updated integer);
        CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer,
          time_updated integer, data text);
        CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text, data text);
        CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL, type text NOT NULL,
          seq integer NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
        """
    )
    db.execute("INSERT INTO session VALUES ('ses_p', '/w', 'Projected', '1.20.0', NULL, 1000, 9000)")
    rows = [
        ("user", {"text": "list the files", "files": [{"mime": "image/png"}], "time": {"created": 1000}}),
        ("model-switched", {"model": {"id": "m", "providerID": "p"}, "time": {"created": 1500}}),
        (
            "assistant",
            {
                "agent": "build",
                "model": {"id": "gpt-5", "providerID": "openai"},
                "content": [
                    {"type": "reasoning", "id": "r1", "text": "ls it"},
                    {
                        "type": "tool",
                        "id": "call_1",
                        "name": "bash",
                        "state": {
                            "status": "completed",
                            "input": {"command": "ls"},
                            "content": [{"type": "text", "text": "a.txt\n"}],
                            "structured": {},
                            "result": None,
                        },
                        "time": {"created": 2000},
                    },
                    {"type": "text", "id": "t1", "text": "One file."},
                ],
                "tokens": {"input": 7, "output": 3, "reasoning": 1, "cache": {"read": 2, "write": 0}},
                "cost": 0.5,
                "time": {"created": 2000, "completed": 3000},
            },
        ),
        ("shell", {"callID": "s1", "command": "git status", "output": "clean", "time": {"created": 4000}}),
        (
            "compaction",
            {"reason": "auto", "summary": "They listed files.", "recent": "", "time": {"created": 5000}},
        ),
        ("synthetic", {"sessionID": "ses_p", "text": "continue", "time": {"created": 5500}}),
    ]
    for seq, (kind, data) in enumerate(rows):
        db.execute(
            "INSERT INTO session_message VALUES (?, 'ses_p', ?, ?, 0, 0, ?)",
            (f"sm_{seq}", kind, seq, json.dumps(data)),
        )
    db.commit()
    db.close()
    [summary] = summaries(path)
    assert (summary["session_id"], summary["title"], summary["cwd"]) == ("ses_p", "Projected", "/w")
    assert (
        summary["user_messages"],
        summary["model_calls"],
        summary["tool_calls"],
        summary["tool_results"],
    ) == (
        1,
        1,
        1,
        1,
    )
    assert summary["models"] == ["openai/gpt-5"]
    assert summary["usage"] == {
        "input": 7,
        "output": 3,
        "cache_read": 2,
        "cache_write": 0,
        "reasoning": 1,
        "cost": 0.5,
    }
    assert (summary["compactions"], summary["integrity"]["records"]) == (1, 6)
    [session] = sessions(path)
    [result] = [e for e in session["entries"] if e["type"] == "tool_result"]
    assert result["content"] == "a.txt\n"
    [prompt] = [e for e in session["entries"] if e["type"] == "user" and e["kind"] == "prompt"]
    assert (prompt["text"], prompt["images"]) == ("list the files", 1)


def test_a_claude_prompt_queued_while_the_model_worked_is_kept_as_context(tmp_path: Path) -> None:
    """Claude Code 2.x records what the person typed during a turn as a `queued_command` attachment;
    the model reads it with its next request. It is not one of the counted prompts."""
    response = {"id": "msg_1", "model": "claude-x", "usage": {"input_tokens": 4, "output_tokens": 3}}
    path = write_jsonl(
        tmp_path / "s-1.jsonl",
        [
            _claude("u1", "user", "run the tests"),
            _claude(
                "a1",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}],
                message=response,
                requestId="req_1",
            ),
            {
                "type": "attachment",
                "uuid": "att1",
                "sessionId": "s-1",
                "timestamp": "2025-10-01T00:00:05.000Z",
                "attachment": {"type": "queued_command", "prompt": "and then lint", "commandMode": "prompt"},
            },
            _claude("u2", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "3 passed"}]),
            _claude(
                "a2",
                "assistant",
                [{"type": "text", "text": "Passed; linting next."}],
                message={**response, "id": "msg_2"},
                requestId="req_2",
            ),
        ],
    )
    [summary] = summaries(path)
    assert summary["user_messages"] == 1
    [session] = sessions(path)
    users = [(e["kind"], e["text"]) for e in session["entries"] if e["type"] == "user"]
    assert users == [("prompt", "run the tests"), ("context", "and then lint")]
    with Readers() as readers:
        [ref] = readers.refs_for(path)
        [full] = readers["claude-code"].read(ref)
    assert any(r[2].get("text") == "and then lint" for r in context_records(full))


# Any JSON harness -----------------------------------------------------------------------------------

CUT_EMOJI = '"done \\ud83d"'
"""Half of an emoji as JavaScript's `JSON.stringify` escapes it when a harness cut a string in the
middle of one (valid JSON that orjson refuses)."""


def test_a_record_with_half_an_emoji_is_read_and_imported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    prompt = json.dumps(
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s-cut",
            "cwd": str(tmp_path / "w"),
            "timestamp": "2025-10-01T00:00:00Z",
            "message": {"role": "user", "content": "XX"},
        }
    )
    (folder / "s-cut.jsonl").write_text(prompt.replace('"XX"', CUT_EMOJI) + "\n", encoding="utf-8")
    [summary] = summaries(folder / "s-cut.jsonl")
    assert (summary["session_id"], summary["user_messages"], summary["integrity"]["unparsed_records"]) == (
        "s-cut",
        1,
        0,
    )
    [session] = sessions(folder / "s-cut.jsonl")
    assert session["entries"][0]["text"] == "done \ufffd"
    workspace = tmp_path / "work"
    workspace.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "harnez", "import", "--home", str(home), "--json"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"] == 1


def test_opencode_text_with_half_an_emoji_or_bytes_that_are_not_utf8_is_read(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE session (id text PRIMARY KEY, title text, time_created integer, time_updated integer);
        CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer,
          time_updated integer, data text);
        CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text, data text);
        """
    )
    db.execute("INSERT INTO session VALUES ('ses_1', 'Cut', 1, 2)")
    db.execute(
        "INSERT INTO message VALUES ('msg_1', 'ses_1', 1, 1, ?)",
        (json.dumps({"role": "user", "time": {"created": 1}}),),
    )
    db.execute(
        "INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', ?)",
        ('{"type": "text", "text": ' + CUT_EMOJI + "}",),
    )
    db.execute(
        "INSERT INTO message VALUES ('msg_2', 'ses_1', 2, 2, CAST(? AS TEXT))",
        (b'{"role": "user", "time": {"created": 2}}',),
    )
    db.execute(
        "INSERT INTO part VALUES ('prt_2', 'msg_2', 'ses_1', CAST(? AS TEXT))",
        (b'{"type": "text", "text": "caf\xe9"}',),
    )
    db.commit()
    db.close()
    [session] = sessions(path)
    assert [e["text"] for e in session["entries"] if e["type"] == "user"] == ["done \ufffd", "caf\ufffd"]


def test_an_opencode_compaction_request_and_its_summary_message_are_one_compaction(tmp_path: Path) -> None:
    """OpenCode writes a compaction as a user message holding a `compaction` part, then an assistant
    message flagged `summary: true` whose text is the summary."""
    store = tmp_path / "storage"
    _write_json(store / "session" / "proj" / "ses_c.json", {"id": "ses_c", "title": "Compacted"})
    finish = {"type": "step-finish", "tokens": {"input": 1, "output": 1, "cache": {"read": 0, "write": 0}}}
    messages = [
        ("msg_1", "user", {}, [{"type": "text", "text": "fix the bug"}]),
        ("msg_2", "assistant", {}, [{"type": "text", "text": "Fixed."}, finish]),
        ("msg_3", "user", {}, [{"type": "compaction", "auto": True}]),
        ("msg_4", "assistant", {"summary": True}, [{"type": "text", "text": "We fixed the bug."}, finish]),
        ("msg_5", "user", {}, [{"type": "text", "text": "now add a test"}]),
    ]
    for number, (message_id, role, extra, parts) in enumerate(messages, 1):
        info = {
            "id": message_id,
            "role": role,
            "sessionID": "ses_c",
            "time": {"created": number * 1000},
            **extra,
        }
        if role == "assistant":
            info.update(
                providerID="p", modelID="m", time={"created": number * 1000, "completed": number * 1000 + 1}
            )
        _write_json(store / "message" / "ses_c" / f"{message_id}.json", info)
        for index, part in enumerate(parts):
            _write_json(
                store / "part" / message_id / f"prt_{number}{index}.json",
                {"id": f"prt_{number}{index}", **part},
            )
    [summary] = summaries(store)
    assert (summary["user_messages"], summary["model_calls"], summary["compactions"]) == (3, 2, 1)
    with Readers() as readers:
        [ref] = readers.refs_for(store)
        [session] = readers["opencode"].read(ref)
    [compaction] = [e for e in session.entries if e.__class__.__name__ == "Compaction"]
    assert (compaction.summary, compaction.trigger) == ("We fixed the bug.", "auto")
    records = context_records(session)
    [record] = [r for r in records if r[0] == "compaction"]
    assert record[2]["items"][0]["text"].endswith("We fixed the bug.")
    assert records[-1][2]["text"] == "now add a test"


def test_claude_sessions_under_the_xdg_config_folder_are_found(tmp_path: Path) -> None:
    """Claude Code 1.0.29 and the releases after it kept projects in `~/.config/claude/projects/`."""
    xdg = write_jsonl(
        tmp_path / ".config" / "claude" / "projects" / "-w" / "s-xdg.jsonl", [_claude("u1", "user", "hi")]
    )
    legacy = write_jsonl(
        tmp_path / ".claude" / "projects" / "-w" / "s-old.jsonl", [_claude("u1", "user", "hi")]
    )
    assert located(tmp_path, "claude-code") == [legacy, xdg]
