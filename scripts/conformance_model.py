"""A scripted model that answers the prompts of the public UHP conformance suite, for a local run of it.

The suite (HarnessRouter's `protocol/conformance`, `uhp-conformance`) sends about six real agent
tasks: "Reply with exactly: ok", "… two", a long count to cancel, a file to read, a file to write.
The scripted model answers turns in order, whatever is asked; this one picks each answer from the
request's last message (Chat Completions wire), so that every check has something to verify:

    .venv/bin/python scripts/conformance_model.py 8791 &
    # a project whose .harnez/settings.json says:
    #   {"providers": {"scripted": {"wire": "openai-chat", "base_url": "http://127.0.0.1:8791/v1"}},
    #    "model": "scripted/demo"}
    HARNEZ_SERVE_TOKEN=… harnez serve --port 8792 --approve allow &
    uhp-conformance --base-url http://127.0.0.1:8792 --api-key "$HARNEZ_SERVE_TOKEN" --class full

(`--approve allow`: the write task's edit would otherwise be refused by policy, and the artifact
checks would have no file.) docs/uhp.md gives the last result.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from harnez.testing.script import parse_turn
from harnez.testing.scripted_model import RecordedRequest, ScriptedModel


def last_text(messages: list[dict[str, Any]]) -> str | None:
    """The text of the request's last message; None when it is a tool result (the task goes on)."""
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return None
    content = last.get("content")
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def answer_to(text: str | None) -> dict[str, Any]:
    """The turn answering a prompt of the suite (a short text for any other)."""
    if text is None:
        return {"reply": [{"text": "Done."}]}
    if "Create a file named uhp-conformance.txt" in text:
        arguments = {"path": "uhp-conformance.txt", "content": "artifact-ok"}
        return {"reply": [{"tool_call": {"id": "call_write", "name": "write", "arguments": arguments}}]}
    if "Count slowly" in text:  # long enough to be cancelled while it runs
        return {"reply": [{"text": [f"{n}\n" for n in range(1, 201)]}], "delay_per_chunk": 0.05}
    if "exactly: two" in text:
        return {"reply": [{"text": "two"}]}
    # "exactly: ok", and the rest: paced, so that the suite can tell a progressive stream (S-09)
    return {"reply": [{"text": ["o", "k", "", "", ""]}], "delay_per_chunk": 0.15}


class ConformanceModel(ScriptedModel):
    """The scripted model, its next turn chosen by what the request asks (`answer_to`)."""

    async def _respond(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        body = request.body if isinstance(request.body, dict) else {}
        turn = parse_turn(answer_to(last_text(body.get("messages") or [])))
        with self._lock:
            self.script.turns.insert(0, turn)
        return await super()._respond(request, writer)


async def main(port: int) -> None:
    model = ConformanceModel(port=port)
    serving = asyncio.create_task(model.serve())
    await asyncio.to_thread(model._ready.wait)
    print(f"conformance model listening on {model.url}/v1", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
