"""Record kinds, fields and versions each harness writes that the fixtures lack, written small and by
hand from the shapes in each harness's own source, and read the way a person does: `harnez read
--summary --json`, `harnez read --json` and `harnez import` (then `harnez sessions show --json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.testing.scripted_model import RecordedRequest, ScriptedModel
from tests.agent.helpers import answer, make_settings
from tests.importers.conftest import harnez_in


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read(tmp_path: Path, source: Path, *flags: str) -> list[dict[str, Any]]:
    """`harnez read SOURCE --json [FLAGS]`: one object per session."""
    shown = harnez_in(tmp_path)("read", str(source), "--json", *flags)
    assert shown.returncode == 0, shown.stderr
    return [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]


def imported(tmp_path: Path, home: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`harnez import --home HOME`, then the one session it imported (`harnez sessions --json`) and
    its stored events (`harnez sessions show --json`)."""
    workspace = tmp_path / "work"
    workspace.mkdir(exist_ok=True)
    harnez = harnez_in(workspace)
    done = harnez("import", "--home", str(home), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"] == 1, done.stdout
    listed = harnez("sessions", "--all", "--json")
    [session] = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    shown = harnez("sessions", "show", session["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    return session, [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]


async def continued(
    home: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel, wire: str
) -> RecordedRequest:
    """Import HOME into a real database, send one more prompt on WIRE (the scripted model over
    loopback), and return the request the model received: what a continued session sends."""
    settings = make_settings(scripted_model, wire)
    server = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
    try:
        [session_id] = (await server.import_sessions(home, workspace=workspace)).session_ids
        scripted_model.add(answer("Continued."))
        await server.submit(session_id, "one more")
        await server.wait(session_id)
    finally:
        await server.close()
    [request] = scripted_model.requests
    return request


KEPT_HAIKU = [
    ("user", "write a haiku about rain"),
    ("assistant", "Rain on the tin roof."),
    ("user", "now make it sadder"),
    ("assistant", "Grey rain, no one home."),
    ("user", "one more"),
]
"""What a continued session sends of the haiku session whose 'now make it rhyme' turn was taken back."""


async def continued_chat(
    home: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> list[tuple[str, str]]:
    """The (role, content) of the messages a continued session sends on the Chat Completions wire."""
    request = await continued(home, workspace, db_path, scripted_model, "openai-chat")
    return [(m["role"], m["content"]) for m in request.body["messages"] if m["role"] != "system"]


# OpenCode -------------------------------------------------------------------------------------------


def test_an_opencode_command_run_as_a_subtask_keeps_its_prompt(tmp_path: Path) -> None:
    """A command run as a sub-agent's task (`subtask: true`) writes a user message whose only part is
    `subtask` (its `prompt` the expanded template); the parent's reply runs the `task` tool."""
    home = tmp_path / "home"
    store = home / ".local" / "share" / "opencode" / "storage"
    write_json(
        store / "session" / "proj" / "ses_1.json",
        {"id": "ses_1", "title": "Review", "directory": "/w", "time": {"created": 1000, "updated": 3000}},
    )
    write_json(
        store / "message" / "ses_1" / "msg_1.json",
        {"id": "msg_1", "role": "user", "sessionID": "ses_1", "time": {"created": 1000}},
    )
    subtask = {
        "id": "prt_1",
        "type": "subtask",
        "agent": "general",
        "description": "review the diff",
        "command": "review",
        "prompt": "Review the staged changes for bugs.",
    }
    write_json(store / "part" / "msg_1" / "prt_1.json", subtask)
    write_json(
        store / "message" / "ses_1" / "msg_2.json",
        {
            "id": "msg_2",
            "role": "assistant",
            "sessionID": "ses_1",
            "providerID": "p",
            "modelID": "m",
            "time": {"created": 2000, "completed": 3000},
        },
    )
    task = {
        "id": "prt_2",
        "type": "tool",
        "callID": "call_1",
        "tool": "task",
        "state": {
            "status": "completed",
            "input": {"prompt": "Review the staged changes for bugs.", "subagent_type": "general"},
            "output": "No bugs found.",
        },
    }
    write_json(store / "part" / "msg_2" / "prt_2.json", task)
    write_json(store / "part" / "msg_2" / "prt_3.json", {"id": "prt_3", "type": "step-finish", "tokens": {}})

    [summary] = read(tmp_path, store, "--summary")
    assert (summary["user_messages"], summary["tool_calls"], summary["tool_results"]) == (1, 1, 1)
    [session] = read(tmp_path, store)
    [prompt] = [e for e in session["entries"] if e["type"] == "user"]
    assert (prompt["kind"], prompt["text"]) == ("prompt", "Review the staged changes for bugs.")
    said = [e["text"] for e in imported(tmp_path, home)[1] if e["kind"] == "user-message"]
    assert said == ["Review the staged changes for bugs."]


# Codex ----------------------------------------------------------------------------------------------

SUB_AGENT = "019a0000-0000-7000-8000-0000000000b2"
TASK = "Count the TODOs in src/."


def _line(kind: str, payload: dict[str, Any], second: int) -> dict[str, Any]:
    return {"timestamp": f"2026-08-03T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def _rollout(home: Path, session: str, records: list[dict[str, Any]]) -> Path:
    """A rollout of SESSION under HOME's `.codex/sessions`, opening with its `session_meta` (unless
    RECORDS bring their own) and a `turn_context`."""
    folder = home / ".codex" / "sessions" / "2026" / "08" / "03"
    if records[0]["type"] != "session_meta":
        records = [
            _line("session_meta", {"id": session, "cwd": "/w"}, 0),
            _line("turn_context", {"model": "gpt-5.5", "cwd": "/w"}, 1),
            *records,
        ]
    return write_jsonl(folder / f"rollout-2026-08-03T10-00-00-{session}.jsonl", records)


def _token_count(total: int, second: int) -> dict[str, Any]:
    usage = {"input_tokens": total, "cached_input_tokens": 0, "output_tokens": 5, "total_tokens": total + 5}
    info = {"total_token_usage": usage, "last_token_usage": usage}
    return _line("event_msg", {"type": "token_count", "info": info}, second)


def _said(role: str, kind: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _task_message(shape: str) -> list[dict[str, Any]]:
    """The parent's task for the sub-agent, as the three generations of Codex multi-agent v2 record it."""
    if shape == "agent_message":
        return [
            _line("inter_agent_communication_metadata", {"trigger_turn": True}, 2),
            _line(
                "response_item",
                {
                    "type": "agent_message",
                    "author": "/root",
                    "recipient": "/root/worker",
                    "content": [{"type": "input_text", "text": TASK}],
                },
                2,
            ),
        ]
    communication = {
        "author": "/root",
        "recipient": "/root/worker",
        "other_recipients": [],
        "content": TASK,
        "trigger_turn": True,
    }
    if shape == "inter_agent_communication":
        return [_line("inter_agent_communication", communication, 2)]
    envelope = [{"type": "output_text", "text": json.dumps(communication)}]
    return [_line("response_item", {"type": "message", "role": "assistant", "content": envelope}, 2)]


@pytest.mark.parametrize("shape", ["agent_message", "inter_agent_communication", "assistant_envelope"])
def test_a_codex_sub_agent_keeps_the_task_its_parent_sent(tmp_path: Path, shape: str) -> None:
    """Multi-agent v2 gives a sub-agent its task as a message from another agent, not a typed prompt
    (no `user_message` event): an `agent_message` item, before it an `inter_agent_communication` line,
    and first an assistant message holding the message's JSON. It starts a turn as a prompt does, and
    is not one of the typed prompts the counting rules count."""
    spawn = {"parent_thread_id": "019a0000-0000-7000-8000-0000000000a1", "agent_path": "/root/worker"}
    home = tmp_path / "home"
    rollout = _rollout(
        home,
        SUB_AGENT,
        [
            _line(
                "session_meta",
                {"id": SUB_AGENT, "cwd": "/w", "source": {"subagent": {"thread_spawn": spawn}}},
                0,
            ),
            _line("turn_context", {"model": "gpt-5.5", "cwd": "/w"}, 1),
            *_task_message(shape),
            _line("event_msg", {"type": "task_started"}, 3),
            _line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": '{"cmd": "grep -rc TODO src"}',
                    "call_id": "c1",
                },
                4,
            ),
            _token_count(100, 5),
            _line(
                "response_item", {"type": "function_call_output", "call_id": "c1", "output": "src/a.py:3"}, 6
            ),
            _line("inter_agent_communication_metadata", {"trigger_turn": False}, 7),
            _line(
                "response_item",
                {
                    "type": "agent_message",
                    "author": "/root",
                    "recipient": "/root/worker",
                    "content": [{"type": "input_text", "text": "Skip vendor/."}],
                },
                7,
            ),
            _line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Three."}],
                },
                8,
            ),
            _token_count(220, 9),
            _line("event_msg", {"type": "task_complete"}, 10),
        ],
    )
    [summary] = read(tmp_path, rollout, "--summary")
    assert (summary["user_messages"], summary["model_calls"], summary["tool_calls"]) == (0, 2, 1)
    assert summary["ending"] == {"status": "completed"}
    [session] = read(tmp_path, rollout)
    said = [(e["kind"], e["text"]) for e in session["entries"] if e["type"] == "user"]
    assert said == [
        ("agent", f"Message from /root:\n{TASK}"),
        ("context", "Message from /root:\nSkip vendor/."),
    ]
    texts = [
        p["text"]
        for e in session["entries"]
        if e["type"] == "assistant"
        for p in e["parts"]
        if p["type"] == "text"
    ]
    assert texts == ["Three."]
    events = imported(tmp_path, home)[1]
    assert [e["text"] for e in events if e["kind"] == "user-message"] == [f"Message from /root:\n{TASK}"]
    assert [e["stop"] for e in events if e["kind"] == "finished"] == ["completed"]


def test_a_codex_timer_or_outside_message_starts_its_own_task(tmp_path: Path) -> None:
    """A timer firing (or `codex message` from outside) writes an `injected_message` event and a user
    item of tags (`<timer_message>`…); the model answers it in a turn of its own. It is not a typed
    prompt (no `user_message` event)."""
    home = tmp_path / "home"
    session = "019a0000-0000-7000-8000-0000000000c3"
    rollout = _rollout(
        home,
        session,
        [
            _line("event_msg", {"type": "user_message", "message": "remind me in a minute"}, 2),
            _line("response_item", _said("assistant", "output_text", "Timer set."), 3),
            _token_count(100, 4),
            _line("event_msg", {"type": "task_complete"}, 5),
            _line(
                "event_msg", {"type": "injected_message", "content": "Stretch.", "source": "timer timer-1"}, 6
            ),
            _line(
                "response_item",
                _said(
                    "user", "input_text", "<timer_message>\n<content>\nStretch.\n</content>\n</timer_message>"
                ),
                6,
            ),
            _line("event_msg", {"type": "task_started"}, 7),
            _line("response_item", _said("assistant", "output_text", "Time to stretch."), 8),
            _token_count(230, 9),
            _line("event_msg", {"type": "task_complete"}, 10),
        ],
    )
    [summary] = read(tmp_path, rollout, "--summary")
    assert (summary["user_messages"], summary["model_calls"]) == (1, 2)
    [read_back] = read(tmp_path, rollout)
    said = [
        (e["kind"], e["text"]) for e in read_back["entries"] if e["type"] == "user" and e["kind"] != "meta"
    ]
    assert said == [("prompt", "remind me in a minute"), ("agent", "Message from timer timer-1:\nStretch.")]
    events = imported(tmp_path, home)[1]
    tasks = {e["text"]: e["task"] for e in events if e["kind"] == "user-message"}
    assert tasks == {"remind me in a minute": 1, "Message from timer timer-1:\nStretch.": 2}
    answers = {e["text"]: e["task"] for e in events if e["kind"] == "text-delta"}
    assert answers == {"Timer set.": 1, "Time to stretch.": 2}


async def test_codex_turns_taken_back_by_backtracking_are_not_continued(
    tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    """Backtracking (Esc Esc, to edit an earlier prompt) writes `thread_rolled_back` with the number
    of turns Codex took out of the model's history; the rollout keeps them. They were typed (counted,
    and in the transcript), but a continued session must not send the model what Codex took back."""
    home = tmp_path / "home"
    session = "019a0000-0000-7000-8000-0000000000d4"
    rollout = _rollout(
        home,
        session,
        [
            _line("event_msg", {"type": "user_message", "message": "write a haiku about rain"}, 2),
            _line("response_item", _said("assistant", "output_text", "Rain on the tin roof."), 3),
            _token_count(100, 4),
            _line("event_msg", {"type": "user_message", "message": "now make it rhyme"}, 5),
            _line("response_item", _said("assistant", "output_text", "Rain, again, in vain."), 6),
            _token_count(220, 7),
            _line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}, 8),
            _line("event_msg", {"type": "user_message", "message": "now make it sadder"}, 9),
            _line("response_item", _said("assistant", "output_text", "Grey rain, no one home."), 10),
            _token_count(340, 11),
        ],
    )
    [summary] = read(tmp_path, rollout, "--summary")
    assert (summary["user_messages"], summary["model_calls"]) == (3, 3)

    assert await continued_chat(home, workspace, db_path, scripted_model) == KEPT_HAIKU


def test_codex_user_message_events_of_injected_text_are_not_prompts(tmp_path: Path) -> None:
    """Codex 0.2x-0.3x also wrote a `user_message` event for the AGENTS.md instructions and the
    environment context it injected, telling them apart from typed prompts by `kind`."""
    home = tmp_path / "home"
    session = "5f1a0000-0000-4000-8000-0000000000e5"
    instructions = "<user_instructions>\n\nUse tabs.\n\n</user_instructions>"
    environment = "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"
    rollout = _rollout(
        home,
        session,
        [
            _line("session_meta", {"id": session, "cwd": "/w", "cli_version": "0.36.0"}, 0),
            _line("response_item", _said("user", "input_text", instructions), 1),
            _line(
                "event_msg", {"type": "user_message", "message": instructions, "kind": "user_instructions"}, 1
            ),
            _line("response_item", _said("user", "input_text", environment), 1),
            _line(
                "event_msg",
                {"type": "user_message", "message": environment, "kind": "environment_context"},
                1,
            ),
            _line("turn_context", {"model": "gpt-5-codex", "cwd": "/w"}, 2),
            _line("response_item", _said("user", "input_text", "fix the failing test"), 2),
            _line(
                "event_msg", {"type": "user_message", "message": "fix the failing test", "kind": "plain"}, 2
            ),
            _line("response_item", _said("assistant", "output_text", "Fixed."), 3),
            _token_count(100, 4),
        ],
    )
    [summary] = read(tmp_path, rollout, "--summary")
    assert summary["user_messages"] == 1
    row, events = imported(tmp_path, home)
    assert row["title"] == "fix the failing test"
    assert [e["text"] for e in events if e["kind"] == "user-message"] == ["fix the failing test"]


async def test_a_codex_remote_compaction_summary_leaves_out_the_context_codex_puts_back(
    tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    """A remote compaction keeps its summary encrypted (a `compaction` item) and writes `compacted`
    with an empty `message`; its replacement history holds the instructions and environment context
    Codex puts back, the prompts it kept, and that item."""
    home = tmp_path / "home"
    session = "019a0000-0000-7000-8000-0000000000f6"
    kept = [
        _said(
            "developer",
            "input_text",
            "<permissions instructions>\nsandbox: read-only\n</permissions instructions>",
        ),
        _said("user", "input_text", "# AGENTS.md instructions for /w\n\nUse tabs."),
        _said("user", "input_text", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
        _said("user", "input_text", "fix the bug in parse()"),
        {"type": "compaction", "encrypted_content": "ENCRYPTED"},
    ]
    rollout = _rollout(
        home,
        session,
        [
            _line("event_msg", {"type": "user_message", "message": "fix the bug in parse()"}, 2),
            _line("response_item", _said("assistant", "output_text", "Fixed parse()."), 3),
            _token_count(100, 4),
            _line("compacted", {"message": "", "replacement_history": kept}, 5),
            _line("event_msg", {"type": "context_compacted"}, 5),
            _line("event_msg", {"type": "user_message", "message": "now add a test"}, 6),
            _line("response_item", _said("assistant", "output_text", "Added."), 7),
            _token_count(160, 8),
        ],
    )
    [session_read] = read(tmp_path, rollout)
    [compaction] = [e for e in session_read["entries"] if e["type"] == "compaction"]
    assert compaction["summary"] == "fix the bug in parse()"

    request = await continued(home, workspace, db_path, scripted_model, "openai-chat")
    sent = [m["content"] for m in request.body["messages"] if m["role"] == "user"]
    assert sent[0] == "Summary of the earlier conversation:\nfix the bug in parse()"


# Claude Code ----------------------------------------------------------------------------------------


def _claude(uuid: str, parent: str | None, role: str, text: str, second: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": text}
    extra: dict[str, Any] = {}
    if role == "assistant":
        message = {
            "id": f"msg_{uuid}",
            "model": "claude-x",
            "role": role,
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        extra = {"requestId": f"req_{uuid}"}
    return {
        "type": role,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "c-1",
        "timestamp": f"2026-08-03T10:00:{second:02d}.000Z",
        "message": message,
        **extra,
    }


async def test_claude_turns_left_by_a_rewind_are_not_continued(
    tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    """Rewinding (Esc Esc to edit an earlier prompt, `/rewind`) keeps the abandoned turns in the file:
    the new prompt's `parentUuid` names the record before the prompt it replaces. They were typed
    (counted, and in the transcript), but the model no longer sees them."""
    home = tmp_path / "home"
    write_jsonl(
        home / ".claude" / "projects" / "-w" / "c-1.jsonl",
        [
            _claude("u1", None, "user", "write a haiku about rain", 1),
            _claude("a1", "u1", "assistant", "Rain on the tin roof.", 2),
            _claude("u2", "a1", "user", "now make it rhyme", 3),
            _claude("a2", "u2", "assistant", "Rain, again, in vain.", 4),
            _claude("u3", "a1", "user", "now make it sadder", 5),
            _claude("a3", "u3", "assistant", "Grey rain, no one home.", 6),
        ],
    )
    [summary] = read(tmp_path, home / ".claude" / "projects" / "-w" / "c-1.jsonl", "--summary")
    assert (summary["user_messages"], summary["model_calls"]) == (3, 3)
    assert await continued_chat(home, workspace, db_path, scripted_model) == KEPT_HAIKU


# pi -------------------------------------------------------------------------------------------------


async def test_pi_thinking_anthropic_redacted_goes_back_as_redacted_thinking(
    tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    """pi keeps a `redacted_thinking` block as a thinking block marked `redacted`, with a placeholder
    text and the encrypted payload as its signature; continuing on Anthropic's wire must send the
    block back as it came, not as thinking signed with that payload (which the API refuses)."""
    home = tmp_path / "home"
    usage = {
        "input": 10,
        "output": 4,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 14,
        "cost": {"total": 0.01},
    }
    reply = {
        "role": "assistant",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-x",
        "content": [
            {
                "type": "thinking",
                "thinking": "[Reasoning redacted]",
                "thinkingSignature": "ENCRYPTED",
                "redacted": True,
            },
            {"type": "text", "text": "Done."},
        ],
        "usage": usage,
        "stopReason": "stop",
        "timestamp": 1785000001000,
    }
    path = write_jsonl(
        home / ".pi" / "agent" / "sessions" / "--w--" / "2026-08-03T10-00-00-000Z_p1.jsonl",
        [
            {
                "type": "session",
                "version": 3,
                "id": "p1",
                "timestamp": "2026-08-03T10:00:00.000Z",
                "cwd": "/w",
            },
            {
                "type": "message",
                "id": "e1",
                "parentId": None,
                "timestamp": "2026-08-03T10:00:00.500Z",
                "message": {"role": "user", "content": "tidy the imports", "timestamp": 1785000000500},
            },
            {
                "type": "message",
                "id": "e2",
                "parentId": "e1",
                "timestamp": "2026-08-03T10:00:01.000Z",
                "message": reply,
            },
        ],
    )
    [session] = read(tmp_path, path)
    [turn] = [e for e in session["entries"] if e["type"] == "assistant"]
    assert [o["item"] for o in turn["opaque"]] == [{"type": "redacted_thinking", "data": "ENCRYPTED"}]

    request = await continued(home, workspace, db_path, scripted_model, "anthropic-messages")
    [earlier] = [m for m in request.body["messages"] if m["role"] == "assistant"]
    assert earlier["content"][0] == {"type": "redacted_thinking", "data": "ENCRYPTED"}
