"""The line above an imported session's transcript: the harness it came from, and the session it was
forked from, resumed from or ran under as a sub-agent (docs/importers.md, "Links between sessions"),
which a click or `/parent` opens; above a Harnez sub-agent's session, the session that delegated to
it (docs/agents.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message
from textual.widgets import Static

from harnez.text import printable

if TYPE_CHECKING:
    from harnez.server.server import Server

HARNESS_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "opencode": "OpenCode", "pi": "pi"}
"""How each harness is named to a person (the stored origin is its id)."""
TITLE_SHOWN = 48
"""Characters of the linked session's title shown on the line (a longer one ends with "…")."""


def harness_name(harness: str | None) -> str:
    """`Claude Code` for `claude-code`; an id Harnez does not know as it is; Harnez for None (its own)."""
    return "Harnez" if harness is None else HARNESS_NAMES.get(harness, harness)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an imported session, or a Harnez sub-agent's, came from, as the line shows it."""

    harness: str | None
    """The harness it was imported from; None for a session a Harnez delegate call made."""
    relation: str | None
    """`forked from`, `resumed from`, `sub-agent of`, `review sub-agent of`; None when it names no session."""
    parent_original_id: str | None
    """The linked session's id in its harness."""
    parent: str | None = None
    """The linked session's Harnez id: None when it was not imported."""
    parent_title: str = ""
    agent: str | None = None
    """The sub-agent that ran a Harnez child session (its delegate call's `agent`)."""


def relation_of(origin: dict) -> str | None:
    """How an imported session relates to the session its harness named (None: it names none). A Claude
    Code file that names an earlier session without being a sub-agent resumed it; elsewhere it is a fork."""
    if not origin["parent_original_id"]:
        return None
    if origin["agent_id"]:
        return "review sub-agent of" if origin["agent_id"] == "review" else "sub-agent of"
    return "resumed from" if origin["harness"] == "claude-code" else "forked from"


async def read_origin(server: Server, session_id: str) -> Origin | None:
    """The origin of a session, with the linked session's title when it is stored: an imported one's,
    or the parent of a Harnez sub-agent's child session (its delegation link); None for any other."""
    found = await server.session_origin(session_id)
    if found is None:
        return await _delegated_from(server, session_id)
    parent, title = found["parent_session"], ""
    if parent:
        title = (await server.get_session(parent)).display_title
    return Origin(found["harness"], relation_of(found), found["parent_original_id"], parent, title)


async def _delegated_from(server: Server, session_id: str) -> Origin | None:
    link = await server.delegation_of(session_id)
    if link is None or link.parent is None:
        return None
    title = (await server.get_session(link.parent)).display_title
    return Origin(None, "sub-agent of", None, link.parent, title, agent=link.agent)


def origin_text(origin: Origin) -> str:
    """`Imported from Codex · forked from «Fix the parser» (0a1b2c3d) · /parent opens it`; for a Harnez
    sub-agent's session `Sub-agent reviewer of «Fix the parser» (0a1b2c3d) · /parent opens it`."""
    if origin.harness is None:
        agent = printable(origin.agent or "", one_line=True)
        return f"Sub-agent {agent} of {_linked(origin)}" if agent else f"Sub-agent of {_linked(origin)}"
    parts = [f"Imported from {harness_name(origin.harness)}"]
    if origin.relation and origin.parent:
        parts.append(f"{origin.relation} {_linked(origin)}")
    elif origin.relation:
        original = printable(origin.parent_original_id or "", one_line=True)
        parts.append(f"{origin.relation} {harness_name(origin.harness)} session {original} (not imported)")
    return " · ".join(parts)


def _linked(origin: Origin) -> str:
    """`«Fix the parser» (0a1b2c3d) · /parent opens it`: the stored session linked."""
    title = printable(origin.parent_title, one_line=True)
    if len(title) > TITLE_SHOWN:
        title = title[: TITLE_SHOWN - 1].rstrip() + "…"
    return f"«{title}» ({(origin.parent or '')[:8]}) · /parent opens it"


class OriginLine(Static):
    """One quiet line at the top of the transcript; hidden for Harnez's own sessions but a sub-agent's.
    A click on it asks to open the linked session."""

    DEFAULT_CSS = """
    OriginLine { height: auto; color: $text-muted; padding: 0 1; display: none; }
    OriginLine.-shown { display: block; }
    """

    class Opened(Message):
        """The person asked to see the session this one came from."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", markup=False, id=id)
        self.origin: Origin | None = None

    def show(self, origin: Origin | None) -> None:
        """Show where the session came from, or nothing (Harnez's own session)."""
        self.origin = origin
        self.update(origin_text(origin) if origin else "")
        self.set_class(origin is not None, "-shown")

    def on_click(self) -> None:
        if self.origin is not None and self.origin.parent:
            self.post_message(self.Opened(self.origin.parent))
