"""Importing into a real database: search, open, continue on the scripted model; idempotence; bad files."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from harnez.transcript import render_plain
from tests.agent.helpers import answer, make_settings

CLAUDE_HOME = "claude-code/agtrace-2.0.28/home"
SESSION = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
LAZY_HOMES = (
    "claude-code/lazyagents-2.1.284/home",
    "codex/lazyagents-0.158.0/home",
    "opencode/lazyagents-1.18.33/home",
    "pi/lazyagents-0.87.1/home",
)


def copy_home(fixtures: Path, relative: str, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(fixtures / relative, home, dirs_exist_ok=True)
    return home


def digest(folder: Path) -> dict[str, tuple[str, int]]:
    """Content hash and modification time of every file under a folder."""
    return {
        str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


async def test_an_imported_session_is_found_opened_and_continued_on_another_wire(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    home = copy_home(fixtures, CLAUDE_HOME, tmp_path)
    before = digest(home)
    settings = make_settings(scripted_model, "openai-chat")
    server = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
    try:
        report = await server.import_sessions(home, workspace=workspace)
        assert (report.imported, report.skipped) == (2, [])
        assert digest(home) == before  # the source is only read

        found = await server.list_sessions("hoge", workspace=None)
        [record] = [r for r in found.sessions if "sub-agent" not in (r.title or "")]
        assert record.origin == "claude-code"
        assert "hoge" in found.snippets[record.id]
        origin = await server.session_origin(record.id)
        assert (origin["harness"], origin["original_id"], origin["agent_id"]) == (
            "claude-code",
            SESSION,
            None,
        )

        shown = render_plain(await server.events_after(record.id))
        assert "> add myapp directory and create myapp/hoge.py" in shown
        assert "[tool] Write" in shown and "File created successfully" in shown
        assert "Perfect! The script executed successfully" in shown

        scripted_model.add(answer("It printed 2."))
        await server.submit(record.id, "what did the script print?")
        outcome = await server.wait(record.id)
        assert outcome.stop == "completed", outcome
        messages = scripted_model.requests[-1].body["messages"]
        said = json.dumps(messages)
        assert "add myapp directory and create myapp/hoge.py" in said
        assert "File created successfully" in said and "what did the script print?" in said
        calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        assert {c["function"]["name"] for c in calls} == {"Bash", "Write"}
        results = [m for m in messages if m["role"] == "tool"]
        assert {r["tool_call_id"] for r in results} == {c["id"] for c in calls}
        codes = [e.body.code for e in await server.events_after(record.id) if e.kind == "warning"]
        assert codes.count("opaque-items-dropped") == 1  # Claude's signed thinking cannot go to openai-chat
    finally:
        await server.close()


async def test_continuing_on_the_harness_own_wire_replays_its_signed_thinking(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    home = copy_home(fixtures, CLAUDE_HOME, tmp_path)
    settings = make_settings(scripted_model, "anthropic-messages")
    server = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
    try:
        await server.import_sessions(home, workspace=workspace)
        [record] = [
            r
            for r in (await server.list_sessions(None, None)).sessions
            if r.title and "sub-agent" not in r.title
        ]
        scripted_model.add(answer("It printed 2."))
        await server.submit(record.id, "what did the script print?")
        assert (await server.wait(record.id)).stop == "completed"
        blocks = [
            b
            for m in scripted_model.requests[-1].body["messages"]
            if m["role"] == "assistant"
            for b in m["content"]
        ]
        thinking = [b for b in blocks if b["type"] == "thinking"]
        assert len(thinking) == 6 and all(b["signature"] for b in thinking)  # the six thinking blocks
        codes = [e.body.code for e in await server.events_after(record.id) if e.kind == "warning"]
        assert "opaque-items-dropped" not in codes
    finally:
        await server.close()


async def test_importing_again_updates_what_changed_and_never_duplicates(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    home = copy_home(fixtures, CLAUDE_HOME, tmp_path)
    server = await Server.open(db_path)
    try:
        first = await server.import_sessions(home, workspace=workspace)
        listed = (await server.list_sessions(None, None)).sessions
        again = await server.import_sessions(home, workspace=workspace)
        assert (again.imported, again.updated, again.unchanged) == (0, 0, 2)
        assert [r.id for r in (await server.list_sessions(None, None)).sessions] == [r.id for r in listed]

        source = next(home.rglob(f"{SESSION}.jsonl"))
        record = json.loads(source.read_text(encoding="utf-8").splitlines()[1])
        record.update(
            uuid="later",
            timestamp="2025-12-09T20:10:00.000Z",
            message={"role": "user", "content": "one more question about hoge"},
        )
        with open(source, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        grown = await server.import_sessions(home, workspace=workspace)
        assert (grown.imported, grown.updated, grown.unchanged) == (0, 1, 1)
        after = (await server.list_sessions(None, None)).sessions
        assert sorted(r.id for r in after) == sorted(r.id for r in listed)
        session_id = first.session_ids[0] if len(first.session_ids) else None
        assert session_id is not None
        main = next(r for r in after if "sub-agent" not in (r.title or ""))
        prompts = [e.body.text for e in await server.events_after(main.id) if e.kind == "user-message"]
        assert prompts[-1] == "one more question about hoge" and len(prompts) == 4
        assert main.status == "interrupted"  # the grown file ends on an unanswered prompt
    finally:
        await server.close()


async def test_a_session_continued_in_harnez_is_kept_when_its_source_grows(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    home = copy_home(fixtures, "pi/lazyagents-0.87.1/home", tmp_path)
    settings = make_settings(scripted_model, "openai-chat")
    server = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
    try:
        [session_id] = (await server.import_sessions(home, workspace=workspace)).session_ids
        scripted_model.add(answer("Continued here."))
        await server.submit(session_id, "continue in harnez")
        await server.wait(session_id)
        before = await server.events_after(session_id)
        source = next(home.rglob("*.jsonl"))
        with open(source, "a", encoding="utf-8") as handle:
            handle.write(
                json.dumps(
                    {
                        "type": "message",
                        "id": "ffff0001",
                        "parentId": "c63a03a5",
                        "timestamp": "2026-09-30T12:00:00.000Z",
                        "message": {"role": "user", "content": "said in pi later"},
                    }
                )
                + "\n"
            )
        report = await server.import_sessions(home, workspace=workspace)
        assert (report.kept, report.updated) == (1, 0)
        assert [e.seq for e in await server.events_after(session_id)] == [e.seq for e in before]
    finally:
        await server.close()


async def test_the_four_harnesses_import_with_their_origin_usage_and_sub_agents(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    home = tmp_path / "home"
    for relative in LAZY_HOMES:
        shutil.copytree(fixtures / relative, home, dirs_exist_ok=True)
    shutil.copytree(fixtures / "claude-code/spotter-2.1.39/home", home, dirs_exist_ok=True)
    server = await Server.open(db_path)
    try:
        report = await server.import_sessions(home, workspace=workspace)
        assert (report.imported, report.skipped) == (7, [])
        sessions = (await server.list_sessions(None, None)).sessions
        assert sorted({r.origin for r in sessions}) == ["claude-code", "codex", "opencode", "pi"]
        totals = {}
        for record in sessions:
            usage = [e.body.to_payload() for e in await server.events_after(record.id) if e.kind == "usage"]
            totals[(record.origin, record.title)] = (
                sum(u["input"] for u in usage),
                sum(u["output"] for u in usage),
                sum(u["cache_read"] for u in usage),
            )
        assert totals[("codex", "run echo fixture please")] == (170, 14, 100)
        assert totals[("pi", "Fixture session")] == (340, 28, 200)
        assert totals[("opencode", "The command printed fixture.")] == (170, 14, 100)
        assert totals[("claude-code", "run echo fixture please")] == (170, 14, 100)
        sub = next(r for r in sessions if (r.title or "").startswith("[sub-agent a7be2f0]"))
        origin = await server.session_origin(sub.id)
        assert (origin["agent_id"], origin["original_id"]) == (
            "a7be2f0",
            "8463c716-a2ea-4c14-9efa-87158ebd9f20",
        )
        assert all(r.status in ("completed", "interrupted", "failed", "cancelled") for r in sessions)
    finally:
        await server.close()


async def test_one_bad_source_is_reported_and_skipped(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    home = copy_home(fixtures, "codex/lazyagents-0.158.0/home", tmp_path)
    day = next(home.rglob("rollout-*.jsonl")).parent
    (day / "rollout-broken.jsonl").write_text('{"type": "session_meta", "payload": {}}\n', encoding="utf-8")
    server = await Server.open(db_path)
    try:
        report = await server.import_sessions(home, workspace=workspace)
        assert report.imported == 1
        [(source, why)] = report.skipped
        assert source.endswith("rollout-broken.jsonl") and "session id" in why
    finally:
        await server.close()


@pytest.mark.parametrize("since, found", [("2026-09-01", 1), ("2099-01-01", 0)])
async def test_since_leaves_out_older_sources(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path, since: str, found: int
) -> None:
    from harnez.reading import parse_since

    home = copy_home(fixtures, "codex/lazyagents-0.158.0/home", tmp_path)
    server = await Server.open(db_path)
    try:
        report = await server.import_sessions(home, workspace=workspace, since=parse_since(since))
        assert report.sources == found
    finally:
        await server.close()
