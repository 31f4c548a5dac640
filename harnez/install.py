"""How this Harnez was installed, and how to upgrade it that way (for messages that advise an upgrade)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

DISTRIBUTION = "harnez"


@dataclass(frozen=True, slots=True)
class Installation:
    """Where this Harnez came from, as pip recorded it (PEP 610's direct_url.json)."""

    kind: str
    """`editable` (a checkout installed with -e), `folder` (a checkout installed with `pip install .`),
    `vcs` (pip install git+URL), `archive` (a wheel or sdist file or URL), `index` (a package index),
    or `unknown` (not installed as a package: run from a source tree)."""
    location: str = ""
    """The checkout's folder, or the URL installed from."""
    installer: str = ""
    """The tool that recorded the installation (`pip`, `uv`, …), when it said."""


def installation() -> Installation:
    """How the running Harnez was installed."""
    from importlib import metadata  # ~15 ms (email, zipfile): imported only when an upgrade is advised

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return Installation("unknown")
    installer = (dist.read_text("INSTALLER") or "").strip()
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except json.JSONDecodeError:
        direct = None
    if not isinstance(direct, dict) or not isinstance(direct.get("url"), str):
        return Installation("index", installer=installer)
    url = direct["url"]
    if "vcs_info" in direct:
        return Installation("vcs", f"{direct['vcs_info'].get('vcs', 'git')}+{url}", installer)
    if "dir_info" in direct:
        folder = unquote(urlparse(url).path) if url.startswith("file:") else url
        editable = bool((direct.get("dir_info") or {}).get("editable"))
        return Installation("editable" if editable else "folder", folder, installer)
    return Installation("archive", url, installer)


def upgrade_advice(found: Installation | None = None) -> str:
    """One sentence saying how to upgrade Harnez the way it was installed."""
    found = found or installation()
    python = sys.executable
    if found.kind == "editable":
        return (
            f"update the checkout it runs from (`git -C {found.location} pull`; then "
            f"`{python} -m pip install -e {found.location}` if its dependencies changed)"
        )
    if found.kind == "folder":
        return (
            f"update the checkout it was installed from (`git -C {found.location} pull`) and install it "
            f"again (`{python} -m pip install {found.location}`)"
        )
    if found.kind == "vcs":
        return f"install it again from its repository (`{python} -m pip install -U {found.location}`)"
    if found.kind == "archive":
        return f"install a newer release than the one installed from {found.location}"
    if found.kind == "index":
        tools = sys.prefix.replace("\\", "/")
        if "/pipx/venvs/" in tools:
            return f"upgrade it with pipx (`pipx upgrade {DISTRIBUTION}`)"
        if "/uv/tools/" in tools:
            return f"upgrade it with uv (`uv tool upgrade {DISTRIBUTION}`)"
        if found.installer == "uv":
            return f"upgrade the package (`uv pip install -U --python {python} {DISTRIBUTION}`)"
        return f"upgrade the package (`{python} -m pip install -U {DISTRIBUTION}`)"
    return "update the source tree it runs from"
