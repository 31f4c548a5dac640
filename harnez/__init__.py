"""Harnez: a coding agent for the terminal, built around an in-process server and a SQLite store."""

import sys

__version__ = "0.1.0"

# httpx's __init__ imports its command-line client (httpx._main: click, rich.progress, rich.syntax,
# pygments' lexers) whenever click is installed, and offers a stub `httpx.main` when that import
# fails. Harnez never runs httpx's command line, so a None entry makes that import fail at once:
# ~25 ms less before a process's first answer (docs/performance.md, "Fewer imports before the first
# answer"). Here, in the package's first module, it precedes every import of httpx in harnez
# (the wires, the MCP client, the UHP server): kept in harnez.wires, it came after the MCP client's.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "not importable"
