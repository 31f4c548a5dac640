"""The slash commands in Textual's command palette (loaded when the palette first opens)."""

from __future__ import annotations

from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from harnez.tui.commands import COMMANDS, SlashCommand


@runtime_checkable
class CommandTarget(Protocol):
    """A screen that runs slash commands (the session screen)."""

    async def run_command(self, command: SlashCommand, argument: str) -> bool: ...


class SlashCommandProvider(Provider):
    """Offers the slash commands in Textual's command palette."""

    def _session_screen(self) -> CommandTarget | None:
        return self.screen if isinstance(self.screen, CommandTarget) else None

    async def discover(self) -> Hits:
        screen = self._session_screen()
        if screen is None:
            return
        for command in COMMANDS:
            yield DiscoveryHit(command.usage, partial(screen.run_command, command, ""), help=command.help)

    async def search(self, query: str) -> Hits:
        screen = self._session_screen()
        if screen is None:
            return
        matcher = self.matcher(query)
        for command in COMMANDS:
            score = matcher.match(command.usage)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(command.usage),
                    partial(screen.run_command, command, ""),
                    help=command.help,
                )
