"""Claude Code prompts the reader dropped or read twice: a PDF sent alone, queued prompts saved again."""

from __future__ import annotations

import json
from pathlib import Path

from harnez.importers import Readers
from harnez.importers.normalized import Session, UserMessage
from harnez.server import Server

SESSION = "5d1c0a52-7c1e-4f3e-9a0b-2f6f1c3e8d11"
PDF = {
    "type": "document",
    "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"},
}
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


class Lines:
    """Claude Code records of one session, each with its own uuid and a later time."""

    def __init__(self) -> None:
        self.records: list[dict] = []

    def add(self, kind: str, uuid: str | None = None, **fields) -> dict:
        record = {
            "type": kind,
            "uuid": uuid or f"u-{len(self.records)}",
            "sessionId": SESSION,
            "cwd": "/home/user/proj",
            "version": "2.1.100",
            "timestamp": f"2026-05-01T10:00:{len(self.records):02d}.000Z",
            **fields,
        }
        self.records.append(record)
        return record

    def user(self, content, uuid: str | None = None) -> dict:
        return self.add("user", uuid, message={"role": "user", "content": content})

    def assistant(self, message_id: str, content: list, usage: dict | None = None) -> dict:
        message = {"id": message_id, "model": "claude-sonnet-4-5", "role": "assistant", "content": content}
        return self.add(
            "assistant",
            requestId=f"req-{message_id}",
            message={**message, "usage": usage or {"input_tokens": 3}},
        )

    def queued(self, prompt, uuid: str, source: str | None = None) -> dict:
        attachment = {"type": "queued_command", "prompt": prompt, "commandMode": "prompt"}
        return self.add(
            "attachment", uuid, attachment={**attachment, **({"source_uuid": source} if source else {})}
        )

    def write(self, folder: Path) -> Path:
        path = folder / ".claude/projects/-home-user-proj" / f"{SESSION}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path


def read(path: Path) -> Session:
    with Readers() as readers:
        [session] = readers["claude-code"].read(readers["claude-code"].refs_for(path)[0])
    return session


def users(session: Session) -> list[tuple[str, str, int, int]]:
    return [(e.kind, e.text, e.images, e.documents) for e in session.entries if isinstance(e, UserMessage)]


async def test_a_pdf_sent_alone_is_a_prompt_with_its_document_noted_and_not_counted(
    tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    lines = Lines()
    lines.user("summarise the attached report")
    lines.assistant("m1", [{"type": "text", "text": "Send it."}])
    lines.user([PDF])
    lines.assistant("m2", [{"type": "text", "text": "The report says sales grew."}])
    lines.user([{"type": "text", "text": "and this one?"}, PDF, PDF])
    lines.assistant("m3", [{"type": "text", "text": "Both say the same."}])
    path = lines.write(tmp_path / "home")

    session = read(path)
    assert users(session) == [
        ("prompt", "summarise the attached report", 0, 0),
        ("attachment", "", 0, 1),
        ("prompt", "and this one?", 0, 2),
    ]
    summary = session.summary().to_json()
    # the counting rules count `user` records with a text or image block: a PDF alone is not one
    assert (summary["user_messages"], summary["model_calls"], summary["ending"]["status"]) == (
        2,
        3,
        "completed",
    )

    server = await Server.open(db_path)
    try:
        [session_id] = (await server.import_sessions(tmp_path / "home", workspace=workspace)).session_ids
        prompts = [
            e.body.to_payload()["text"]
            for e in await server.events_after(session_id)
            if e.kind == "user-message"
        ]
        assert prompts == [
            "summarise the attached report",
            "[1 document(s) not imported]",
            "and this one?\n[2 document(s) not imported]",
        ]
    finally:
        await server.close()


def test_a_pdf_beside_a_tool_result_or_in_a_meta_record_is_no_prompt(tmp_path: Path) -> None:
    lines = Lines()
    lines.user("read the pdf")
    lines.assistant("m1", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.pdf"}}])
    lines.user([{"type": "tool_result", "tool_use_id": "t1", "content": "PDF read"}, PDF])
    lines.add("user", isMeta=True, message={"role": "user", "content": [PDF]})
    lines.assistant("m2", [{"type": "text", "text": "Read it."}])
    session = read(lines.write(tmp_path))
    assert users(session) == [("prompt", "read the pdf", 0, 0), ("meta", "", 0, 1)]
    assert session.summary().to_json()["user_messages"] == 1


def test_a_queued_prompt_saved_again_is_read_once(tmp_path: Path) -> None:
    lines = Lines()
    lines.user("fix the tests", uuid="p1")
    lines.assistant("m1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}])
    lines.user([{"type": "tool_result", "tool_use_id": "t1", "content": "2 failed"}])
    lines.queued("also run ruff", uuid="q1", source="typed-1")
    lines.queued("also run ruff", uuid="q1", source="typed-1")  # the queue saved again: the same record
    lines.queued("also run ruff", uuid="q2", source="typed-1")  # the same typed prompt, recorded twice
    lines.queued([{"type": "text", "text": "[Image #1] and look at this"}, IMAGE], uuid="q3")
    lines.queued("fix the tests", uuid="q4", source="p1")  # names the prompt already read
    lines.assistant("m2", [{"type": "text", "text": "Fixed, and ruff is clean."}])
    session = read(lines.write(tmp_path))
    assert users(session) == [
        ("prompt", "fix the tests", 0, 0),
        ("context", "also run ruff", 0, 0),
        ("context", "[Image #1] and look at this", 1, 0),
    ]
    assert session.summary().to_json()["user_messages"] == 1


def test_a_queued_prompt_that_arrives_as_the_next_prompt_is_that_prompt(tmp_path: Path) -> None:
    lines = Lines()
    lines.user("fix the tests")
    lines.assistant("m1", [{"type": "text", "text": "Working on it."}])
    lines.queued("then update the changelog", uuid="q1")
    lines.user("then update the changelog")  # the turn ended before the model read the queue
    lines.assistant("m2", [{"type": "text", "text": "Changelog updated."}])
    lines.queued("and bump the version", uuid="q2", source="p9")
    lines.user("and bump the version", uuid="p9")
    lines.assistant("m3", [{"type": "text", "text": "Bumped."}])
    lines.queued("and tag it", uuid="q3")
    lines.assistant("m4", [{"type": "text", "text": "Tagging."}])  # the model read it first
    lines.user("and tag it")  # said again after: a prompt of its own
    session = read(lines.write(tmp_path))
    assert users(session) == [
        ("prompt", "fix the tests", 0, 0),
        ("prompt", "then update the changelog", 0, 0),
        ("prompt", "and bump the version", 0, 0),
        ("context", "and tag it", 0, 0),
        ("prompt", "and tag it", 0, 0),
    ]
    assert session.summary().to_json()["user_messages"] == 4
