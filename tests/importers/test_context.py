"""What a continued imported session sends: pi's active branch, compactions, freeform tool input."""

from __future__ import annotations

import json
from pathlib import Path

from harnez.agent.context import items_from_records, repair
from harnez.importers import Readers
from harnez.importers.to_context import SUMMARY_PREFIX, context_records
from harnez.wires import AssistantMessage, ToolResult, UserMessage
from tests.importers.conftest import FIXTURES


def read_one(path: Path):
    with Readers() as readers:
        [ref] = readers.refs_for(path)
        [session] = readers[ref.harness].read(ref)
    return session


def conversation(session) -> list:
    """The items a new prompt would continue, as the agent loads them."""
    records = [(role, wire, item) for role, _task, item, wire in context_records(session)]
    return repair(items_from_records(records))[0]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_pi_session_continues_from_its_last_branch_only(tmp_path: Path) -> None:
    def message(entry_id: str, parent: str | None, role: str, text: str) -> dict:
        body = {"role": role, "content": [{"type": "text", "text": text}]}
        if role == "assistant":
            body |= {"provider": "p", "model": "m", "stopReason": "stop"}
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": body,
        }

    path = write_jsonl(
        tmp_path / "branched.jsonl",
        [
            {
                "type": "session",
                "version": 3,
                "id": "s-1",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": "/w",
            },
            message("u1", None, "user", "first question"),
            message("a1", "u1", "assistant", "first answer"),
            message("u2", "a1", "user", "abandoned question"),
            message("a2", "u2", "assistant", "abandoned answer"),
            message("u3", "a1", "user", "second question"),
            message("a3", "u3", "assistant", "second answer"),
        ],
    )
    session = read_one(path)
    assert session.summary().tally.user_messages == 3  # the summary counts the whole file
    said = [item.text for item in conversation(session)]
    assert said == ["first question", "first answer", "second question", "second answer"]


def test_a_claude_compaction_makes_the_continued_conversation_start_from_its_summary(fixtures: Path) -> None:
    session = read_one(next(FIXTURES.glob("claude-code/spotter-2.1.39/home/.claude/projects/*/*.jsonl")))
    items = conversation(session)
    assert isinstance(items[0], UserMessage) and items[0].text.startswith(
        SUMMARY_PREFIX + "This session is being"
    )
    assert isinstance(items[-1], AssistantMessage)
    full = [item for role, _task, item, _wire in context_records(session) if role != "compaction"]
    assert len(full) > len(items)  # the whole history stays in the records before the compaction


def test_a_pi_compaction_keeps_the_entries_from_its_first_kept_one(fixtures: Path) -> None:
    session = read_one(FIXTURES / "pi" / "agent-sessions-stub-provider" / "small.jsonl")
    items = conversation(session)
    # firstKeptEntryId names the model change before every message: all of them are kept after the summary
    assert items[0].text == SUMMARY_PREFIX + "hello.py prints a fixture greeting."
    assert [type(i).__name__ for i in items[1:]] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
    ]


def test_every_tool_call_of_a_continued_codex_session_has_its_result_and_object_arguments(
    fixtures: Path,
) -> None:
    session = read_one(FIXTURES / "codex" / "agtrace-0.66.0" / "codex_session.jsonl")
    items = conversation(session)
    calls = [call for item in items if isinstance(item, AssistantMessage) for call in item.tool_calls]
    results = {item.call_id for item in items if isinstance(item, ToolResult)}
    assert {call.id for call in calls} == results and len(calls) == 5
    patch = next(call for call in calls if call.name == "apply_patch")
    assert patch.arguments == {
        "input": "*** Begin Patch\n*** Add File: myapp/hoge.py\n+print(1 + 1)\n*** End Patch"
    }
    reasoning = [o for item in items if isinstance(item, AssistantMessage) for o in item.opaque]
    assert reasoning == []  # 0.66 reasoning items have no id: nothing the Responses API would take back
