"""The app prepares the first answer's parts in worker threads (a new session shows once they are
ready), with the garbage collector paused while the server side is imported."""

from __future__ import annotations

import gc
import threading

import harnez.tui.app as app_module
import harnez.tui.widgets.markdown as markdown
import harnez.wires.clients as clients
from harnez.server.server import Server
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import AssistantBlock
from tests.tui.helpers import ANSWER_MARKDOWN, seed_session, wait_for
from tests.tui.test_session import ends, send


async def test_a_new_session_attaches_once_the_first_answer_is_prepared_off_the_loop(
    make_app, monkeypatch
) -> None:
    done: list[tuple[str, threading.Thread]] = []
    spares: list[list[AssistantBlock]] = []
    warm_markdown, warm_wires, attach = markdown.warm_up, clients.warm_up, SessionScreen.attach

    def markdown_warm_up() -> None:
        warm_markdown()
        done.append(("markdown", threading.current_thread()))

    def wires_warm_up(tls: bool = True) -> None:
        warm_wires(tls)
        done.append(("wires", threading.current_thread()))

    async def attached(screen: SessionScreen, *args: object) -> None:
        done.append(("attached", threading.current_thread()))
        spares.append([b for b in screen.query(AssistantBlock) if not b.display])
        await attach(screen, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(markdown, "warm_up", markdown_warm_up)
    monkeypatch.setattr(clients, "warm_up", wires_warm_up)
    monkeypatch.setattr(SessionScreen, "attach", attached)
    app = make_app()
    async with app.run_test(size=(100, 50)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        # A prompt sent as soon as the session shows no longer shares the interpreter with them.
        assert [name for name, _ in done] == ["markdown", "wires", "attached"]
        threads = [thread for name, thread in done if name != "attached"]
        assert threading.main_thread() not in threads
        assert not [w for w in app.workers if w.name == "warm-up"]
        # The answer's block was mounted (hidden) before the session showed: its first mount parses
        # the answer widgets' stylesheets, which the first prompt's words would otherwise wait for.
        (spare,) = spares[0]
        await send(pilot, "Say hello")
        await wait_for(pilot, lambda: ends(app), "task end")
        assert next(b.text for b in app.screen.query(AssistantBlock)) == "".join(ANSWER_MARKDOWN)
        assert spare.display and spare.text == "".join(ANSWER_MARKDOWN)  # the first words took it
        await pilot.press("ctrl+q")


async def test_the_collector_pauses_while_the_server_side_is_imported_and_resumes_once_open(
    make_app, monkeypatch
) -> None:
    collecting: list[bool] = []
    import_server_side = app_module._import_server_side

    def importing() -> None:
        collecting.append(gc.isenabled())
        import_server_side()

    monkeypatch.setattr(app_module, "_import_server_side", importing)
    app = make_app()
    async with app.run_test(size=(100, 50)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        assert collecting == [False]
        assert gc.isenabled()
        await pilot.press("ctrl+q")


async def test_a_warm_up_that_ends_after_the_app_closed_its_screens_fails_nothing(
    make_app, db_path, workspace, monkeypatch
) -> None:
    """A stored session shows first and warms up after, in a worker that can end after the app has
    closed its screens (seen once in CI: the worker looked at the current screen and there was none,
    ScreenStackError, and the app's exit raised it)."""
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(server, workspace, "an old conversation")
    finally:
        await server.close()
    app = make_app(resume=session_id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen), "the session")
    assert not app.screen_stack

    async def nothing(self: Server) -> None:
        return None

    monkeypatch.setattr(Server, "warm_up", nothing)
    monkeypatch.setattr(app_module, "_prepare_answers", lambda: None)
    await app._warm_up()  # the end of a warm-up that outlived the screens
