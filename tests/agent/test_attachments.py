"""`@path` attachments: files named in a prompt reach the model; the stored prompt stays as typed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harnez.agent import work
from harnez.agent.attachments import FILE_CAP_BYTES, TOTAL_CAP_BYTES, expand_attachments, mentions
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, first_event, make_settings, run_task, user_texts


def test_a_named_file_is_appended_in_a_file_block(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hello')\n")
    expanded = expand_attachments("explain @src/app.py please", workspace)
    assert expanded == "explain @src/app.py please\n\n<file path=\"src/app.py\">\nprint('hello')\n</file>"


def test_a_path_with_spaces_is_named_in_quotes_or_with_escaped_spaces(workspace: Path) -> None:
    (workspace / "My Notes").mkdir()
    (workspace / "My Notes" / "to do.md").write_text("buy milk")
    for prompt in ('read @"My Notes/to do.md" now', "read @My\\ Notes/to\\ do.md now"):
        assert mentions(prompt) == ["My Notes/to do.md"]
        expanded = expand_attachments(prompt, workspace)
        assert expanded.endswith('<file path="My Notes/to do.md">\nbuy milk\n</file>'), expanded
    assert mentions('@"unclosed quote') == ['"unclosed']  # no path: a missing bare word is left alone
    assert expand_attachments('@"unclosed quote', workspace) == '@"unclosed quote'


def test_a_prompt_without_mentions_is_unchanged(workspace: Path) -> None:
    (workspace / "a.py").write_text("x")
    for prompt in ("fix the tests", "mail me at me@example.com", "a@b.py is not a mention"):
        assert expand_attachments(prompt, workspace) == prompt


def test_trailing_punctuation_ends_the_path_and_each_file_is_attached_once(workspace: Path) -> None:
    (workspace / "notes.md").write_text("remember")
    expanded = expand_attachments("read @notes.md, then (@notes.md).", workspace)
    assert expanded.count('<file path="notes.md">\nremember\n</file>') == 1
    assert mentions("read @notes.md, then (@notes.md).") == ["notes.md,", "notes.md)."]


def test_missing_binary_directory_and_outside_files_are_skipped_with_a_note(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (workspace / "docs").mkdir()
    secret = tmp_path / "outside.txt"
    secret.write_text("do not send")
    (workspace / "link.txt").symlink_to(secret)
    prompt = "look at @gone.py @logo.png @docs @../outside.txt @link.txt"
    expanded = expand_attachments(prompt, workspace)
    assert '<file path="gone.py" skipped="no such file in the workspace"/>' in expanded
    assert '<file path="logo.png" skipped="a binary file (16 bytes): not attached"/>' in expanded
    assert '<file path="docs" skipped="a directory: not attached (name a file)"/>' in expanded
    assert '<file path="../outside.txt" skipped="outside the workspace: not attached"/>' in expanded
    assert '<file path="link.txt" skipped="outside the workspace: not attached"/>' in expanded
    assert "do not send" not in expanded


def test_a_bare_word_that_names_no_file_is_no_attachment(workspace: Path) -> None:
    prompt = "why does @dataclass fail? ask @alice"
    assert expand_attachments(prompt, workspace) == prompt


def test_a_long_file_is_cut_and_the_total_is_capped(workspace: Path) -> None:
    line = "x" * 99 + "\n"
    big = line * ((FILE_CAP_BYTES // len(line)) + 50)
    count = TOTAL_CAP_BYTES // FILE_CAP_BYTES + 1
    for index in range(count):
        (workspace / f"big{index}.txt").write_text(big)
    prompt = " ".join(f"@big{index}.txt" for index in range(count))
    expanded = expand_attachments(prompt, workspace)
    assert expanded.count(f'truncated="first {FILE_CAP_BYTES} of {len(big)} bytes"') == count - 1
    assert (
        f'<file path="big{count - 1}.txt" skipped="over the 256 KiB attachment limit of one prompt"/>'
        in expanded
    )
    assert len(expanded) < TOTAL_CAP_BYTES + 4096


async def test_the_model_receives_the_file_and_the_stored_prompt_stays_as_typed(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "main.py").write_text("def greet():\n    return 'attached-marker-42'\n")
    scripted_model.add(answer("It returns a marker."))
    server: Server = await open_server(make_settings(scripted_model))
    session_id, outcome = await run_task(server, workspace, "what does @main.py return?")
    assert outcome.stop == "completed"
    (request,) = scripted_model.requests
    (sent,) = user_texts(request.body)
    assert sent.startswith('what does @main.py return?\n\n<file path="main.py">\n')
    assert "return 'attached-marker-42'" in sent
    (typed,) = await events(server, session_id, "user-message")
    assert typed.body.text == "what does @main.py return?"


async def test_a_steering_message_gets_its_files_attached_too(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("steer-attached-marker-7\n")
    scripted_model.add(
        {
            "reply": [
                {"text": "Looking around first."},
                {"tool_call": {"name": "list", "id": "l1", "arguments": {"path": "."}}},
            ],
            "hold": "steer",
            "hold_after_chunks": 1,
            "usage": {"input": 10, "output": 5},
        },
        answer("Read your notes."),
    )
    server: Server = await open_server(make_settings(scripted_model))
    session_id = server.create_session(workspace).id
    await server.submit(session_id, "start")
    await first_event(server, session_id, lambda e: e.kind == "turn-started")
    await server.submit(session_id, "also see @notes.md", steer=True)
    scripted_model.release("steer")
    outcome = await server.wait(session_id)
    assert outcome is not None and outcome.stop == "completed"
    second = user_texts(scripted_model.requests[-1].body)
    assert any(text.startswith("also see @notes.md") and "steer-attached-marker-7" in text for text in second)
    delivered = await events(server, session_id, "steering-delivered")
    assert [e.body.text for e in delivered] == ["also see @notes.md"]


async def test_a_prompt_naming_no_file_is_not_handed_to_a_thread(workspace: Path, monkeypatch) -> None:
    handed: list[object] = []

    async def to_thread(function, *args):
        handed.append(function)
        return function(*args)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)
    (workspace / "a.py").write_text("x = 1\n")
    assert await work.attach_files("fix the tests", workspace) == "fix the tests"
    assert handed == []  # no thread's turn waited for (the second prompt's path)
    assert "x = 1" in await work.attach_files("look at @a.py", workspace)
    assert handed == [expand_attachments]
