"""Each task says which prices its costs use (`rates`, before the first `cost`): settings, the card, or none.

Costs are compared with math.isclose: pytest.approx looks numpy up while naming may be importing it.
"""

from __future__ import annotations

import math
from pathlib import Path

from harnez.pricing import card_version, prices_for
from harnez.settings import ProviderSettings, Rate, Settings
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, run_task, tool_call


def _settings(scripted_model: ScriptedModel, provider: str, model: str, **more: object) -> Settings:
    """One provider of the Anthropic wire at the scripted model, named `provider`."""
    endpoint = ProviderSettings(
        wire="anthropic-messages", base_url=scripted_model.base_url("anthropic-messages")
    )
    return Settings(providers={provider: endpoint}, model=f"{provider}/{model}", **more)


async def _accounting(server, session_id: str) -> list:
    wanted = {"rates", "cost", "usage", "warning"}
    return [e for e in await server.events_after(session_id) if e.kind in wanted]


async def test_the_card_prices_a_hosted_model_and_rates_comes_before_the_first_cost(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    scripted_model.add(tool_call("read", "r1", path="a.txt"), answer("done"))
    server = await open_server(_settings(scripted_model, "anthropic", "claude-sonnet-4-5"))
    session_id, outcome = await run_task(server, workspace, "read a")
    assert outcome.stop == "completed"
    events = await _accounting(server, session_id)
    kinds = [e.kind for e in events]
    assert kinds == ["usage", "rates", "cost", "usage", "cost"], kinds
    rates = events[1].body
    card = prices_for({}, "anthropic", "claude-sonnet-4-5", "https://api.anthropic.com")
    assert card is not None
    assert (rates.source, rates.key, rates.card) == ("card", "anthropic/claude-sonnet-4-5", card_version())
    assert (rates.input, rates.output, rates.cache_read) == (
        card.base.input,
        card.base.output,
        card.base.cache_read,
    )
    assert rates.tiers and rates.tiers[0]["above"] == card.tiers[0].above
    costs = [e.body.usd for e in events if e.kind == "cost"]
    expected = [
        (100 * card.base.input + 10 * card.base.output) / 1e6,
        (120 * card.base.input + 20 * card.base.output) / 1e6,
    ]
    assert all(math.isclose(c, e) for c, e in zip(costs, expected, strict=True)), costs
    assert "warning" not in kinds


async def test_settings_rates_override_the_card(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("hi"))
    rates = {"claude-sonnet-4-5": Rate(input=10.0, output=100.0)}
    server = await open_server(_settings(scripted_model, "anthropic", "claude-sonnet-4-5", rates=rates))
    session_id, _ = await run_task(server, workspace, "hello")
    rates_event, cost = [e.body for e in await _accounting(server, session_id) if e.kind in ("rates", "cost")]
    assert (rates_event.source, rates_event.key, rates_event.input, rates_event.card) == (
        "settings",
        "claude-sonnet-4-5",
        10.0,
        None,
    )
    assert math.isclose(cost.usd, (120 * 10.0 + 20 * 100.0) / 1e6)


async def test_an_unpriced_model_says_so_and_names_what_the_card_prices_for_its_provider(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("one"), answer("two"))
    server = await open_server(_settings(scripted_model, "anthropic", "claude-sonnet-9-imaginary"))
    session_id, _ = await run_task(server, workspace, "first")
    await run_task(server, workspace, "second", session_id=session_id)
    events = await _accounting(server, session_id)
    rates = [e for e in events if e.kind == "rates"]
    assert len(rates) == 2 and rates[0].task != rates[1].task, "told once per task"
    body = rates[0].body
    assert (body.model, body.source, body.key, body.input, body.tiers) == (
        "anthropic/claude-sonnet-9-imaginary",
        None,
        None,
        None,
        [],
    )
    assert [e.body.usd for e in events if e.kind == "cost"] == [None, None]
    (warning, _) = [e.body for e in events if e.kind == "warning"]
    assert warning.code == "unpriced-model"
    assert "the rate card prices these anthropic models" in warning.message
    assert "claude-sonnet-4-5" in warning.message and "`rates`" in warning.message


async def test_a_provider_the_card_does_not_know_is_unpriced_with_advice(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("hi"))
    server = await open_server(_settings(scripted_model, "local", "qwen3"))
    session_id, _ = await run_task(server, workspace, "hello")
    (warning,) = [e.body for e in await _accounting(server, session_id) if e.kind == "warning"]
    assert "the rate card has no provider at http://127.0.0.1:" in warning.message
    assert "add `local/qwen3` (or `qwen3`) under `rates`" in warning.message
