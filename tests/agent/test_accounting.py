"""Ledger rows, usage and cost events, budgets and failures of the loop."""

from __future__ import annotations

from pathlib import Path

from harnez.settings import Rate
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, make_settings, run_task, tool_call
from tests.wires import sse_bodies as sse


async def test_ledger_rows_hold_usage_and_no_cost_for_an_unpriced_model(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    scripted_model.add(tool_call("read", "l1", path="a.txt"), answer("done", model="served-model-7"))
    server = await open_server(make_settings(scripted_model, "anthropic-messages"))
    session_id, _ = await run_task(server, workspace, "read a")
    record = await server.get_session(session_id)
    calls = await server.store.ledger.model_calls(record.num)
    assert [(c["outcome"], c["input_tokens"], c["output_tokens"], c["cost_usd"]) for c in calls] == [
        ("completed", 100, 10, None),
        ("completed", 120, 20, None),
    ]
    assert calls[1]["model_served"] == "served-model-7" and calls[0]["model_requested"] == "anth/test-model"
    assert all(
        c["latency_ms"] is not None and c["first_token_ms"] is not None and c["attempts"] == 1 for c in calls
    )
    (tool,) = await server.store.ledger.tool_executions(record.num)
    assert tool["tool"] == "read" and '"path": "a.txt"' in tool["arguments"] and tool["duration_ms"] >= 0
    usages = await events(server, session_id, "usage")
    assert [(u.body.input, u.body.output) for u in usages] == [(100, 10), (120, 20)]
    assert [c.body.usd for c in await events(server, session_id, "cost")] == [None, None]
    unpriced = [w for w in await events(server, session_id, "warning") if w.body.code == "unpriced-model"]
    assert len(unpriced) == 1


async def test_a_priced_model_costs_money_and_a_retry_is_announced(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add({"status": 503}, answer("after retry"))
    settings = make_settings(scripted_model).model_copy(
        update={
            "rates": {"chat/test-model": Rate(input=1.0, output=2.0)},
            "retry": make_settings(scripted_model).retry.model_copy(update={"base_delay": 0.01}),
        }
    )
    server = await open_server(settings)
    session_id, outcome = await run_task(server, workspace, "hi")
    assert outcome.stop == "completed"
    (cost,) = await events(server, session_id, "cost")
    assert cost.body.usd == (120 * 1.0 + 20 * 2.0) / 1_000_000
    (retried,) = await events(server, session_id, "turn-retried")
    assert retried.body.attempt == 2 and "503" in retried.body.reason
    record = await server.get_session(session_id)
    (call,) = await server.store.ledger.model_calls(record.num)
    assert call["attempts"] == 2


async def test_budgets_end_a_task_as_incomplete(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    scripted_model.add(*[tool_call("read", f"r{n}", path="a.txt") for n in range(3)])
    server = await open_server(make_settings(scripted_model))
    _, outcome = await run_task(server, workspace, "loop forever", max_steps=2)
    assert (outcome.stop, outcome.turns) == ("incomplete", 2) and "max_steps" in outcome.error
    scripted_model.add({**answer("slow"), "hold": "never"})
    _, outcome = await run_task(server, workspace, "be slow", timeout=0.3)
    scripted_model.release("never")
    assert outcome.stop == "incomplete" and "time budget" in outcome.error


async def test_a_wire_failure_fails_the_task_with_its_message(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add({"status": 401})
    server = await open_server(make_settings(scripted_model))
    session_id, outcome = await run_task(server, workspace, "hi")
    assert outcome.stop == "failed" and "401" in outcome.error
    (finished,) = await events(server, session_id, "finished")
    assert finished.body.error == outcome.error
    _, outcome = await run_task(server, workspace, "hi", approve="maybe")
    assert outcome.stop == "failed" and "Unknown approval policy 'maybe'" in outcome.error
    session = server.create_session(workspace, model="nowhere/model")
    await server.submit(session.id, "hi")
    outcome = await server.wait(session.id)
    assert outcome.stop == "failed" and "unknown provider 'nowhere'" in outcome.error


async def test_a_call_continued_after_a_pause_bills_every_request_but_holds_only_its_last(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    """Anthropic paused the call (`pause_turn`) and the wire continued it: the usage adds up both
    requests (what was billed), while the context in use — the status line's, and compaction's
    estimate — is the last request's prompt and answer, since it sent the first one's again. The sum
    (121k) would be over the 100k window: the next request would never have been sent."""
    (workspace / "a.txt").write_text("a\n")
    scripted_model.add(
        sse.anthropic(
            sse.message_start(input_tokens=60_000),
            *sse.block(0, sse.server_tool_use(), sse.json_delta('{"query": "x"}')),
            *sse.block(1, sse.search_result()),
            *sse.message_end("pause_turn"),
        ),
        sse.anthropic(
            sse.message_start(input_tokens=61_000),
            *sse.block(0, sse.tool_use(input={"path": "a.txt"})),
            *sse.message_end("tool_use"),
        ),
        answer("done"),
    )
    server = await open_server(make_settings(scripted_model, "anthropic-messages", window=100_000))
    session_id, outcome = await run_task(server, workspace, "search, then read a")
    assert outcome.stop == "completed", outcome.error
    assert len(scripted_model.requests) == 3
    paused, _ = await events(server, session_id, "usage")
    assert (paused.body.input, paused.body.output, paused.body.context) == (121_000, 10, 61_005)
    totals = await server.session_totals(session_id, up_to=paused.seq)
    assert (totals.input, totals.output, totals.context_tokens) == (121_000, 10, 61_005)
    assert not [w for w in await events(server, session_id, "warning") if "compacted" in w.body.code]
