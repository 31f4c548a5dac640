"""Compaction on a small window: older tool results elided, then a summary; the store keeps it all."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez import events as ev
from harnez.agent.compaction import (
    ELIDED,
    SUMMARY_REQUEST,
    SUMMARY_SYSTEM,
    Compactor,
    elide,
    estimate_tokens,
)
from harnez.agent.context import History
from harnez.agent.turns import TaskAccounting
from harnez.settings import parse_model_ref
from harnez.store import Store
from harnez.testing.scripted_model import ScriptedModel
from harnez.wires import (
    AssistantMessage,
    Conversation,
    Opaque,
    ToolCall,
    ToolResult,
    UserMessage,
    WireRequest,
    collect,
    open_wire,
    resolve_ref,
)
from harnez.wires.http import origin_of
from tests.agent.helpers import answer, events, make_settings, run_task, tool_call, tool_outputs
from tests.wires.helpers import READ_TOOL

WINDOW = 4000


def _reads(count: int, size: int) -> list:
    items: list = [UserMessage("look at everything")]
    for n in range(count):
        items += [
            AssistantMessage("", "", (ToolCall(f"c{n}", "read", {"path": f"f{n}"}),)),
            ToolResult(f"c{n}", f"{n}" * size),
        ]
    return items


def test_elision_keeps_the_newest_results_and_shrinks_the_rest() -> None:
    items = _reads(5, 1000)
    elided = elide(items, keep=2)
    contents = [item.content for item in elided if isinstance(item, ToolResult)]
    assert contents[:3] == [ELIDED.format(chars=1000)] * 3 and contents[3:] == ["3" * 1000, "4" * 1000]
    assert estimate_tokens("", elided) < estimate_tokens("", items) - 600
    assert elide(elided, keep=2) == elided


async def test_a_task_on_a_small_window_is_summarised_and_completes(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("line of a big file\n" * 700)
    scripted_model.add(
        tool_call("read", "b1", path="big.txt"),
        answer("SUMMARY: user wants big.txt read; done."),
        answer("The file repeats one line."),
    )
    server = await open_server(make_settings(scripted_model, window=WINDOW))
    session_id, outcome = await run_task(server, workspace, "what is in big.txt?")
    assert outcome.stop == "completed"
    read, summary, final = (r.body for r in scripted_model.requests)
    assert "tools" in read and "tools" not in summary
    assert summary["messages"][0]["content"] == SUMMARY_SYSTEM
    # the part summarised goes as text: a request holding tool calls must offer tools on some servers
    assert not tool_outputs(summary) and not any(m.get("tool_calls") for m in summary["messages"])
    (asked,) = summary["messages"][1:]
    assert asked["role"] == "user" and '(calls read {"path": "big.txt"})' in asked["content"]
    assert "[read result]\n" in asked["content"] and "line of a big file" in asked["content"]
    assert "line of a big file" not in str(final) and "SUMMARY: user wants big.txt read" in str(final)
    (compacted,) = await events(server, session_id, "compacted")
    assert compacted.body.summarised and compacted.body.after_tokens < compacted.body.before_tokens
    codes = [e.body.code for e in await events(server, session_id, "warning")]
    assert "conversation-compacted" in codes
    text = "".join(e.body.text for e in await events(server, session_id, "text-delta"))
    assert "SUMMARY" not in text
    record = await server.get_session(session_id)
    stored = await server.store.context.items(record.num)
    assert any("line of a big file" in str(body) for role, _, body in stored if role == "tool")
    history = await History.load(server.store, record.num, None, "openai-chat")
    assert history.items[0].text.endswith("SUMMARY: user wants big.txt read; done.")
    assert len(await server.store.ledger.model_calls(record.num)) == 3


async def test_a_failed_summary_warns_and_keeps_the_elided_form(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    settings = make_settings(scripted_model, window=WINDOW)
    model = resolve_ref(settings, parse_model_ref(settings.model or ""))
    store = await Store.open(db_path)
    record = await store.sessions.insert("a" * 32, str(workspace), settings.model)
    history = History(store, record.num, None, "openai-chat", _reads(6, 7000))
    seen: list[ev.EventBody] = []
    scripted_model.add({"status": 400})
    wire = open_wire(model.endpoint, settings.retry)
    compactor = Compactor(
        model, wire.stream, lambda body, **_: seen.append(body), TaskAccounting(), keep_results=2
    )
    try:
        await compactor.fit(history, "system")
    finally:
        await wire.aclose()
        await store.close()
    codes = [body.code for body in seen if isinstance(body, ev.WarningEvent)]
    assert codes == ["unpriced-model", "summary-failed", "conversation-compacted"]
    (compacted,) = [body for body in seen if isinstance(body, ev.Compacted)]
    assert not compacted.summarised and compacted.after_tokens < compacted.before_tokens
    results = [item.content for item in history.items if isinstance(item, ToolResult)]
    assert results[:4] == [ELIDED.format(chars=7000)] * 4 and results[4] == "4" * 7000


async def test_a_conversation_still_over_the_window_after_compaction_is_never_sent(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    for name in ("a", "b", "c"):  # three results the elision keeps (the newest), each a third of the window
        (workspace / f"{name}.txt").write_text(f"{name} line of a big file\n" * 200)
    reads = [{"tool_call": {"name": "read", "id": f"r{n}", "arguments": {"path": f"{n}.txt"}}} for n in "abc"]
    scripted_model.add(
        {"reply": reads, "usage": {"input": 900, "output": 30}}, {"status": 400}, answer("never")
    )
    server = await open_server(make_settings(scripted_model, window=WINDOW))
    session_id, outcome = await run_task(server, workspace, "read them all")
    assert outcome.stop == "failed" and "was not sent" in outcome.error and "/model" in outcome.error
    sent = [r.body for r in scripted_model.requests]
    assert len(sent) == 2 and sent[1]["messages"][0]["content"] == SUMMARY_SYSTEM  # the reads, the summary
    (finished,) = await events(server, session_id, "finished")
    assert finished.body.error == outcome.error


class _CountingJson:
    """Stands in for the `json` module inside harnez.agent.compaction and counts what it encodes."""

    def __init__(self) -> None:
        import json

        self.encoded = 0
        self._json = json

    def dumps(self, value: object, **options: object) -> str:
        self.encoded += 1
        return self._json.dumps(value, **options)  # type: ignore[arg-type]


def _old_summary_cut(items: list, tail_tokens: int) -> int:
    """The definition: the earliest non-result item (not the first) whose tail fits `tail_tokens`."""
    for index in range(1, len(items)):
        if not isinstance(items[index], ToolResult) and estimate_tokens("", items[index:]) <= tail_tokens:
            return index
    return len(items)


def test_summary_cut_measures_each_item_once_and_cuts_where_the_definition_does(monkeypatch) -> None:
    import random

    from harnez.agent import compaction

    rng = random.Random(7)
    for _ in range(40):
        items = _reads(rng.randrange(0, 30), rng.randrange(1, 400))
        if rng.random() < 0.5:
            items.append(AssistantMessage("the end " * rng.randrange(1, 50)))
        total = estimate_tokens("", items)
        for tail in (0, 1, total // 5, total // 2, total, total + 10):
            assert compaction.summary_cut(items, tail) == _old_summary_cut(items, tail)
    items = _reads(200, 100)
    tail = estimate_tokens("", items) // 4
    counting = _CountingJson()
    monkeypatch.setattr(compaction, "json", counting)
    assert compaction.summary_cut(items, tail) > len(items) // 2
    assert counting.encoded <= len(items)  # it was one encoding per item per candidate cut: ~n²/2


async def test_a_task_encodes_each_item_once_across_its_estimates(monkeypatch) -> None:
    from harnez.agent import compaction

    items = _reads(50, 100)
    compactor = Compactor(None, None, lambda _event: None)  # type: ignore[arg-type]
    counting = _CountingJson()
    monkeypatch.setattr(compaction, "json", counting)
    first = compactor.estimate("system", items)
    for _ in range(5):  # every request of a tool loop estimates the whole conversation again
        assert compactor.estimate("system", items) == first
    items.append(UserMessage("one more"))
    assert compactor.estimate("system", items) == estimate_tokens("system", items)
    assert counting.encoded == len(items) * 2  # each item once by the compactor, once by the check


EXPIRED = {
    "type": "container",
    "id": "container_gone",
    "expires_at": "2020-01-01T00:00:00Z",
    "origin": "http://127.0.0.1:9/elsewhere",
}
"""A container another server gave, long expired: nothing to carry across a compaction."""


@pytest.mark.parametrize(
    ("how", "size"),
    [("fit", 7000), ("compact_now", 300)],
    ids=["whole-history-summarised", "tail-opens-with-an-answer"],
)
async def test_a_summary_keeps_the_container_the_model_ran_its_code_in(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, how: str, size: int
) -> None:
    """A summary that drops the message naming Anthropic's container carries the container onto the
    conversation it makes (on the acknowledgement it adds, or on the first answer of the tail it
    keeps): the next request, and the session read back, still go on in it (the model's files are
    there), not in a new one. An expired container is not carried. The summary request itself, which
    offers no tools, names none (it runs no code)."""
    settings = make_settings(scripted_model, "anthropic-messages", window=WINDOW)
    model = resolve_ref(settings, parse_model_ref(settings.model or ""))
    container = {
        "type": "container",
        "id": "container_kept",
        "expires_at": "2999-12-06T01:00:00Z",
        "origin": origin_of(scripted_model.base_url("anthropic-messages")),
    }
    ran = AssistantMessage(
        "Ran it.", opaque=(Opaque("anthropic-messages", EXPIRED), Opaque("anthropic-messages", container))
    )
    store = await Store.open(db_path)
    record = await store.sessions.insert("b" * 32, str(workspace), settings.model)
    items = [UserMessage("make the files"), ran, *_reads(6, size)]
    history = History(store, record.num, None, "anthropic-messages", items)
    scripted_model.add(answer("SUMMARY: files made, six read."), answer("They are there."))
    wire = open_wire(model.endpoint, settings.retry)
    compactor = Compactor(model, wire.stream, lambda body, **_: None, TaskAccounting(), keep_results=2)
    try:
        await getattr(compactor, how)(history, "system")
        assert ran not in history.items and "SUMMARY" in str(history.items[0])
        later = Conversation("system", (*history.items, UserMessage("are the files there?")))
        await collect(wire.stream(WireRequest(model.model, later, (READ_TOOL,), spec=model.spec)))
        reloaded = await History.load(store, record.num, None, "anthropic-messages")
    finally:
        await wire.aclose()
        await store.close()
    summary, answered = (r.body for r in scripted_model.requests)
    (asked,) = summary["messages"]  # one user message: the conversation as text, then the request
    text = asked["content"][-1]["text"] if isinstance(asked["content"], list) else asked["content"]
    assert text.endswith(SUMMARY_REQUEST) and "(calls read" in text
    assert "tool_use" not in str(summary) and "tool_result" not in str(summary)  # refused without tools
    assert "tools" not in summary and "container" not in summary
    assert answered["container"] == "container_kept"
    assert "container_kept" not in str(answered["messages"])  # no content block of its own
    carried = [o.item for item in reloaded.items if isinstance(item, AssistantMessage) for o in item.opaque]
    assert carried == [container]
    opened = reloaded.items[1]
    assert isinstance(opened, AssistantMessage)
    assert bool(opened.tool_calls) == (how == "compact_now")  # the tail's answer, or the acknowledgement
