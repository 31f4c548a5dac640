"""Delegations over the scripted model: a child session stored, linked, limited, rolled up, cancellable."""

from __future__ import annotations

from pathlib import Path

from harnez.settings import Rate
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.agents_support import (
    delegate,
    only_child,
    project_agents,
    published_tools,
    requests_with,
    reviewer,
    system_text,
    write_agent,
)
from tests.agent.helpers import answer, events, first_event, make_settings, run_task, tool_call, tool_outputs


async def test_a_delegation_runs_in_a_linked_child_session_and_its_answer_is_the_calls_result(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace)
    (workspace / "a.py").write_text("x = 1 / 0\n")
    scripted_model.add(
        delegate("d1", "reviewer", "Review a.py"),
        tool_call("read", "r1", path="a.py"),
        answer("a.py divides by zero on line 1."),
        answer("The reviewer found a division by zero."),
    )
    server = await open_server(make_settings(scripted_model))
    parent, outcome = await run_task(server, workspace, "review the code")
    assert outcome.stop == "completed"
    child = await only_child(server, parent)

    (started,) = await events(server, parent, "started")
    assert started.body.agents == ["reviewer"] and "delegate" in started.body.tools
    (began,) = await events(server, parent, "delegate-started")
    assert (began.body.call_id, began.body.agent, began.body.child) == ("d1", "reviewer", child)
    assert began.body.tools == ["read", "grep"] and began.body.model == "chat/test-model"
    (result,) = await events(server, parent, "delegated")
    assert result.body.text == "a.py divides by zero on line 1." and not result.body.is_error
    (ended,) = await events(server, parent, "delegate-finished")
    assert (ended.body.stop, ended.body.turns) == ("completed", 2)
    completed = [e for e in await events(server, parent, "tool-completed") if e.body.name == "delegate"]
    assert completed[0].body.content == result.body.text
    assert completed[0].body.details == {"agent": "reviewer", "child": child, "stop": "completed"}
    order = [e.kind for e in await server.events_after(parent)]
    assert order.index("delegate-started") < order.index("delegated") < order.index("delegate-finished")
    assert order.index("delegate-finished") < order.index("tool-completed")

    link = await server.delegation_of(child)
    assert link is not None and (link.parent, link.call_id, link.agent) == (parent, "d1", "reviewer")
    assert link.task == started.task and link.stop == "completed"
    assert [e.kind for e in await server.events_after(child)][:2] == ["user-message", "started"]
    (child_finished,) = await events(server, child, "finished")
    assert child_finished.body.stop == "completed"
    record = await server.get_session(child)
    assert record.title == "reviewer: Review a.py" and record.status == "completed"


async def test_the_child_runs_its_agents_tools_and_instructions_on_the_agents_model(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace, model="resp/other-model")
    scripted_model.add(
        delegate("d1", "reviewer", "Look around"),
        {"path": "/responses", "reply": [{"text": "Nothing to report."}]},
        answer("done"),
    )
    server = await open_server(make_settings(scripted_model))
    parent, _ = await run_task(server, workspace, "go")
    child = await only_child(server, parent)
    (started,) = await events(server, child, "started")
    assert started.body.model == "resp/other-model" and started.body.tools == ["read", "grep"]
    assert set(started.body.withheld) == {"write", "edit", "list", "glob", "shell"}
    assert started.body.agents == []
    body = next(r.body for r in scripted_model.requests if r.path.endswith("/responses"))
    assert [tool["name"] for tool in body["tools"]] == ["read", "grep"]
    assert (
        "# Sub-agent: reviewer" in body["instructions"]
        and "Report bugs with line numbers." in (body["instructions"])
    )
    assert (await server.get_session(child)).model == "resp/other-model"
    parent_request, _ = requests_with(
        scripted_model, "- reviewer: Reviews files for bugs. (tools: read, grep)"
    )
    assert published_tools(parent_request)[-1] == "delegate"
    assert "Sub-agent" not in system_text(parent_request)


async def test_a_child_is_hidden_from_listings_but_reachable_from_its_parent(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace)
    scripted_model.add(
        delegate("d1", "reviewer", "Find the zebra"), answer("zebra found in zoo.txt"), answer("ok")
    )
    server = await open_server(make_settings(scripted_model))
    parent, _ = await run_task(server, workspace, "go")
    child = await only_child(server, parent)
    listed = await server.list_sessions(workspace=workspace)
    assert [s.id for s in listed.sessions] == [parent]
    assert [s.id for s in (await server.list_sessions()).sessions] == [parent]
    assert (await server.list_sessions("zebra", workspace=workspace)).sessions == []
    assert (await server.newest_session(workspace)).id == parent
    assert (await server.get_session(child[:12])).id == child
    assert [link.child for link in await server.children(parent)] == [child]
    assert await server.delegation_of(parent) is None


async def test_the_parents_totals_include_what_the_child_spent(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace)
    scripted_model.add(delegate("d1", "reviewer", "x"), answer("child answer"), answer("parent answer"))
    settings = make_settings(scripted_model).model_copy(
        update={"rates": {"chat/test-model": Rate(input=1.0, output=2.0)}}
    )
    server = await open_server(settings)
    parent, _ = await run_task(server, workspace, "go")
    child = await only_child(server, parent)
    own = [c.body.usd for c in await events(server, parent, "cost")]
    child_totals = await server.session_totals(child)
    assert (child_totals.input, child_totals.output, child_totals.calls) == (120, 20, 1)
    (ended,) = await events(server, parent, "delegate-finished")
    assert (ended.body.input, ended.body.output, ended.body.calls, ended.body.unpriced) == (120, 20, 1, False)
    assert ended.body.usd == child_totals.usd == (120 * 1.0 + 20 * 2.0) / 1_000_000
    totals = await server.session_totals(parent)
    assert (totals.input, totals.output, totals.calls) == (100 + 120 + 120, 10 + 20 + 20, 3)
    assert totals.usd is not None and abs(totals.usd - (sum(own) + child_totals.usd)) < 1e-12
    before = await server.session_totals(parent, up_to=ended.seq - 1)
    assert (before.input, before.calls) == (100, 1)


async def test_a_malformed_agent_file_is_warned_about_by_name_and_the_others_are_still_offered(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace)
    broken = write_agent(project_agents(workspace), "broken", "name: broken\ntools: read")
    scripted_model.add(answer("hello"))
    server = await open_server(make_settings(scripted_model))
    session, outcome = await run_task(server, workspace, "hi")
    assert outcome.stop == "completed"
    (started,) = await events(server, session, "started")
    assert started.body.agents == ["reviewer"]
    (warned,) = [w.body for w in await events(server, session, "warning") if w.body.code == "invalid-agent"]
    assert warned.message.startswith(f"{broken}: ") and "needs `description:`" in warned.message
    (request,) = scripted_model.requests
    assert "broken" not in system_text(request) and "broken" not in str(request.body["tools"])


async def test_two_delegate_calls_of_one_turn_run_side_by_side_in_two_children(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace)
    calls = [delegate(call_id, "reviewer", f"Part {call_id}")["reply"][0] for call_id in ("d1", "d2")]
    scripted_model.add(
        {"reply": calls},
        {"reply": [{"text": "held answer"}], "hold": "first"},
        answer("quick answer"),
        answer("both done"),
    )
    server = await open_server(make_settings(scripted_model))
    parent = server.create_session(workspace).id
    await server.submit(parent, "split it")
    # one child waits on the model while the other finishes: they run at the same time
    quick = await first_event(server, parent, lambda e: e.kind == "delegated")
    assert quick.body.text == "quick answer"
    (held,) = [link.child for link in await server.children(parent) if link.child != quick.body.child]
    assert server.running(held) is not None
    scripted_model.release("first")
    await server.wait(parent)
    results = {e.body.call_id: e.body.text for e in await events(server, parent, "delegated")}
    assert sorted(results.values()) == ["held answer", "quick answer"]
    sent = tool_outputs(scripted_model.requests[-1].body)
    assert (sent["d1"], sent["d2"]) == (results["d1"], results["d2"])
