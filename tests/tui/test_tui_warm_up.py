"""Once the server is open, the app prepares the first answer's parts in worker threads."""

from __future__ import annotations

import threading

from textual.worker import WorkerState

import harnez.tui.widgets.markdown as markdown
import harnez.wires.clients as clients
from harnez.tui.widgets.blocks import AssistantBlock
from tests.tui.helpers import ANSWER_MARKDOWN, wait_for
from tests.tui.test_session import ends, send


async def test_the_app_warms_up_off_the_event_loop_once_the_server_is_open(make_app, monkeypatch) -> None:
    threads: dict[str, threading.Thread] = {}
    warm_markdown, warm_wires = markdown.warm_up, clients.warm_up

    def markdown_warm_up() -> None:
        threads["markdown"] = threading.current_thread()
        warm_markdown()

    def wires_warm_up() -> None:
        threads["wires"] = threading.current_thread()
        warm_wires()

    monkeypatch.setattr(markdown, "warm_up", markdown_warm_up)
    monkeypatch.setattr(clients, "warm_up", wires_warm_up)
    app = make_app()
    async with app.run_test(size=(100, 50)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        warm_up = next(w for w in app.workers if w.name == "warm-up")
        await wait_for(pilot, lambda: warm_up.state == WorkerState.SUCCESS, "the warm-up finished")
        assert set(threads) == {"markdown", "wires"}
        assert threading.main_thread() not in threads.values()
        await send(pilot, "Say hello")
        await wait_for(pilot, lambda: ends(app), "task end")
        assert next(b.text for b in app.screen.query(AssistantBlock)) == "".join(ANSWER_MARKDOWN)
        await pilot.press("ctrl+q")
