"""The scripted model itself: non-streamed answers, routing, concurrency, and the command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import pytest

from harnez.testing.script import Script, ScriptError


async def post(client: httpx.AsyncClient, url: str, body: dict, **headers: str) -> httpx.Response:
    return await client.post(url, json=body, headers=headers)


@pytest.mark.parametrize(
    ("path", "check"),
    [
        ("/v1/chat/completions", lambda b: b["choices"][0]["message"]["content"] == "hi there"),
        ("/v1/responses", lambda b: b["output"][0]["content"][0]["text"] == "hi there"),
        ("/v1/messages", lambda b: b["content"] == [{"type": "text", "text": "hi there"}]),
    ],
)
async def test_non_streamed_requests_get_a_whole_json_body(scripted_model, path, check) -> None:
    scripted_model.add({"reply": [{"text": "hi there"}], "model": "m-1"})
    async with httpx.AsyncClient() as client:
        response = await post(client, scripted_model.url + path, {"model": "x"})
    assert response.status_code == 200 and response.json()["model"] == "m-1" and check(response.json())


async def test_turns_bound_to_a_path_wait_for_that_path(scripted_model) -> None:
    scripted_model.add(
        {"path": "/v1/messages", "reply": [{"text": "anthropic"}]}, {"reply": [{"text": "any"}]}
    )
    async with httpx.AsyncClient() as client:
        chat = await post(client, scripted_model.url + "/v1/chat/completions", {})
        messages = await post(client, scripted_model.url + "/v1/messages", {})
    assert chat.json()["choices"][0]["message"]["content"] == "any"
    assert messages.json()["content"][0]["text"] == "anthropic"


async def test_a_header_given_as_null_is_not_sent(scripted_model) -> None:
    """A server that labels its stream with no content-type (ai-mock) is reproduced as it is."""
    scripted_model.add({"raw": "data: [DONE]\n\n", "headers": {"content-type": None, "x-mock": "1"}})
    async with httpx.AsyncClient() as client:
        response = await post(client, scripted_model.url + "/v1/chat/completions", {"stream": True})
    assert "content-type" not in response.headers and response.headers["x-mock"] == "1"
    assert response.text == "data: [DONE]\n\n"


async def test_an_exhausted_script_answers_400_and_records_every_request(scripted_model) -> None:
    async with httpx.AsyncClient() as client:
        response = await post(
            client, scripted_model.url + "/v1/chat/completions", {"a": 1}, **{"X-Probe": "1"}
        )
        missing = await client.get(scripted_model.url + "/nowhere")
    assert response.status_code == 400 and "no turn left" in response.json()["error"]["message"]
    assert missing.status_code == 404
    first = scripted_model.requests[0]
    assert (first.method, first.path, first.body, first.headers["x-probe"]) == (
        "POST",
        "/v1/chat/completions",
        {"a": 1},
        "1",
    )


async def test_held_requests_are_served_concurrently_and_released_by_name(scripted_model) -> None:
    scripted_model.add({"hold": "a", "reply": [{"text": "A"}]}, {"hold": "b", "reply": [{"text": "B"}]})
    async with httpx.AsyncClient() as client:
        first = asyncio.create_task(post(client, scripted_model.url + "/v1/messages", {}))
        while len(scripted_model.requests) < 1:
            await asyncio.sleep(0.01)
        second = asyncio.create_task(post(client, scripted_model.url + "/v1/messages", {}))
        scripted_model.release("b")
        b = await asyncio.wait_for(second, 10)
        assert not first.done()
        scripted_model.release("a")
        a = await asyncio.wait_for(first, 10)
    assert (a.json()["content"][0]["text"], b.json()["content"][0]["text"]) == ("A", "B")


async def test_connection_close_and_keep_alive_both_work(scripted_model) -> None:
    scripted_model.add(*[{"reply": [{"text": str(i)}]} for i in range(4)])
    async with httpx.AsyncClient() as client:
        texts = [
            (await post(client, scripted_model.url + "/v1/messages", {}, Connection=c)).json()["content"][0][
                "text"
            ]
            for c in ("close", "keep-alive", "keep-alive", "close")
        ]
    assert texts == ["0", "1", "2", "3"]


def test_a_malformed_script_names_the_problem() -> None:
    with pytest.raises(ScriptError, match="unknown turn key"):
        Script.from_data([{"replies": []}])
    with pytest.raises(ScriptError, match="none of text, reasoning, tool_call"):
        Script.from_data([{"reply": [{"image": "x"}]}])


def test_the_command_line_serves_a_script_file(tmp_path) -> None:
    script = tmp_path / "demo.json"
    script.write_text(json.dumps({"loop": True, "turns": [{"reply": [{"text": "hello from a file"}]}]}))
    process = subprocess.Popen(
        [sys.executable, "-m", "harnez.testing.scripted_model", "--script", str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip().rsplit(" ", 1)[-1]
        for _ in range(2):  # `loop` serves the script again and again
            body = httpx.post(url + "/v1/chat/completions", json={"model": "demo"}, timeout=10).json()
            assert body["choices"][0]["message"]["content"] == "hello from a file"
    finally:
        process.terminate()
        process.wait(10)
