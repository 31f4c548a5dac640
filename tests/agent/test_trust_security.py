"""A resumed session keeps its own workspace's settings, and no API key reaches the database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.settings import ProviderSettings, Settings, load_settings
from harnez.store.payloads import DICTIONARY_V1_TAG, unsqueeze
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, tool_call

COMPRESSED = (b"\x78", DICTIONARY_V1_TAG)
"""The first bytes of a stored compressed value: a zlib stream, or deflate against the dictionary."""

KEY = "sk-test-LEAKME-0123456789abcdefghijkl"


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


async def test_a_session_resumed_from_another_folder_keeps_its_own_permissions(
    scripted_model: ScriptedModel, db_path: Path, tmp_path: Path, isolated_home: Path
) -> None:
    home_ws, other_ws = tmp_path / "a", tmp_path / "b"
    home_ws.mkdir(), other_ws.mkdir()
    _write(
        isolated_home / "settings.json",
        {
            "providers": {
                "chat": {"wire": "openai-chat", "base_url": scripted_model.base_url("openai-chat")}
            },
            "model": "chat/test-model",
        },
    )
    _write(other_ws / ".harnez" / "settings.json", {"permissions": {"tools": {"shell": "allow"}}})
    scripted_model.add(
        answer("hello"),
        tool_call("shell", "c1", command="touch RAN"),
        answer("refused"),
        tool_call("shell", "c2", command="touch RAN"),
        answer("ran"),
    )

    settings_a = load_settings(home_ws)
    first = await Server.open(db_path, settings_a, AgentWork(settings_a, approve="deny"))
    try:
        session = first.create_session(home_ws).id
        await first.submit(session, "hi")
        await first.wait(session)
    finally:
        await first.close()

    settings_b = load_settings(other_ws)
    second = await Server.open(db_path, settings_b, AgentWork(settings_b, approve="deny"))
    try:
        await second.submit(session, "make a file")  # A's session, resumed from B
        await second.wait(session)
        completed = (await events(second, session, "tool-completed"))[-1].body.to_payload()
        own = second.create_session(other_ws).id  # B's own session does get B's allow
        await second.submit(own, "make a file here")
        await second.wait(own)
    finally:
        await second.close()
    assert completed["is_error"] and not (home_ws / "RAN").exists()
    assert (other_ws / "RAN").exists()


def _database_texts(db_path: Path) -> list[bytes]:
    """Every byte of the database files, plus every compressed value inside them, decompressed."""
    found = [p.read_bytes() for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)]
    conn = sqlite3.connect(db_path)
    try:
        tables = "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        for (table,) in conn.execute(tables).fetchall():  # a contentless index is read through its own tables
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                found.extend(unsqueeze(v) for v in row if isinstance(v, bytes) and v[:1] in COMPRESSED)
    finally:
        conn.close()
    return found


@pytest.fixture
def keyed_settings(scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("TEST_PROVIDER_KEY", KEY)
    provider = ProviderSettings(
        wire="openai-chat", base_url=scripted_model.base_url("openai-chat"), api_key_env="TEST_PROVIDER_KEY"
    )
    return Settings(providers={"chat": provider}, model="chat/test-model")


async def test_an_api_key_planted_in_every_provider_path_never_reaches_the_database(
    scripted_model: ScriptedModel, keyed_settings: Settings, db_path: Path, workspace: Path
) -> None:
    shell = tool_call("shell", "c1", command="echo key=$TEST_PROVIDER_KEY; echo pasted=" + KEY)
    scripted_model.add(
        {**shell, "malformed_line": f"oops {KEY}", "unknown_item": {"type": "novel", "echo": KEY}},
        answer(f"the key is {KEY}"),
        {"reply": [{"text": "partial"}], "unknown_item": {"error": {"message": f"bad key {KEY}"}}},
        {"status": 401, "body": {"error": {"message": f"Incorrect API key provided: {KEY}"}}},
    )
    server = await Server.open(db_path, keyed_settings, AgentWork(keyed_settings, approve="allow"))
    seen = []
    try:
        session = server.create_session(workspace).id
        for prompt in ("print the key", "again", "and again"):
            await server.submit(session, prompt)
            await server.wait(session)
        seen = [event.dumps() for event in await server.events_after(session)]
        finished = [e.body.to_payload() for e in await events(server, session, "finished")]
    finally:
        await server.close()
    assert [f["stop"] for f in finished] == ["completed", "failed", "failed"]
    assert "bad key [redacted]" in finished[1]["error"]
    assert not any(KEY in line for line in seen)
    assert any("key=\\n" in line or "key=\n" in line for line in seen)  # the command ran without the variable
    assert all(KEY.encode() not in blob for blob in _database_texts(db_path))


async def test_a_setting_passes_a_key_variable_to_commands_on_purpose(
    scripted_model: ScriptedModel, keyed_settings: Settings, db_path: Path, workspace: Path
) -> None:
    settings = keyed_settings.model_copy(
        update={
            "permissions": keyed_settings.permissions.model_copy(
                update={
                    "shell": keyed_settings.permissions.shell.model_copy(
                        update={"pass_env": ["TEST_PROVIDER_KEY"]}
                    )
                }
            )
        }
    )
    scripted_model.add(
        tool_call("shell", "c1", command='test -n "$TEST_PROVIDER_KEY" && echo present'), answer("ok")
    )
    server = await Server.open(db_path, settings, AgentWork(settings, approve="allow"))
    try:
        session = server.create_session(workspace).id
        await server.submit(session, "is it there")
        await server.wait(session)
        completed = (await events(server, session, "tool-completed"))[0].body.to_payload()
    finally:
        await server.close()
    assert completed["content"].startswith("present")
