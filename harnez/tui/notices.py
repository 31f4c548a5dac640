"""Notifications kept whole: a long one is shown short in its toast, and Ctrl+N lists every one in full
(`NoticesScreen`); toasts kept above the prompt (`keep_toasts_above`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from harnez.text import printable

SHORT_LENGTH = 160
"""A notification longer than this (about three lines of a toast) is shown short."""
SHORT_CUT = 110
"""How much of a long notification its toast shows, cut at a word."""
MORE_HINT = "Ctrl+N: the whole text"
KEPT = 100
"""Notifications kept for the list (the oldest are dropped)."""
TOASTS_TOP = 1
"""The first row of a session screen's toasts: under the title bar (app.tcss)."""
SEVERITY_STYLE = {"information": "$text-success", "warning": "$text-warning", "error": "$text-error"}


@dataclass(frozen=True, slots=True)
class Notice:
    """One notification as it was raised, whatever its toast showed."""

    moment: float
    severity: SeverityLevel
    title: str
    text: str
    markup: bool


def short_text(text: str) -> str | None:
    """What the toast of a long notification shows (its first sentence, cut at a word at most
    SHORT_CUT characters in), or None when the text is short enough to show whole."""
    flat = " ".join(text.split())
    if len(flat) <= SHORT_LENGTH and text.count("\n") < 3:
        return None
    end = flat.find(". ")
    first = flat[: end + 1] if 0 < end < SHORT_CUT else flat[:SHORT_CUT]
    if len(first) == SHORT_CUT:
        cut = first.rfind(" ")
        first = (first[:cut] if cut > SHORT_CUT // 2 else first).rstrip(",;:") + "…"
    return first


class NoticeKeepingApp(App[None]):
    """An app whose notifications are kept: long ones shown short, all listed in full by Ctrl+N."""

    BINDINGS = [Binding("ctrl+n", "show_notices", "Notifications", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.notices: list[Notice] = []
        """Every notification of this run, oldest first (at most KEPT)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Show a notification; a long one is cut to its first sentence, the whole text kept for Ctrl+N."""
        self.post_notice(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def post_notice(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> Notification:
        """`notify`, returning the toast's notification, for a notice that `withdraw` may take down
        before its time once what it says is no longer true."""
        self.notices = [*self.notices[-(KEPT - 1) :], Notice(time.time(), severity, title, message, markup)]
        short = short_text(message)
        if short is not None:
            # The short form is plain text: a cut must not leave half of a markup tag.
            message, markup = f"{short}\n{MORE_HINT}", False
        shown = Notification(
            message, title, severity, self.NOTIFICATION_TIMEOUT if timeout is None else timeout, markup=markup
        )
        self.post_message(Notify(shown))
        return shown

    def withdraw(self, notification: Notification) -> None:
        """Take a notification's toast down (Ctrl+N still lists it); nothing when it is gone already."""
        if notification in self._notifications:
            self._unnotify(notification)

    def action_show_notices(self) -> None:
        """List this run's notifications in full, newest first."""
        if not isinstance(self.screen, NoticesScreen):
            self.push_screen(NoticesScreen(list(reversed(self.notices))))


def keep_toasts_above(screen: Screen, *below: Widget, newest_always: bool = True) -> None:
    """Keep the screen's toasts (docked at its top, under the title bar: app.tcss) above the first of
    `below` shown (the completion menu, the prompt): the stack may reach down to it and no further,
    and holds the newest toasts that fit there (the newest always, its start in view when even it is
    taller, unless `newest_always` is False: then only what fits whole). The room is measured after
    every layout, as the prompt grows with its text and the screen with the terminal; the stack
    changes only when the room or the toasts did.

    (Textual's stack scrolls to its newest toast when it overflows, but the stack is an invisible
    widget that is never sized, so it never scrolled: the newest would have been cut off.)"""
    room: list[int] = []

    def fit(_: Screen) -> None:
        rack = next(iter(screen.query_children("ToastRack")), None)  # none when notifications are off
        tops = [widget.region.y for widget in below if widget.region.height]
        if rack is None or not tops:
            return
        height = max(0, min(tops) - TOASTS_TOP)
        if room != [height]:  # set before any toast comes: none is ever drawn over the prompt
            room[:] = [height]
            rack.styles.max_height = height
        if rack.children:
            _show_newest(list(rack.children), height, newest_always)

    screen.screen_layout_refresh_signal.subscribe(screen, fit, immediate=True)


def _show_newest(holders: list[Widget], room: int, newest_always: bool) -> None:
    """Show the newest of the toasts (each in its holder, oldest first) that fit in `room` rows; hide
    the older ones (they still expire on time, and Ctrl+N lists them)."""
    for index, holder in enumerate(reversed(holders)):
        toast = holder.children[0] if holder.children else holder
        room -= toast.outer_size.height + toast.styles.margin.top
        shown = (index == 0 and newest_always) or room >= 0
        if holder.display != shown:
            holder.display = shown


def notice_content(notice: Notice) -> Content:
    """One notification: its time, severity and title on a line, then the whole text."""
    head = Content.assemble(
        (time.strftime("%H:%M:%S", time.localtime(notice.moment)), "dim"),
        "  ",
        (notice.severity, f"bold {SEVERITY_STYLE.get(notice.severity, '')}"),
        *(("  ", (printable(notice.title, one_line=True), "bold")) if notice.title else ()),
    )
    body = Content.from_markup(notice.text) if notice.markup else Content(printable(notice.text))
    return Content("\n").join([head, body])


class NoticesScreen(ModalScreen[None]):
    """Lists notifications whole, scrollable; Esc closes."""

    DEFAULT_CSS = """
    NoticesScreen { align: center middle; }
    NoticesScreen > VerticalScroll { width: 90%; max-width: 100; height: auto; max-height: 80%;
                                     border: thick $primary; background: $surface; padding: 0 1; }
    NoticesScreen .notice { width: 1fr; margin-bottom: 1; }
    NoticesScreen #notices-keys { width: 1fr; color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q,ctrl+n", "dismiss", "Close")]

    def __init__(self, notices: list[Notice]) -> None:
        super().__init__()
        self.notices = notices
        """What to list, newest first."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            if not self.notices:
                yield Static("No notifications yet.", classes="notice")
            for notice in self.notices:
                yield Static(notice_content(notice), classes="notice")
            yield Static("Up / Down scroll · Esc close", id="notices-keys")
