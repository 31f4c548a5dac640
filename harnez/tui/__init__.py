"""The Textual front end: `run_tui` starts it (imported lazily so `import harnez.tui` stays cheap)."""

from __future__ import annotations

from typing import Any

__all__ = ["run_tui"]


def run_tui(*args: Any, **kwargs: Any) -> int:
    """Run the TUI; see `harnez.tui.app.run_tui`."""
    from harnez.tui.app import run_tui as run

    return run(*args, **kwargs)
