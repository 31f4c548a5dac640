"""Upgrade advice follows the way Harnez was installed: a checkout, a folder, a repository, an index."""

from __future__ import annotations

import sys
from pathlib import Path

from harnez.install import Installation, installation, upgrade_advice

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_tests_run_from_an_install_of_this_checkout_and_the_advice_says_so() -> None:
    found = installation()  # `pip install -e '.[test]'` (README), or `pip install '.[test]'` in a clone
    assert found.kind in ("editable", "folder") and found.location == str(CHECKOUT)
    assert f"git -C {CHECKOUT} pull" in upgrade_advice(
        found
    ) and "pip install -U harnez" not in upgrade_advice(found)


def test_each_kind_of_installation_gets_its_own_way_to_upgrade() -> None:
    assert "pip install -e /src/harnez" in upgrade_advice(Installation("editable", "/src/harnez"))
    folder = upgrade_advice(Installation("folder", "/src/harnez"))
    assert "git -C /src/harnez pull" in folder and f"{sys.executable} -m pip install /src/harnez" in folder
    assert "pip install -U git+https://example.org/harnez.git" in upgrade_advice(
        Installation("vcs", "git+https://example.org/harnez.git")
    )
    assert "https://example.org/harnez-0.1.0-py3-none-any.whl" in upgrade_advice(
        Installation("archive", "https://example.org/harnez-0.1.0-py3-none-any.whl")
    )
    assert f"{sys.executable} -m pip install -U harnez" in upgrade_advice(
        Installation("index", installer="pip")
    )
    assert "uv pip install -U" in upgrade_advice(Installation("index", installer="uv"))
    assert upgrade_advice(Installation("unknown")) == "update the source tree it runs from"
