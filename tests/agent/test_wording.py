"""What the agent tells the model and the person reads as written sentences: full stops where they belong."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez import events as ev
from harnez.agent.compaction import Compactor
from harnez.agent.context import History
from harnez.agent.turns import TaskAccounting
from harnez.settings import parse_model_ref
from harnez.store import Store
from harnez.testing.scripted_model import ScriptedModel
from harnez.text import sentence
from harnez.wires import AssistantMessage, ToolCall, ToolResult, UserMessage, open_wire, resolve_ref
from tests.agent.helpers import answer, answer_approvals, make_settings, run_task, tool_call, tool_outputs


@pytest.mark.parametrize(
    ("reason", "told"),
    [
        ("not now, I am busy", "The user denied this write call: not now, I am busy. It did not run."),
        ("why would you?", "The user denied this write call: why would you? It did not run."),
        ("Stop.", "The user denied this write call: Stop. It did not run."),
        (None, "The user denied this write call. It did not run."),
    ],
)
async def test_a_denial_reason_reads_as_its_own_sentence(
    scripted_model: ScriptedModel, open_server, workspace: Path, reason: str | None, told: str
) -> None:
    scripted_model.add(tool_call("write", "w1", path="other.txt", content="nope"), answer("Understood."))
    server = await open_server(make_settings(scripted_model))
    session = server.create_session(workspace)
    answering = answer_approvals(server, session.id, {"write": ("deny", reason)})
    await run_task(server, workspace, "write other.txt", session.id)
    await answering
    assert tool_outputs(scripted_model.requests[-1].body)["w1"] == f"[error] {told}"


def test_sentence_adds_a_full_stop_only_where_none_ends_the_text() -> None:
    assert sentence("is the base_url right?") == "is the base_url right?"
    assert sentence("done.  ") == "done."
    assert sentence("wait") == "wait." and sentence("and so…") == "and so…" and sentence("") == ""


def _reads(count: int, size: int) -> list:
    items: list = [UserMessage("look at everything")]
    for n in range(count):
        items += [
            AssistantMessage("", "", (ToolCall(f"c{n}", "read", {"path": f"f{n}"}),)),
            ToolResult(f"c{n}", f"{n}" * size),
        ]
    return items


@pytest.mark.parametrize(
    ("reads", "said"), [(6, "was over the model's window"), (2, "neared the model's window")]
)
async def test_the_compaction_warning_says_whether_the_window_was_neared_or_passed(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, reads: int, said: str
) -> None:
    settings = make_settings(scripted_model, window=4000)
    model = resolve_ref(settings, parse_model_ref(settings.model or ""))
    store = await Store.open(db_path)
    record = await store.sessions.insert("b" * 32, str(workspace), settings.model)
    history = History(store, record.num, None, "openai-chat", _reads(reads, 7000))
    seen: list[ev.EventBody] = []
    scripted_model.add({"status": 400})  # the summary fails: the elided form is kept
    wire = open_wire(model.endpoint, settings.retry)
    compactor = Compactor(
        model, wire.stream, lambda body, **_: seen.append(body), TaskAccounting(), keep_results=1
    )
    try:
        await compactor.fit(history, "system")
    finally:
        await wire.aclose()
        await store.close()
    (message,) = [
        b.message for b in seen if isinstance(b, ev.WarningEvent) and b.code == "conversation-compacted"
    ]
    before = next(b.before_tokens for b in seen if isinstance(b, ev.Compacted))
    assert (before > 4000) == (reads == 6)
    assert said in message and f"({before} of 4000 tokens)" in message
