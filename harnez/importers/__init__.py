"""Importers: read Claude Code, Codex, OpenCode and pi sessions into one normalized session model.

`Readers` holds one reader per harness; each can `locate(home)` its harness's sessions, `summarize`
one in constant memory and `read` it at full fidelity (docs/importers.md). The readers and the model
import nothing of the store; `harnez.importers.importer` writes sessions into a Harnez database.
"""

from __future__ import annotations

from harnez.importers.base import Reader, SourceRef
from harnez.importers.normalized import HARNESSES, Session, Summary
from harnez.importers.sources import Readers, check_harness, detect

__all__ = ["HARNESSES", "Reader", "Readers", "Session", "SourceRef", "Summary", "check_harness", "detect"]
