"""A whole `harnez run --json` turn (a tool call, its result, a final answer) against a server that
bends the formats in several legal ways at once, on the chat and the Anthropic wire."""

from __future__ import annotations

import json

from tests.e2e.helpers import HeadlessWorkspace, finished, json_lines
from tests.wires.sse_bodies import (
    block,
    call,
    chunk,
    events,
    json_delta,
    message_end,
    message_start,
    raw,
    tool_use,
)

ANSWER = "The file says 42 — ✓ done."
ARGUMENTS = {"path": "notes.txt"}


def _point(headless: HeadlessWorkspace, provider: str, base_url: str) -> None:
    settings_file = headless.path / ".harnez" / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["providers"][provider]["base_url"] = base_url
    settings_file.write_text(json.dumps(settings))


def _check(headless: HeadlessWorkspace, model: str) -> list[dict]:
    (headless.path / "notes.txt").write_text("the answer is 42\n")
    done = headless.harnez("run", "--json", "--model", model, "--input", "what does notes.txt say?")
    assert done.returncode == 0, done.stderr
    out = json_lines(done.stdout)
    (requested,) = [e for e in out if e["kind"] == "tool-requested"]
    assert (requested["name"], requested["arguments"]) == ("read", ARGUMENTS)
    (completed,) = [e for e in out if e["kind"] == "tool-completed"]
    assert "the answer is 42" in completed["content"] and not completed["is_error"]
    assert "".join(e["text"] for e in out if e["kind"] == "text-delta").endswith(ANSWER)
    end = finished(out)
    assert end["stop"] == "completed" and end["turns"] == 2
    return out


def test_a_chat_server_with_crlf_no_done_usage_chunk_and_split_bytes(headless: HeadlessWorkspace) -> None:
    # The base URL lacks /v1, which this server wants (its first answer is a 404 there).
    _point(headless, "chat", headless.model.url)
    first = ": keep-alive\r\n\r\n" + events(
        chunk({"role": "assistant", "content": None}),
        chunk({"role": "assistant", "tool_calls": [call(None, "c1", "read", "")]}),
        chunk({"tool_calls": [call(None, args='{"path": ')]}),
        chunk({"tool_calls": [call(None, args='"notes.txt"}')]}, "tool_calls"),
        {"id": "c", "choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 9}},
        eol="\r\n",
        space="",
    )  # no [DONE]
    second = events(
        chunk({"reasoning_content": "Read it."}),
        chunk({"role": "assistant", "content": ANSWER[:12]}),
        chunk({"role": "assistant", "content": ANSWER[12:]}, "stop"),
        {"id": "c", "choices": None, "usage": {"prompt_tokens": 60, "completion_tokens": 8}},
        "[DONE]",
    )
    headless.model.add(
        {"status": 404, "body": {"detail": "Not Found"}},
        raw(first, raw_bytes=7),
        raw(second, gzip=True, framing="close"),
    )
    out = _check(headless, "chat/scripted-model")
    paths = [r.path for r in headless.model.requests]
    assert paths == ["/chat/completions", "/v1/chat/completions", "/v1/chat/completions"]
    tool_message = headless.model.requests[-1].body["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "c1"
    assert "the answer is 42" in tool_message["content"]
    assert any(e["kind"] == "reasoning-delta" and e["text"] == "Read it." for e in out)
    assert not [e for e in out if e["kind"] == "warning" and e["code"] != "unpriced-model"]


def test_an_anthropic_server_with_v1_base_cr_lines_and_no_message_stop(headless: HeadlessWorkspace) -> None:
    _point(headless, "claude", headless.model.url + "/v1/")
    first = events(
        message_start(),
        {"type": "ping"},
        *block(
            0,
            {"type": "thinking", "thinking": "Look "},
            {"type": "thinking_delta", "thinking": "first."},
            {"type": "signature_delta", "signature": "c2lnbmVk"},
        ),
        *block(1, {"type": "text", "text": "Reading."}),
        *block(2, tool_use(), json_delta(""), json_delta('{"path":'), json_delta(' "notes.txt"}')),
        message_end("tool_use")[0],  # ends without message_stop
        named=True,
        eol="\r",
    )
    second = events(
        message_start(),
        *block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": ANSWER}),
        {"type": "message_metadata", "note": "a future event"},
        *message_end(),
    )  # unnamed events: the type is in the data
    headless.model.add(raw(first, raw_bytes=5), raw(second, gzip=True, raw_bytes=64))
    out = _check(headless, "claude/scripted-model")
    assert [r.path for r in headless.model.requests] == ["/v1/messages"] * 2
    sent = headless.model.requests[-1].body["messages"]
    assistant, result = sent[-2], sent[-1]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "Look first.", "signature": "c2lnbmVk"}
    assert assistant["content"][-1] == {"type": "tool_use", "id": "t1", "name": "read", "input": ARGUMENTS}
    assert result["content"][0]["type"] == "tool_result" and result["content"][0]["tool_use_id"] == "t1"
    assert any(e["kind"] == "warning" and "message_metadata" in e.get("message", "") for e in out)
