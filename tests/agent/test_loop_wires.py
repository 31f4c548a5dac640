"""A task runs end to end on each wire: read, an approved edit, a shell command, a denial, the answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.http.translate import TaskStream
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import (
    PROVIDERS,
    answer,
    answer_approvals,
    events,
    kinds,
    make_settings,
    run_task,
    tool_call,
    tool_outputs,
)
from tests.wires import sse_bodies as sse
from tests.wires.sse_bodies import call, raw


@pytest.mark.parametrize("wire", sorted(PROVIDERS.values()))
async def test_a_multi_step_task_reads_edits_runs_and_hears_a_denial(
    wire: str, scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("colour: old\n")
    scripted_model.add(
        tool_call("read", "c1", path="notes.txt"),
        tool_call("edit", "c2", path="notes.txt", old_string="old", new_string="new"),
        tool_call("shell", "c3", command="cat notes.txt"),
        tool_call("write", "c4", path="other.txt", content="nope"),
        answer("The colour is new now."),
    )
    server = await open_server(make_settings(scripted_model, wire))
    session = server.create_session(workspace)
    answering = answer_approvals(
        server,
        session.id,
        {"edit": ("allow", None), "shell": ("allow-session", None), "write": ("deny", "keep the tree clean")},
    )
    _, outcome = await run_task(server, workspace, "make the colour new", session.id)

    assert outcome.stop == "completed" and outcome.turns == 5
    assert sorted(await answering) == ["c2", "c3", "c4"]
    assert (workspace / "notes.txt").read_text() == "colour: new\n"
    assert not (workspace / "other.txt").exists()
    last = tool_outputs(scripted_model.requests[-1].body)
    assert "colour: old" in last["c1"] and "Edited notes.txt" in last["c2"]
    assert "colour: new" in last["c3"] and "[exit code 0" in last["c3"]
    assert "The user denied this write call: keep the tree clean" in last["c4"]
    seen = await kinds(server, session.id)
    assert seen[:3] == ["user-message", "started", "turn-started"] and seen[-1] == "finished"
    assert seen.count("turn-completed") == 5 and seen.count("tool-completed") == 4
    (started,) = await events(server, session.id, "started")
    assert started.body.wire == wire and "shell" in started.body.tools
    resolved = [e.body.verdict for e in await events(server, session.id, "approval-resolved")]
    assert resolved == ["allow", "allow-session", "deny"]
    (required,) = [e for e in await events(server, session.id, "approval-required") if e.body.name == "edit"]
    assert "-colour: old" in required.body.diff and "+colour: new" in required.body.diff
    text = "".join(e.body.text for e in await events(server, session.id, "text-delta"))
    assert text == "The colour is new now."
    rows = await server.store.ledger.tool_executions((await server.get_session(session.id)).num)
    assert [(r["tool"], r["outcome"]) for r in rows] == [
        ("read", "completed"),
        ("edit", "completed"),
        ("shell", "completed"),
        ("write", "denied"),
    ]
    assert rows[1]["approval"] == "allow (user)" and rows[0]["approval"] == "rule"


async def test_the_history_continues_in_the_next_task_of_the_session(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("first answer"), answer("second answer"))
    server = await open_server(make_settings(scripted_model))
    session_id, _ = await run_task(server, workspace, "first question")
    await run_task(server, workspace, "second question", session_id)
    messages = scripted_model.requests[-1].body["messages"]
    assert [(m["role"], m.get("content")) for m in messages[1:]] == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]
    assert messages[0]["role"] == "system" and "# Environment" in messages[0]["content"]


@pytest.mark.parametrize("wire", sorted(PROVIDERS.values()))
async def test_a_task_runs_on_a_server_that_answers_whole_json_instead_of_a_stream(
    wire: str, scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("colour: blue\n")
    scripted_model.add(
        {**tool_call("read", "c1", path="notes.txt"), "whole": True},
        {**answer("The colour is blue."), "whole": True},
    )
    server = await open_server(make_settings(scripted_model, wire))
    session = server.create_session(workspace)
    _, outcome = await run_task(server, workspace, "what colour?", session.id)

    assert outcome.stop == "completed" and outcome.turns == 2
    assert "colour: blue" in tool_outputs(scripted_model.requests[-1].body)["c1"]
    (text,) = [e.body.text for e in await events(server, session.id, "text-delta")]
    assert text == "The colour is blue."


async def test_a_stream_item_of_an_unexpected_shape_becomes_a_warning_event(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    odd = 'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": "x"}]}}]}\n\n'
    done = 'data: {"choices": [{"index": 0, "delta": {"content": "Fine."}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'
    scripted_model.add({"status": 200, "body": odd + done, "headers": {"content-type": "text/event-stream"}})
    server = await open_server(make_settings(scripted_model, "openai-chat"))
    session = server.create_session(workspace)
    _, outcome = await run_task(server, workspace, "hi", session.id)
    assert outcome.stop == "completed"
    codes = [e.body.code for e in await events(server, session.id, "warning")]
    assert "misshapen-stream-item" in codes


async def test_a_chat_call_whose_id_comes_later_is_shown_and_stored_under_that_id_alone(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    """A chat server gave a call's index, name and first arguments before its id: nothing is stored or
    streamed under the made-up `call_0` (a function_call item the UHP stream would never complete);
    the call's arguments are stored, and shown, under the server's id."""
    (workspace / "a.py").write_text("print(1)\n")
    late = [
        [call(0, name="read", args='{"path": ')],
        [call(0, args='"a.py"')],
        [call(0, "c1", args="}")],
    ]
    scripted_model.add(
        raw(sse.events(*(sse.chunk({"tool_calls": f}) for f in late), sse.chunk({}, "tool_calls"), "[DONE]")),
        answer("It prints 1."),
    )
    server = await open_server(make_settings(scripted_model))
    session = server.create_session(workspace)
    _, outcome = await run_task(server, workspace, "what does a.py do?", session.id)

    assert outcome.stop == "completed" and "print(1)" in tool_outputs(scripted_model.requests[-1].body)["c1"]
    deltas = await events(server, session.id, "tool-arguments-delta")
    assert {e.body.call_id for e in deltas} == {"c1"}
    assert "".join(e.body.delta for e in deltas) == '{"path": "a.py"}'
    stream = TaskStream(deltas[0].task)
    for event in await server.events_after(session.id):
        stream.feed(event)
    calls = [item for item in stream.output if item["type"] == "function_call"]
    assert [(c["call_id"], c["status"], c["arguments"]) for c in calls] == [
        ("c1", "completed", '{"path": "a.py"}')
    ]
