"""The headless part's events in the transcript: the prices in use (once while they stay the same), and a
shell call refused for an undeclared program."""

from __future__ import annotations

from harnez import events as ev
from harnez.events import Event
from harnez.server.server import Server
from harnez.tui.widgets.blocks import NoticeBlock, TaskEndBlock
from tests.tui.helpers import seed_session, wait_for

CARD = ev.Rates(
    model="anthropic/claude-sonnet-4-5",
    source="card",
    key="anthropic/claude-sonnet-4-5",
    input=3.0,
    output=15.0,
    cache_read=0.3,
    tiers=[{"above": 200000, "input": 6.0, "output": 22.5}],
    card="genai-prices 0.2.3",
)


STORED = [
    CARD,
    ev.ProgramRefused(call_id="c1", program="rm", declared=["git", "pytest"], reason="…"),
    ev.ProgramRefused(call_id="c2", program=None, declared=["git"], reason="…"),
    CARD,  # the same prices again: not shown again
    ev.Rates(model="local/unpriced"),  # the status line says "unpriced"
    ev.Finished(stop="completed", turns=1, error=None),
]


async def test_prices_show_once_and_a_refused_program_shows_as_a_warning(
    make_app, db_path, workspace
) -> None:
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(server, workspace, "build")
        for body in STORED:
            await server.append(session_id, Event(body))
    finally:
        await server.close()
    app = make_app(resume=session_id)
    async with app.run_test() as pilot:
        await wait_for(
            pilot, lambda: app.ready and len(app.screen.query(TaskEndBlock)) == 2, "the stored tasks"
        )
        notices = [(str(block.render()), block.classes) for block in app.screen.query(NoticeBlock)]
    assert [text for text, _ in notices] == [
        "Prices for anthropic/claude-sonnet-4-5 (card genai-prices 0.2.3): $3 in · $15 out · $0.3 cached "
        "per million tokens; more above 200,000 tokens.",
        "⛔ Shell call not run: rm is not a declared program (git, pytest).",
        "⛔ Shell call not run: its command line could not be checked against the declared programs (git).",
    ]
    assert "-info" in notices[0][1] and "-warning" in notices[1][1] and "-warning" in notices[2][1]
