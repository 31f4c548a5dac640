"""Format shapes the fixtures lack: Codex rollouts from before the envelope, Claude Code 1.x inline sidechains."""

from __future__ import annotations

import json
from pathlib import Path

from harnez.importers import Readers, detect


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def summaries(path: Path) -> list[dict]:
    with Readers() as readers:
        return [s.to_json() for ref in readers.refs_for(path) for s in readers[ref.harness].summarize(ref)]


def test_a_codex_rollout_from_before_the_type_payload_envelope_reads(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "rollout-old.jsonl",
        [
            {"id": "0a1b-old", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": None},
            {"record_type": "state"},
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context/>"}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "list the files"}],
            },
            {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": '{"output": "a.txt\\n"}'},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "One file."}],
            },
        ],
    )
    assert detect(path) == "codex"
    [summary] = summaries(path)
    assert (
        summary["session_id"],
        summary["user_messages"],
        summary["tool_calls"],
        summary["tool_results"],
    ) == ("0a1b-old", 1, 1, 1)
    assert summary["model_calls"] == 0 and summary["usage"] is None  # no token counts: none recorded
    assert summary["ending"] == {"status": "completed"}


def test_claude_code_inline_sidechains_are_sub_agent_sessions_of_their_own(tmp_path: Path) -> None:
    def line(uuid: str, parent: str | None, kind: str, content, sidechain: bool = False, **extra) -> dict:
        message = {"role": kind, "content": content, **extra}
        return {
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "isSidechain": sidechain,
            "sessionId": "s-1",
            "timestamp": f"2025-09-01T10:00:0{len(uuid)}.000Z",
            "message": message,
        }

    usage = {"input_tokens": 5, "output_tokens": 2}
    path = write_jsonl(
        tmp_path / "s-1.jsonl",
        [
            line("u1", None, "user", "find the bug"),
            line(
                "a1",
                "u1",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Task", "input": {}}],
                id="m1",
                model="claude-x",
                usage=usage,
            ),
            line("su1", None, "user", "search the code", sidechain=True),
            line(
                "sa1",
                "su1",
                "assistant",
                [{"type": "text", "text": "found it"}],
                sidechain=True,
                id="m2",
                model="claude-y",
                usage=usage,
            ),
            line("u2", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "found it"}]),
            line(
                "a2",
                "u2",
                "assistant",
                [{"type": "text", "text": "Fixed."}],
                id="m3",
                model="claude-x",
                usage=usage,
            ),
        ],
    )
    main, side = summaries(path)
    assert (main["agent_id"], main["user_messages"], main["model_calls"], main["models"]) == (
        None,
        1,
        2,
        ["claude-x"],
    )
    assert (side["agent_id"], side["parent_session_id"], side["user_messages"], side["models"]) == (
        "sidechain-1",
        "s-1",
        1,
        ["claude-y"],
    )
    assert main["usage"]["input"] == 10 and side["usage"]["input"] == 5
