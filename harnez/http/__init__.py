"""The Unified Harness Protocol server (`harnez serve`): the only package that imports the web framework.

It talks to `harnez.server` only (`Server` and the `HarnessHost` built on it); docs/uhp.md says what
maps to what.
"""

VERSIONS = ("2026-08-11",)
"""The UHP versions served; the first is the default."""
DEFAULT_VERSION = VERSIONS[0]
